#!/bin/sh
# CLI checks against hostile files and paths (issue 23): hostile_io_cli.sh CASE TESSEL.
# Cases: fifo (a FIFO in a cache entry: verify and info report corruption, never block),
# ro_cache (a read-only cache: clear and verify --remove report no removal that did not happen),
# dump_unwritable (dump into a path that cannot exist fails, exit 1), report_self (report refuses
# to write its SVG over its own input or the tuning database, and leaves them intact).
# Every tessel call runs under `timeout 20`: a regression that blocks fails instead of hanging.
# Runs against $TESSEL_CACHE_DIR (a scratch directory the test names). Exit: 0 pass, 1 fail, 77 skipped.
. "$(dirname "$0")/case_setup.sh"
fail() { echo "FAIL: $*"; echo "--- last output:"; cat "$out" 2>/dev/null; exit 1; }
# run EXPECTED_STATUS ARGS...: tessel under a time limit, output in $out (and echoed).
run() {
  want=$1
  shift
  timeout 20 "$tessel" "$@" >"$out" 2>&1
  got=$?
  cat "$out"
  [ "$got" -ne 124 ] || fail "tessel $* did not finish in 20 s (blocked?)"
  [ "$got" -eq "$want" ] || fail "tessel $* exited $got, expected $want"
}
expect() { grep -Eq "$1" "$out" || fail "output lacks /$1/"; }
reject() { ! grep -Eq "$1" "$out" || fail "output has /$1/, which it must not"; }
warm_one() {
  run 0 cache warm add -D BLOCK=256 --arch sm_80 --no-cubin
  key=$(sed -n 's/^stored \([0-9a-f]\{32\}\) .*/\1/p' "$out")
  [ ${#key} -eq 32 ] || fail "cache warm named no key"
  entry=$dir/$(echo "$key" | cut -c1-2)/$key
  [ -d "$entry" ] || fail "no entry directory $entry after cache warm"
}

case $case_name in
  fifo)
    warm_one
    rm "$entry/kernel.ptx" && mkfifo "$entry/kernel.ptx" || fail "cannot make a FIFO"
    run 1 cache verify
    expect "^$key  add +CORRUPT: kernel.ptx missing"
    expect "1 entry checked: 0 ok, 1 corrupt"
    run 0 cache info "$key"
    expect "^status: +corrupt: kernel.ptx missing"
    run 0 cache list
    expect "^1 entry, "
    run 1 cache verify --remove
    expect "CORRUPT: kernel.ptx missing \(removed\)"
    [ ! -e "$entry" ] || fail "verify --remove left the entry"
    ;;
  ro_cache)
    if [ "$(id -u)" -eq 0 ]; then
      echo "SKIP: running as root, which ignores directory permissions"
      exit 77
    fi
    warm_one
    printf 'garbage' >>"$entry/kernel.tir"
    shard=$(dirname "$entry")
    chmod a-w "$shard" "$dir"
    run 1 cache verify --remove
    expect "CORRUPT: kernel.tir checksum mismatch \(could not be removed\)"
    reject "\(removed\)"
    run 1 cache clear
    expect "but 1 could not be removed from"
    reject "^removed 1 entry"
    chmod u+w "$shard" "$dir"
    [ -f "$entry/meta.json" ] || fail "the entry was gutted in a read-only cache"
    run 0 cache clear
    expect "^removed 1 entry"
    ;;
  dump_unwritable)
    run 1 dump add /proc/nonexistent/x
    expect "^tessel: error: dump: cannot create /proc/nonexistent/x/add-[0-9a-f]{32}: "
    reject "wrote"
    # One line of error (the no-GPU notice, printed on machines without libcuda, aside).
    [ "$(grep -vc 'CUDA driver unavailable' "$out")" -eq 1 ] || fail "the error is not one line"
    run 0 dump add "$dir/dump"
    expect "^wrote $dir/dump/add-"
    [ -s "$(ls -d "$dir"/dump/add-*)/meta.json" ] || fail "dump wrote no meta.json"
    ;;
  report_self)
    src=$3
    cp "$src" "$dir/results.json"
    run 1 report "$dir/results.json" --from "$dir/results.json"
    expect "is an input"
    cmp -s "$src" "$dir/results.json" || fail "report overwrote its --from input"
    # The same file by another name, and the tuning database (which must not be replaced either).
    run 1 report "$dir/./results.json" --from "$dir/results.json"
    expect "is an input"
    printf '{}\n' >"$dir/tuning.json"
    run 1 report "$dir/tuning.json" --from "$dir/results.json" --db "$dir/tuning.json"
    expect "is an input"
    [ "$(cat "$dir/tuning.json")" = "{}" ] || fail "report overwrote the tuning database"
    run 0 report "$dir/out.svg" --from "$dir/results.json"
    grep -q "<svg" "$dir/out.svg" || fail "no SVG written"
    ls "$dir" | grep -q '\.tmp' && fail "a temporary was left behind"
    ;;
  *) fail "unknown case $case_name" ;;
esac
echo "PASS: $case_name"
