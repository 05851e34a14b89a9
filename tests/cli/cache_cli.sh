#!/bin/sh
# CLI checks of `tessel cache ...` and `tessel compile --emit cubin`: cache_cli.sh CASE TESSEL.
# Runs against $TESSEL_CACHE_DIR (a scratch directory the test names), emptied first.
# Exit status: 0 pass, 1 fail, 77 skipped (no ptxas; a failure under TESSEL_TEST_REQUIRE_PTXAS=1).
set -u
case_name=$1
tessel=$2
dir=${TESSEL_CACHE_DIR:?the test must set TESSEL_CACHE_DIR}
rm -rf "$dir"
mkdir -p "$dir"
out=$dir.out
fail() { echo "FAIL: $*"; echo "--- last output:"; cat "$out" 2>/dev/null; exit 1; }
# run EXPECTED_STATUS ARGS...: runs tessel, output in $out (and echoed), checks the exit status.
run() {
  want=$1
  shift
  "$tessel" "$@" >"$out" 2>&1
  got=$?
  cat "$out"
  [ "$got" -eq "$want" ] || fail "tessel $* exited $got, expected $want"
}
expect() { grep -Eq "$1" "$out" || fail "output lacks /$1/"; }
first_key() { "$tessel" cache list --json 2>/dev/null | grep -o '"key": "[0-9a-f]*"' | head -n 1 | cut -d'"' -f4; }

case $case_name in
  list)
    run 0 cache list
    expect "^0 entries"
    run 0 cache warm add -D BLOCK=256 --arch sm_80 --no-cubin
    expect "^stored [0-9a-f]{32} \(add for sm_80, no cubin\)"
    run 0 cache warm add -D BLOCK=256 --arch sm_80 --no-cubin
    expect "^already cached"
    run 0 cache warm chain5 --num-warps 8 --no-cubin
    run 0 cache list
    expect "^[0-9a-f]{32}  add +sm_80 +[0-9.]+ KiB +0 +[0-9]+s"
    expect "^[0-9a-f]{32}  chain5 +sm_90 "
    expect "^2 entries, "
    run 0 cache list --json
    expect '"kernel": "chain5"'
    expect '"total_bytes": [1-9]'
    ;;
  info)
    run 0 cache warm add -D BLOCK=128 --arch sm_86 --aligned --no-cubin
    key=$(first_key)
    [ ${#key} -eq 32 ] || fail "no key listed"
    run 0 cache info "$(echo "$key" | cut -c1-6)"
    expect "^key: +$key"
    expect "^status: +ok"
    expect "^kernel: +add\(x: ptr<f32>, y: ptr<f32>, out: ptr<f32>, n: i32\)"
    expect "^specialisation: +x:d16 y:d16 out:d16 n:d16"
    expect "^target: +sm_86, PTX ISA 8.0"
    expect "kernel.ptx"
    # The entry records the build that wrote it: this tessel's build id.
    build=$("$tessel" --version | sed -n 's/^tessel [0-9.]* (build \([0-9a-f]\{16\}\))$/\1/p')
    [ ${#build} -eq 16 ] || fail "tessel --version shows no build id"
    expect "^versions: +tessel [0-9.]+ \(build $build\), LLVM "
    run 0 cache info "$key" --json
    expect "\"key\": \"$key\""
    expect "\"tessel_build\": \"$build\""
    expect '"status": "ok"'
    run 1 cache info ffffffffffff
    expect "no cache entry matches 'ffffffffffff'"
    ;;
  verify)
    run 0 cache warm add --no-cubin
    run 0 cache warm chain5 --no-cubin
    run 0 cache verify
    expect "2 entries checked: 2 ok, 0 corrupt"
    ptx=$(ls "$dir"/*/*/kernel.ptx | head -n 1)
    head -c 100 "$ptx" >"$ptx.cut" && mv "$ptx.cut" "$ptx"
    run 1 cache verify
    expect "CORRUPT: kernel.ptx truncated \(100 of [0-9]+ bytes\)"
    expect "1 ok, 1 corrupt"
    run 1 cache verify --json
    expect '"corrupt": 1'
    run 1 cache verify --remove
    expect "\(removed\)"
    run 0 cache verify
    expect "1 entry checked: 1 ok, 0 corrupt"
    ;;
  clear)
    run 0 cache warm add --no-cubin
    run 0 cache warm add -D BLOCK=64 --no-cubin
    run 0 cache warm chain5 --no-cubin
    run 0 cache clear
    expect "^removed 3 entries"
    run 0 cache list
    expect "^0 entries"
    [ -z "$(ls "$dir" | grep -v '^tmp$')" ] || fail "entries left in $dir"
    ;;
  cubin)
    run 1 compile add --emit cubin
    expect "needs -o FILE"
    # tessel's own finder says which ptxas it would run (rt::find_ptxas, one search order).
    ptxas=$("$tessel" --version | sed -n 's/^ptxas: //p')
    case $ptxas in
      "not found"* | "")
        [ "${TESSEL_TEST_REQUIRE_PTXAS:-0}" = 0 ] || fail "TESSEL_TEST_REQUIRE_PTXAS=1 but ptxas ${ptxas:-unreported}"
        echo "SKIPPED: ptxas ${ptxas:-unreported}"; exit 77 ;;
    esac
    run 0 compile add --emit cubin --arch sm_80 -o "$dir/add.cubin"
    expect "sm_80 cubin by (ptxas|driver)"
    [ "$(head -c 4 "$dir/add.cubin" | od -An -c | tr -d ' ')" = "177ELF" ] || fail "not an ELF cubin"
    run 0 cache warm add --arch sm_80
    expect "cubin by (ptxas|driver)"
    run 0 cache info "$(first_key)"
    expect "^cubin: +sm_80 by (ptxas|driver)"
    expect "^registers: +[1-9]"
    ;;
  *)
    fail "unknown case $case_name"
    ;;
esac
rm -rf "$dir" "$out"
echo "PASS: $case_name"
