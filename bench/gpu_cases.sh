#!/usr/bin/env bash
# On the device: runs one test executable case by case (doctest --first/--last), each under a
# time limit, so a hanging GPU kernel costs one case and names it. Prints one line per case
# that did not pass and a summary; exits 1 if any case failed, timed out or skipped.
# usage: bench/gpu_cases.sh EXE LOGDIR [SECONDS_PER_CASE] [doctest filters...]
set -uo pipefail
exe=$1 logdir=$2 limit=${3:-120}
shift $(( $# >= 3 ? 3 : $# ))
name=$(basename "$exe")
mkdir -p "$logdir"
n=$("$exe" --count "$@" 2>/dev/null | sed -n 's/.*passing the current filters: \([0-9]*\).*/\1/p')
[ -n "$n" ] || { echo "$name: cannot count test cases"; exit 1; }
bad=0
for ((i = 1; i <= n; i++)); do
  log="$logdir/$name.$i.log"
  timeout -s KILL "$limit" stdbuf -oL "$exe" --first="$i" --last="$i" "$@" > "$log" 2>&1
  rc=$?
  case_name=$(grep -m1 "TEST CASE:" "$log" | sed 's/.*TEST CASE: *//')
  [ -n "$case_name" ] || case_name=$("$exe" --list-test-cases "$@" 2>/dev/null | grep -v '^\[doctest\]\|^====' | sed -n "${i}p")
  if [ $rc -ne 0 ] || grep -q "SKIPPED" "$log"; then
    bad=$((bad + 1))
    [ $rc -eq 137 ] && what="TIMED OUT (${limit}s)" || what="rc=$rc"
    echo "FAIL $name #$i ($what): $case_name"
  else
    rm -f "$log"
  fi
done
echo "$name: $n cases, $bad not passed"
[ $bad -eq 0 ]
