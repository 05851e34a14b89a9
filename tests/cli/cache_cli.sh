#!/bin/sh
# CLI checks of `tessel cache ...` and `tessel compile --emit cubin`: cache_cli.sh CASE TESSEL.
# Runs against $TESSEL_CACHE_DIR (a scratch directory the test names), emptied first.
# Exit status: 0 pass, 1 fail, 77 skipped (no ptxas, a failure under TESSEL_TEST_REQUIRE_PTXAS=1;
# or no way to make a directory read-only for this user).
. "$(dirname "$0")/case_setup.sh"
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
reject() { ! grep -Eq "$1" "$out" || fail "output has /$1/, which it must not"; }
one_line() { [ "$(grep -vc 'CUDA driver unavailable' "$out")" -eq 1 ] || fail "the error is not one line"; }
# warm_add: `cache warm add` for sm_80 without a cubin; sets key and entry (its directory).
warm_add() {
  run 0 cache warm add -D BLOCK=256 --arch sm_80 --no-cubin "$@"
  key=$(sed -n 's/^[a-z ]* \([0-9a-f]\{32\}\) .*/\1/p' "$out" | head -n 1)
  [ ${#key} -eq 32 ] || fail "cache warm named no key"
  entry=$dir/$(echo "$key" | cut -c1-2)/$key
  [ -d "$entry" ] || fail "no entry directory $entry after cache warm"
}
# read_only DIR...: makes the directories unwritable for tessel: chmod a-w, or as root (which ignores
# permissions) the immutable attribute; skips the case (77) when neither holds. writable undoes it.
read_only() {
  ro_dirs="$*"
  trap writable EXIT
  if [ "$(id -u)" -eq 0 ]; then chattr +i "$@" 2>/dev/null; else chmod a-w "$@"; fi
  if mkdir "$1/probe" 2>/dev/null; then
    rmdir "$1/probe"
    writable
    echo "SKIPPED: neither chmod a-w nor chattr +i makes $1 read-only here"
    exit 77
  fi
}
writable() {
  # shellcheck disable=SC2086
  if [ "$(id -u)" -eq 0 ]; then chattr -i $ro_dirs 2>/dev/null; else chmod u+w $ro_dirs; fi
  trap - EXIT
}
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
  foreign)
    # clear removes tessel's entries and temporaries and nothing of the user's (issue 23 #1): names
    # with a number between dots, old files in tmp/, empty two-letter folders, folders with files.
    run 0 cache warm add --no-cubin
    run 0 cache warm chain5 --no-cubin
    key=$(first_key)
    # An empty folder named like a shard (two hex digits) that no stored entry's key starts with:
    # keys change with tessel's build id, and a shard holding an entry is tessel's to remove.
    shard=$(for s in ab cd ef 01 23; do [ -e "$dir/$s" ] || { echo "$s"; break; }; done)
    mkdir -p "$dir/tmp/mine" "$dir/photos" "$dir/db/backup" "$dir/$shard" "$dir/zz"
    user="thesis.2024.tex tmp/thesis.2024.tex tmp/notes.v2.txt tmp/report.pdf tmp/mine/a.1.b photos/cat.jpg
          db/notes.txt db/backup/x.999999.y"
    for f in $user; do echo "the user's $f" >"$dir/$f"; done
    touch -d '3 hours ago' "$dir/tmp/report.pdf" "$dir/tmp/notes.v2.txt" "$dir/tmp/mine" "$dir/$shard" "$dir/zz"
    dead=$dir/tmp/$key.tessel-tmp.999999999.00000000000000aa  # a temporary of a writer that is gone
    mkdir "$dead" && echo half >"$dead/kernel.ptx"
    run 0 cache clear
    # thesis, photos, zz; db's two; tmp's thesis, notes, report, mine ($shard is a shard's name).
    expect "^removed 2 entries \([0-9.]+ KiB\) from $dir; left 9 files or folders that are not tessel's$"
    for f in $user; do
      [ "$(cat "$dir/$f" 2>/dev/null)" = "the user's $f" ] || fail "cache clear removed or changed the user's $f"
    done
    [ -d "$dir/$shard" ] && [ -d "$dir/zz" ] || fail "cache clear removed the user's empty folders"
    [ ! -e "$dead" ] || fail "cache clear left a dead writer's temporary"
    run 0 cache list
    expect "^0 entries"
    run 0 cache clear --json
    expect '"foreign_left": 9'
    expect '"removed": 0'
    ;;
  dirs)
    # A --dir that does not exist is a mistake (exit 1, one line); the environment's directory may
    # not exist yet (an empty cache); warm makes the directory it is given.
    for sub in list verify clear "info abc"; do
      # shellcheck disable=SC2086
      run 1 cache --dir "$dir/nonexistent" $sub
      expect "^tessel: error: no cache directory $dir/nonexistent \(--dir must name an existing directory\)$"
      one_line
    done
    : >"$dir/afile"
    run 1 cache --dir "$dir/afile" list
    expect "^tessel: error: cache directory $dir/afile is not a directory$"
    TESSEL_CACHE_DIR=$dir/notyet
    run 0 cache list
    expect "^0 entries, 0 B in $dir/notyet$"
    TESSEL_CACHE_DIR=$dir
    [ ! -e "$dir/notyet" ] || fail "cache list made the directory"
    run 0 cache --dir "$dir/new" warm add --no-cubin
    expect "^stored [0-9a-f]{32} "
    run 0 cache --dir "$dir/new" list
    expect "^1 entry, "
    ;;
  damaged)
    # warm over a damaged entry rebuilds it and says so (issue 23 #15), instead of "already cached".
    warm_add
    head -c 100 "$entry/kernel.ptx" >"$entry/cut" && mv "$entry/cut" "$entry/kernel.ptx"
    run 0 cache warm add -D BLOCK=256 --arch sm_80 --no-cubin
    expect "^rebuilt $key \(add for sm_80, no cubin\): the cached entry was damaged \(kernel.ptx truncated \(100 of [0-9]+ bytes\)\)$"
    run 0 cache verify
    expect "^1 entry checked: 1 ok, 0 corrupt$"
    run 0 cache warm add -D BLOCK=256 --arch sm_80 --no-cubin
    expect "^already cached $key "
    rm "$entry/meta.json"
    run 0 cache warm add -D BLOCK=256 --arch sm_80 --no-cubin --json
    expect '"result": "rebuilt"'
    expect '"damage": "meta.json missing"'
    run 0 cache verify
    # An unreadable file is not damage: reported as unreadable, and neither rebuilt nor removed.
    chmod 000 "$entry/kernel.ptx"
    if cat "$entry/kernel.ptx" >/dev/null 2>&1; then
      echo "SKIPPED (the unreadable-file part): this user (root?) reads files whatever their permissions"
    else
      run 1 cache warm add -D BLOCK=256 --arch sm_80 --no-cubin
      expect "^tessel: error: cache warm: the entry $key in $dir cannot be read \(kernel.ptx unreadable \(Permission denied\)\)$"
      one_line
      run 1 cache verify --remove
      expect "UNREADABLE: kernel.ptx unreadable \(Permission denied\) \(not removed: it could not be read\)"
      expect "^1 entry checked: 0 ok, 0 corrupt, 1 unreadable$"
      run 0 cache info "$key"
      expect "^status: +unreadable: kernel.ptx unreadable \(Permission denied\)"
      [ -e "$entry/kernel.ptx" ] || fail "an unreadable file was removed"
      chmod 644 "$entry/kernel.ptx"
      run 0 cache verify
    fi
    ;;
  readonly)
    # A read-only cache: warm is a user error naming the directory (issue 23 #12), and clear and
    # verify --remove report no removal that did not happen (#13). As root, through chattr +i.
    warm_add
    printf 'garbage' >>"$entry/kernel.tir"
    shard=$(dirname "$entry")
    read_only "$dir" "$shard"
    run 1 cache warm add -D BLOCK=64 --no-cubin
    expect "^tessel: error: cache warm: cannot write to the cache directory $dir: "
    one_line
    run 1 cache warm add -D BLOCK=256 --arch sm_80 --no-cubin  # the damaged entry cannot be replaced
    expect "^tessel: error: cache warm: cannot write to the cache directory $dir: "
    one_line
    run 1 cache verify --remove
    expect "CORRUPT: kernel.tir checksum mismatch \(could not be removed\)"
    reject "\(removed\)"
    run 1 cache clear
    expect "but 1 could not be removed from $dir"
    reject "^removed"
    writable
    [ -f "$entry/meta.json" ] && [ -f "$entry/kernel.ptx" ] || fail "the entry was gutted in a read-only cache"
    [ -z "$(ls "$dir/tmp")" ] || fail "temporaries were left in $dir/tmp"
    run 0 cache warm add -D BLOCK=256 --arch sm_80 --no-cubin
    expect "^rebuilt $key "
    ;;
  full)
    # A full disk for warm (a file size limit stands in for it; root cannot bypass either): a user
    # error naming the directory, exit 1, one line, and nothing left behind (issue 23 #12).
    ( trap '' XFSZ; ulimit -f 1 && exec "$tessel" cache warm add --no-cubin ) >"$out" 2>&1
    got=$?
    cat "$out"
    [ "$got" -eq 1 ] || fail "cache warm in a full cache exited $got, expected 1"
    expect "^tessel: error: cache warm: cannot write to the cache directory $dir: .*File too large"
    one_line
    [ -z "$(ls "$dir/tmp")" ] || fail "temporaries were left in $dir/tmp"
    run 0 cache list
    expect "^0 entries"
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
