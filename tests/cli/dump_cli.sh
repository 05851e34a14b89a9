#!/bin/sh
# CLI check of `tessel dump`: dump_cli.sh TESSEL DIR; every stage written, aligned loads vectorised.
# Exit status: 0 pass, 1 fail (with the reason).
set -u
tessel=$1
dir=$2
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$dir"
# --aligned specialises every pointer and n as divisible by 16, so add's loads become v4
"$tessel" dump add "$dir" --aligned --no-cubin >"$dir.out" 2>&1
got=$?
cat "$dir.out"
[ "$got" -eq 0 ] || fail "tessel dump exited $got, expected 0"
grep -Eq "^wrote .*/add-\* \(tir, ll, ptx, meta.json\)" "$dir.out" || fail "no 'wrote' line"
set -- "$dir"/add-*/
[ $# -eq 1 ] && [ -d "$1" ] || fail "expected exactly one $dir/add-*/ directory, found: $*"
entry=$1
for f in kernel.tir kernel.ll kernel.ptx meta.json; do
  [ -s "$entry$f" ] || fail "$entry$f is missing or empty"
done
grep -q "kernel @add(" "$entry"kernel.tir || fail "kernel.tir is not add's tile IR"
grep -q "^.visible .entry add(" "$entry"kernel.ptx || fail "kernel.ptx has no add entry"
v4=$(grep -c "ld.global.v4" "$entry"kernel.ptx)
echo "ld.global.v4 in kernel.ptx: $v4"
[ "$v4" -gt 0 ] || fail "no ld.global.v4 in an aligned add: the loads were not vectorised"
rm -rf "$dir" "$dir.out"
echo "PASS: dump"
