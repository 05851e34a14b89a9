#!/bin/sh
# CLI check of `tessel dump`: dump_cli.sh TESSEL DIR; every stage written, aligned loads vectorised.
# Exit status: 0 pass, 1 fail (with the reason).
set -u
tessel=$1
dir=$2
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$dir"
# --aligned specialises every pointer and n as divisible by 16, so add's loads become v4
"$tessel" dump add -o "$dir" --aligned --no-cubin >"$dir.out" 2>&1
got=$?
cat "$dir.out"
[ "$got" -eq 0 ] || fail "tessel dump exited $got, expected 0"
grep -Eq "^wrote .*/add-\* \(tir, plan, ll, ptx, meta.json\)" "$dir.out" || fail "no 'wrote' line"
set -- "$dir"/add-*/
[ $# -eq 1 ] && [ -d "$1" ] || fail "expected exactly one $dir/add-*/ directory, found: $*"
entry=$1
for f in kernel.tir kernel.plan kernel.ll kernel.ptx meta.json; do
  [ -s "$entry$f" ] || fail "$entry$f is missing or empty"
done
grep -q "kernel @add(" "$entry"kernel.tir || fail "kernel.tir is not add's tile IR"
grep -q "^plan of kernel 'add' for sm_" "$entry"kernel.plan || fail "kernel.plan is not add's plan"
# The entry is named for the variant (meta-parameters, warps, stages) and meta.json maps it back.
grep -q "^.visible .entry add_BLOCK1024_w4_s1(" "$entry"kernel.ptx || fail "kernel.ptx has no add_BLOCK1024_w4_s1 entry"
grep -q '"symbol": "add_BLOCK1024_w4_s1"' "$entry"meta.json || fail "meta.json does not record the entry symbol"
grep -q '"BLOCK": 1024' "$entry"meta.json || fail "meta.json does not record the meta-parameters"
v4=$(grep -c "ld.global.v4" "$entry"kernel.ptx)
echo "ld.global.v4 in kernel.ptx: $v4"
[ "$v4" -gt 0 ] || fail "no ld.global.v4 in an aligned add: the loads were not vectorised"
rm -rf "$dir"
# The positional DIR of earlier versions still works; two different directories are refused.
"$tessel" dump add "$dir" --no-cubin >"$dir.out" 2>&1 || fail "tessel dump add DIR exited $?, expected 0"
set -- "$dir"/add-*/
[ -d "$1" ] || fail "dump add DIR wrote no $dir/add-*/"
"$tessel" dump add "$dir" -o "$dir.other" --no-cubin >"$dir.out" 2>&1
got=$?
[ "$got" -eq 1 ] || fail "dump with two directories exited $got, expected 1"
grep -q "dump: two output directories given" "$dir.out" || fail "no 'two output directories' message: $(cat "$dir.out")"
"$tessel" dump add --no-cubin >"$dir.out" 2>&1
got=$?
[ "$got" -eq 1 ] || fail "dump without a directory exited $got, expected 1"
grep -q "dump: no output directory (give -o DIR)" "$dir.out" || fail "no 'no output directory' message: $(cat "$dir.out")"
rm -rf "$dir" "$dir.other" "$dir.out"
echo "PASS: dump"
