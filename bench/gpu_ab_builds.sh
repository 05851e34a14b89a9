#!/usr/bin/env bash
# On the device machine: A/B of two builds in one run. .payload/bin.tar.xz is the new build; the
# old one is $OLD_PAYLOAD (default .payload/old.tar.xz), or, with OLD_LOWERING set (an
# xz-packed libtessel_lowering.so built with one lowering change turned off), the new build with
# that library in front of it on the loader path, so only the lowering differs.
# `tessel bench --all` ("cli") and each benchmark of AB_BENCHES (default tessel_bench,
# tessel_bench_reductions, tessel_bench_matmul) run ROUNDS times per build, old and new
# alternating, each run on a fresh compilation cache; no round starts after AB_BUDGET seconds.
# bench/ab_summary.py then prints every kernel's median per build and the ratio, and writes
# $OUT/ab.json.
set -uo pipefail
source "$(dirname "$0")/gpu_setup.sh"
NEW=$B
OLD=/tmp/tessel_old
mkdir -p "$OLD"
# The loader path without the new build (gpu_setup.sh put it first): the driver library stays found.
SYSTEM_LD=${LD_LIBRARY_PATH#/tmp/tessel:}
if [ -n "${OLD_LOWERING:-}" ]; then
  [ -n "$LOWERING_SONAME" ] || { echo "no libtessel_lowering.so.MAJOR.MINOR in $B"; exit 1; }
  xz -dc "$OLD_LOWERING" > "$OLD/$LOWERING_SONAME"
  old_ld="$OLD:$NEW:$SYSTEM_LD" old_bin=$NEW
else
  xz -dc "${OLD_PAYLOAD:-.payload/old.tar.xz}" | tar -C "$OLD" -xf -
  old_ld="$OLD:$SYSTEM_LD" old_bin=$OLD
fi
ROUNDS=${ROUNDS:-3}
BUDGET=${AB_BUDGET:-480}  # seconds: no new round starts past it (the device call's limit is 600)
start=$SECONDS
for r in $(seq 1 "$ROUNDS"); do
  if [ $((SECONDS - start)) -gt "$BUDGET" ]; then echo "stopping before round $r: ${BUDGET}s budget spent"; break; fi
  for bench in ${AB_BENCHES:-cli tessel_bench tessel_bench_reductions tessel_bench_matmul}; do
    for side in old new; do
      dir=$([ "$side" = old ] && echo "$old_bin" || echo "$NEW")
      ld=$([ "$side" = old ] && echo "$old_ld" || echo "$NEW:$SYSTEM_LD")
      [ "$bench" = cli ] || [ -x "$dir/$bench" ] || continue
      if [ "$bench" = cli ]; then
        # `tessel bench --all` on an empty tuning database: every tunable sample's default config
        # at its default sizes (elementwise, rows, matmuls), as JSON.
        TESSEL_CACHE_DIR=$(mktemp -d) LD_LIBRARY_PATH="$ld" "$dir/tessel" bench --all --json \
          --budget "${CLI_BUDGET:-1}" --db "$(mktemp -u)" > "$OUT/ab_${side}_cli_${r}.json" \
          2> "$OUT/ab_${side}_cli_${r}.log" || echo "FAILED: $side cli round $r"
      else
        TESSEL_CACHE_DIR=$(mktemp -d) LD_LIBRARY_PATH="$ld" "$dir/$bench" "$OUT/ab_${side}_${bench}_${r}.json" \
          > "$OUT/ab_${side}_${bench}_${r}.log" 2>&1 || echo "FAILED: $side $bench round $r"
      fi
      echo "round $r $side $bench done at $((SECONDS - start)) s"
    done
  done
done
python3 "$(dirname "$0")/ab_summary.py" "$OUT" | tee "$OUT/ab_summary.log"
(cd "$OUT" && tar -czf ab_runs.tar.gz ab_old_* ab_new_* && rm -f ab_old_* ab_new_*) || true
