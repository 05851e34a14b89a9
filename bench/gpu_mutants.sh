#!/usr/bin/env bash
# On the device (sources bench/gpu_setup.sh): each .payload/mut/NAME.so.xz is a libtessel_lowering.so
# built with one deliberate bug (a mutation of the lowering that no CPU test can see). Each is
# loaded in place of the real one and the GPU tests that should see it are run: CAUGHT when at
# least one fails, MISSED when all pass. Prints one line per mutant; logs in $OUT/mut_NAME.log.
# usage: bench/gpu_mutants.sh [TEST...]   (default: test_interp_gpu test_jit)
set -uo pipefail
source "$(dirname "$0")/gpu_setup.sh"
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(test_interp_gpu test_jit)
for m in .payload/mut/*.so.xz; do
  [ -e "$m" ] || { echo "no mutants in .payload/mut"; exit 1; }
  name=$(basename "$m" .so.xz)
  dir=/tmp/mut/$name
  mkdir -p "$dir" && xz -dc "$m" > "$dir/${LOWERING_SONAME:?no libtessel_lowering.so.MAJOR.MINOR in $B}"
  log=$OUT/mut_$name.log
  : > "$log"
  caught=()
  for t in "${tests[@]}"; do
    echo "== $t with $name" >> "$log"
    LD_LIBRARY_PATH=$dir:$LD_LIBRARY_PATH TESSEL_CACHE_DIR=$(mktemp -d) timeout -s KILL 300 "$B/$t" >> "$log" 2>&1
    rc=$?
    echo "== exit status $rc" >> "$log"
    [ $rc -ne 0 ] && caught+=("$t (exit $rc, $(grep -c ': ERROR:' "$log") errors so far)")
  done
  if [ ${#caught[@]} -gt 0 ]; then echo "CAUGHT $name by ${caught[*]}"; else echo "MISSED $name"; fi
done
