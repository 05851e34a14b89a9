#!/usr/bin/env bash
# On the device machine, a quick A/B instead of the full bench/gpu_run.sh: unpack .payload, run
# the test executables named in TESTS, the samples in SAMPLES (tessel run ... with RUN_FLAGS),
# and tessel_bench_matmul on the configs in BENCH_CONFIGS (see bench_matmul.cpp); logs and JSON
# go to $OUT as logs.tar.gz / results.tar.gz.
set -uo pipefail
source "$(dirname "$0")/gpu_setup.sh"
for t in ${TESTS:-}; do
  if "$B/$t" > "$OUT/$t.log" 2>&1; then echo "PASS $t"; else echo "FAIL $t"; tail -n 30 "$OUT/$t.log"; fi
done
for s in ${SAMPLES:-}; do
  "$B/tessel" run $s ${RUN_FLAGS:-} >> "$OUT/samples.log" 2>&1 || echo "FAILED: $s ${RUN_FLAGS:-}" | tee -a "$OUT/samples.log"
done
[ -n "${SAMPLES:-}" ] && grep -c "verified:" "$OUT/samples.log" | sed 's/^/samples verified on GPU: /'
if [ -n "${BENCH_CONFIGS:-}" ]; then
  "$B/tessel_bench_matmul" "$OUT/tessel_bench_matmul.json" > "$OUT/bench_matmul.log" 2>&1 || echo "bench_matmul failed"
  cat "$OUT/bench_matmul.log"
fi
if [ -n "${REF:-}" ]; then
  (cd "$OUT" && PYTHONUNBUFFERED=1 timeout 240 python3 "$OLDPWD/bench/matmul_ref.py" > "$OUT/matmul_ref.log" 2>&1) || echo "matmul_ref failed"
  tail -n 16 "$OUT/matmul_ref.log"
fi
(cd "$OUT" && tar -czf logs.tar.gz *.log gpu.txt && rm -f *.log; ls *.json > /dev/null 2>&1 && tar -czf results.tar.gz *.json && rm -f *.json) || true
