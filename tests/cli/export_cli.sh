#!/bin/sh
# CLI checks of `tessel export --out DIR/` and `-o DIR/` (issue 24): export_cli.sh CASE TESSEL SCRATCH.
#   slash   --out kernels/ (the README's form) writes the bundle into kernels itself, and again
#           over the existing bundle (kernels/. too); no staging directory is left behind.
#   failed  an export that fails after staging began leaves nothing: no bundle directory, none
#           of the parents it created, no staging directory.
# Exit status: 0 pass, 1 fail (with the reason).
set -u
case=$1
tessel=$2
scratch=$3
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$scratch" && mkdir -p "$scratch" && cd "$scratch" || fail "cannot make $scratch"

# run STATUS ARGS...: runs tessel export, prints its output, asserts its exit status.
run() {
  want=$1
  shift
  "$tessel" export "$@" >out.txt 2>&1
  got=$?
  cat out.txt
  [ "$got" -eq "$want" ] || fail "tessel export $* exited $got, expected $want"
}
# no_leftovers DIR: no hidden staging directory (.NAME.tmp-*) in DIR.
no_leftovers() {
  left=$(find "$1" -maxdepth 1 -name '.*.tmp-*')
  [ -z "$left" ] || fail "staging directories left behind: $left"
}

case $case in
  slash)
    run 0 add --out kernels/ --arch sm_80 --no-cubin
    grep -q "to kernels in" out.txt || fail "the export does not report 'to kernels'"
    [ -f kernels/bundle.json ] || fail "kernels/bundle.json was not written"
    [ -f kernels/add.generic.sm_80.ptx ] || fail "kernels/add.generic.sm_80.ptx was not written"
    no_leftovers . && no_leftovers kernels
    # Again over the bundle now there (the atomic exchange), both spellings of the directory,
    # and -o (the short form every writing command takes).
    for out in kernels/ kernels/.; do
      run 0 add relu -o "$out" --arch sm_80 --no-cubin
      grep -q '"relu"' kernels/bundle.json || fail "-o $out did not replace the bundle in kernels"
      grep -q '"entry": "relu_BLOCK[0-9]*_w4_s1"' kernels/bundle.json || fail "relu's entry is not named for its variant"
      no_leftovers . && no_leftovers kernels
    done
    echo "PASS: slash" ;;
  failed)
    # The header's namespace is checked after the kernels compiled into the staging directory.
    run 1 add --out new/sub/kernels/ --arch sm_80 --no-cubin --header k.hpp --namespace int
    grep -q "namespace 'int' is not usable" out.txt || fail "not the namespace error"
    [ ! -e new ] || fail "a failed export left new/ behind: $(find new)"
    run 1 add --out kernels/ --arch sm_80 --no-cubin --header k.hpp --namespace int
    [ ! -e kernels ] || fail "a failed export left kernels/ behind"
    no_leftovers .
    run 1 add --out . --arch sm_80 --no-cubin
    grep -q "names no directory a bundle can be written to" out.txt || fail "--out . not refused"
    echo "PASS: failed" ;;
  *) fail "unknown case '$case'" ;;
esac
