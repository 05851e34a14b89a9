#!/usr/bin/env bash
# On the device machine: A/B of one lowering change in one run. The payload's build is "new";
# "old" is the same build with .payload/ab/libtessel_lowering.so.xz (a libtessel_lowering.so
# built with the change turned off) in front of it on the loader path, so only the lowering
# differs. Each benchmark in AB_BENCHES (default tessel_bench_attention) runs ROUNDS times per
# side, old and new alternating, each on a fresh compilation cache; bench/ab_summary.py prints
# every kernel's median per side and new / old, and writes $OUT/ab.json. No new round starts
# after AB_BUDGET seconds.
set -uo pipefail
source "$(dirname "$0")/gpu_setup.sh"
OLD=/tmp/tessel_ab_old
mkdir -p "$OLD"
# The executables load the lowering by its soname.
soname=$(cd "$B" && ls libtessel_lowering.so.*.* 2>/dev/null | grep -E '\.so\.[0-9]+\.[0-9]+$' | head -n 1)
[ -n "$soname" ] || { echo "no libtessel_lowering.so.MAJOR.MINOR in $B"; exit 1; }
xz -dc .payload/ab/libtessel_lowering.so.xz > "$OLD/$soname"
ROUNDS=${ROUNDS:-2}
BUDGET=${AB_BUDGET:-420}
start=$SECONDS
for r in $(seq 1 "$ROUNDS"); do
  if [ $((SECONDS - start)) -gt "$BUDGET" ]; then echo "stopping before round $r: ${BUDGET}s budget spent"; break; fi
  for bench in ${AB_BENCHES:-tessel_bench_attention}; do
    for side in old new; do
      path=$([ "$side" = old ] && echo "$OLD:$LD_LIBRARY_PATH" || echo "$LD_LIBRARY_PATH")
      TESSEL_CACHE_DIR=$(mktemp -d) LD_LIBRARY_PATH="$path" "$B/$bench" "$OUT/ab_${side}_${bench}_${r}.json" \
        > "$OUT/ab_${side}_${bench}_${r}.log" 2>&1 || echo "FAILED: $side $bench round $r"
      echo "round $r $side $bench done at $((SECONDS - start)) s"
    done
  done
done
python3 "$(dirname "$0")/ab_summary.py" "$OUT" | tee "$OUT/ab_summary.log"
