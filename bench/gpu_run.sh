#!/usr/bin/env bash
# On the device machine: unpack .payload, run the GPU tests, every sample on the GPU, the
# benchmarks and triton_ref.py in one run; logs and JSON go to $OUT. Prints a summary last.
set -uo pipefail
source "$(dirname "$0")/gpu_setup.sh"
# PART=tune: the autotuner (issue 6) alone: tune every tunable sample and draw the roofline; a
# second process reuses the database (no tuning) to time tuned against default; the 8-config
# timing target (default budget) and a long sweep of the same configs to compare the choice with.
if [ "${PART:-main}" = tune ]; then
  "$B/tessel" tune --all --db "$OUT/tuning.json" --plot "$OUT/roofline.svg" > "$OUT/tune.log" 2>&1 || echo "tune failed" >> "$OUT/tune.log"
  "$B/tessel" bench --all --db "$OUT/tuning.json" > "$OUT/tune_bench.log" 2>&1 || echo "bench failed" >> "$OUT/tune_bench.log"
  "$B/tessel" tune add softmax layernorm_f16 --json --db /tmp/t2.json > "$OUT/tune_quick.json" 2> "$OUT/tune_quick.log"
  "$B/tessel" tune add softmax layernorm_f16 --budget 4 --json --db /tmp/t3.json > "$OUT/tune_sweep.json" 2> "$OUT/tune_sweep.log"
  "$B/test_tune" > "$OUT/test_tune.log" 2>&1 && echo "PASS test_tune" || echo "FAIL test_tune"
  (cd "$OUT" && tar -czf logs.tar.gz *.log gpu.txt && rm -f *.log && tar -czf results.tar.gz *.json && rm -f *.json)
  tar -xzOf "$OUT/logs.tar.gz" tune.log | grep -vE "^\s*$" | tail -n 60
  tar -xzOf "$OUT/logs.tar.gz" tune_bench.log | tail -n 25
  exit 0
fi
# Warp-specialised matmuls (producer warps fill the K loop's stages, by cp.async and by TMA;
# f16/bf16 on sm_90a only).
ws_samples() { for s in ${WS_SAMPLES:-}; do
  for shape in "--rows 333 --cols 480 --num-stages 3" "--rows 128 --cols 32 --num-stages 4" \
               "--rows 1000 --cols 1024 --num-stages 4 --num-warps 8 -D BLOCK_M=128 -D BLOCK_N=128 -D BLOCK_K=32" \
               "--rows 1000 --cols 1024 --num-stages 3 --programs-per-cta 2" \
               "--rows 2048 --cols 2048 --num-stages 3 --programs-per-cta 2 -D BLOCK_M=128 -D BLOCK_N=128 -D BLOCK_K=64"; do
    [[ "$s" != *persistent* && "$shape" == *per-cta* ]] && continue  # odd tile counts: one program per CTA
    for tma in "" --tma; do  # producers copying by cp.async, then by TMA
      "$B/tessel" run "$s" $shape --warp-specialize $tma || echo "FAILED: $s $shape --warp-specialize $tma"
    done
  done
done; }
# PART=matmul (or "matmul reductions"): the matmul samples on the GPU, the matmul benchmark and
# cuBLAS/Triton beside it (and the reductions benchmark with Triton/torch beside it).
# MATMUL_TESTS (default test_lowering) run first; MATMUL_BUNDLE=1 adds tessel_bench_bundle.
if [[ "${PART:-main}" == matmul* ]]; then
  if [[ "$PART" == *reductions* ]]; then
    "$B/tessel_bench_reductions" "$OUT/tessel_bench_reductions.json" > "$OUT/bench_reductions.log" 2>&1 || echo "bench_reductions failed" >> "$OUT/bench_reductions.log"
    (cd "$OUT" && PYTHONUNBUFFERED=1 timeout 200 python3 "$OLDPWD/bench/reductions_ref.py" > "$OUT/reductions_ref.log" 2>&1) || echo "reductions_ref failed" >> "$OUT/reductions_ref.log"
    tail -n 14 "$OUT/bench_reductions.log"; tail -n 12 "$OUT/reductions_ref.log"
  fi
  for t in ${MATMUL_TESTS:-test_lowering}; do  # MATMUL_TESTS: the test executables to run first
    "$B/$t" > "$OUT/$t.log" 2>&1 && echo "PASS $t" || echo "FAIL $t"
  done
  [ -n "${MATMUL_BUNDLE:-}" ] && { "$B/tessel_bench_bundle" "$OUT/tessel_bench_bundle.json" > "$OUT/bench_bundle.log" 2>&1 || echo "bench_bundle failed" >> "$OUT/bench_bundle.log"; tail -n 3 "$OUT/bench_bundle.log"; }
  for s in ${MATMUL_SAMPLES:-matmul matmul_bias_gelu}; do
    for shape in "--rows 333 --cols 470" "--rows 333 --cols 480 --num-stages 3" \
                 "--rows 512 --cols 1008 --num-stages 2 --num-warps 8" "--rows 128 --cols 32 --num-stages 4"; do
      "$B/tessel" run "$s" $shape || echo "FAILED: $s $shape"
    done
  done > "$OUT/samples.log" 2>&1
  ws_samples >> "$OUT/samples.log" 2>&1
  grep -c "verified:" "$OUT/samples.log" | sed 's/^/samples verified on GPU: /'
  grep "FAILED" "$OUT/samples.log"
  "$B/tessel_bench_matmul" "$OUT/tessel_bench_matmul.json" > "$OUT/bench_matmul.log" 2>&1 || echo "bench_matmul failed" >> "$OUT/bench_matmul.log"
  (cd "$OUT" && PYTHONUNBUFFERED=1 timeout 360 python3 "$OLDPWD/bench/matmul_ref.py" > "$OUT/matmul_ref.log" 2>&1) || echo "matmul_ref failed" >> "$OUT/matmul_ref.log"
  (cd "$OUT" && tar -czf logs.tar.gz *.log gpu.txt && rm -f *.log && tar -czf results.tar.gz *.json && rm -f *.json)
  tar -xzOf "$OUT/logs.tar.gz" bench_matmul.log | tail -n 24
  tar -xzOf "$OUT/logs.tar.gz" matmul_ref.log | tail -n 16
  exit 0
fi
summary=()
for t in "$B"/test_*; do
  name=$(basename "$t")
  if timeout -s KILL 300 "$t" > "$OUT/$name.log" 2>&1; then summary+=("PASS $name"); else summary+=("FAIL $name"); fi
done
{ for s in add scale_bias_relu scale_bias_relu_unfused chain5 chain5_unfused bias_gelu_dropout bias_gelu_dropout_unfused; do
    for n in 1 4097 1000003; do
      "$B/tessel" run "$s" --size "$n" || echo "FAILED: $s $n"
    done
  done
  if [ -n "${ROW_SAMPLES:-}" ]; then
    for s in $ROW_SAMPLES; do
      for c in 1000 4097 30522; do
        "$B/tessel" run "$s" --rows 67 --cols "$c" || echo "FAILED: $s cols=$c"
        "$B/tessel" run "$s" --rows 33 --cols "$c" --row-stride $((c + 13)) || echo "FAILED: $s cols=$c strided"
      done
    done
  fi
  for s in ${TOTAL_SAMPLES:-}; do
    for n in 1 4097 1000003; do "$B/tessel" run "$s" --size "$n" || echo "FAILED: $s $n"; done
  done; } > "$OUT/samples.log" 2>&1
# Production path: bundles compiled here (ptxas cubins) and there (driver cubins), runtime-only programs.
{ cd "$B"
  ./tessel_production bundle --require-gpu; echo "rc=$?"
  ./tessel_production bundle.tsb --require-gpu; echo "rc=$?"
  ./tessel_launcher_example bundle; echo "rc=$?"
  ./tessel export --all --arch sm_90 --out /tmp/bundle_there --header /tmp/there.hpp; echo "rc=$?"
  ./tessel_production /tmp/bundle_there --require-gpu; echo "rc=$?"
  ./tessel_launcher_example /tmp/bundle_there; echo "rc=$?"
  cd - >/dev/null; } > "$OUT/production.log" 2>&1
# Matmul samples (issue 7) on the GPU: odd shapes that exercise every mask; M x N = rows x cols, K = cols;
# the --num-stages shapes (K, N multiples of 16) take the pipelined K loop, K=32 fewer trips than stages.
for s in ${MATMUL_SAMPLES:-}; do
  for shape in "--rows 333 --cols 470" "--rows 1000 --cols 1000" "--rows 64 --cols 4097" \
               "--rows 333 --cols 480 --num-stages 3" "--rows 512 --cols 1008 --num-stages 2 --num-warps 8" \
               "--rows 128 --cols 32 --num-stages 4"; do
    "$B/tessel" run "$s" $shape || echo "FAILED: $s $shape"
  done
done >> "$OUT/samples.log" 2>&1
# Persistent matmuls with two programs per CTA (their wgmma K loops take turns).
for s in ${PERSISTENT_SAMPLES:-}; do
  for shape in "--rows 333 --cols 470 --programs-per-cta 2" "--rows 1000 --cols 1024 --num-stages 3 --programs-per-cta 2" \
               "--rows 2048 --cols 2048 --num-stages 3 --programs-per-cta 2 -D BLOCK_M=128 -D BLOCK_N=128 -D BLOCK_K=64" \
               "--rows 512 --cols 1008 --num-stages 2 --num-warps 8 --programs-per-cta 2"; do
    "$B/tessel" run "$s" $shape || echo "FAILED: $s $shape"
  done
done >> "$OUT/samples.log" 2>&1
ws_samples >> "$OUT/samples.log" 2>&1
grep -c "verified:" "$OUT/samples.log" | sed 's/^/samples verified on GPU: /' > "$OUT/samples_summary.txt"
grep "FAILED" "$OUT/samples.log" >> "$OUT/samples_summary.txt"
# The production runtime against the JIT on the TMA matmul tile (bundle launches encode tensor maps).
"$B/tessel_bench_bundle" "$OUT/tessel_bench_bundle.json" > "$OUT/bench_bundle.log" 2>&1 || echo "bench_bundle failed" >> "$OUT/bench_bundle.log"
# SKIP_BENCH=1: tests and samples only (the benchmarks then run in a second call, e.g. PART=matmul).
if [ -n "${SKIP_BENCH:-}" ]; then
  echo "benchmarks skipped (SKIP_BENCH)" > "$OUT/bench.log"
else
"$B/tessel_bench" "$OUT/tessel_bench.json" > "$OUT/bench.log" 2>&1 || echo "bench failed" >> "$OUT/bench.log"
if [ -x "$B/tessel_bench_reductions" ]; then
  "$B/tessel_bench_reductions" "$OUT/tessel_bench_reductions.json" > "$OUT/bench_reductions.log" 2>&1 || echo "bench_reductions failed" >> "$OUT/bench_reductions.log"
  (cd "$OUT" && PYTHONUNBUFFERED=1 timeout 200 python3 "$OLDPWD/bench/reductions_ref.py" > "$OUT/reductions_ref.log" 2>&1) || echo "reductions_ref failed" >> "$OUT/reductions_ref.log"
fi
if [ -x "$B/tessel_bench_matmul" ]; then
  "$B/tessel_bench_matmul" "$OUT/tessel_bench_matmul.json" > "$OUT/bench_matmul.log" 2>&1 || echo "bench_matmul failed" >> "$OUT/bench_matmul.log"
  (cd "$OUT" && PYTHONUNBUFFERED=1 timeout 360 python3 "$OLDPWD/bench/matmul_ref.py" > "$OUT/matmul_ref.log" 2>&1) || echo "matmul_ref failed" >> "$OUT/matmul_ref.log"
fi
(cd "$OUT" && PYTHONUNBUFFERED=1 timeout 300 python3 "$OLDPWD/.payload/triton_ref.py" > "$OUT/triton_ref.log" 2>&1) || echo "triton_ref failed" >> "$OUT/triton_ref.log"
fi
# Fold the logs into one archive (the device tool returns at most 8 files).
grep -E "RESULT|start-up|rc=|FAIL|loaded" "$OUT/production.log" > "$OUT/production_summary.txt"
(cd "$OUT" && tar -czf logs.tar.gz *.log gpu.txt samples_summary.txt production_summary.txt && rm -f *.log \
   && rm -f production_summary.txt && { ! ls *.json > /dev/null 2>&1 || { tar -czf results.tar.gz *.json && rm -f *.json; }; })
cat "$OUT/gpu.txt"
printf '%s\n' "${summary[@]}"
cat "$OUT/samples_summary.txt"
tar -xzOf "$OUT/logs.tar.gz" production_summary.txt | head -3
tar -xzOf "$OUT/logs.tar.gz" bench_bundle.log | tail -n 4
tar -xzOf "$OUT/logs.tar.gz" bench.log | tail -n 20
tar -xzOf "$OUT/logs.tar.gz" bench_reductions.log 2>/dev/null | tail -n 12
tar -xzOf "$OUT/logs.tar.gz" reductions_ref.log 2>/dev/null | tail -n 12
tar -xzOf "$OUT/logs.tar.gz" bench_matmul.log 2>/dev/null | tail -n 20
tar -xzOf "$OUT/logs.tar.gz" triton_ref.log 2>/dev/null | tail -n 25
