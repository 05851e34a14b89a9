#!/usr/bin/env bash
# On the device machine: the embedding checks (issue 22) and the two-GPU run (issue 28) in one
# call. The GPU cases of tests/embed (streams, events, graph capture, cudaMalloc memory, contexts,
# threads; two devices where there are two), tessel_bench_embedding (launch on a caller's stream,
# graph replay, against raw cuLaunchKernel), the PyTorch extension (samples/torch: built there
# against the payload's install tree, tested and benchmarked), per-device tuning
# (`tessel tune --device N`) and a bundle launched on every device. Logs and JSON in $OUT
# (logs packed into embedding_logs.tar.gz); a summary table last. Exit 1 when anything failed.
#   OUT=/tmp/out bench/embedding_run.sh        (after bench/gpu_setup.sh has unpacked the payload)
set -uo pipefail
source bench/gpu_setup.sh
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # house rule
export TESSEL_TEST_REQUIRE_GPU=1
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "$gpus" -ge 2 ] && export TESSEL_TEST_REQUIRE_GPUS=2
summary=()
note() { summary+=("$1"); }

# 1. tests/embed on the GPU (and its CPU cases, on the GPU backend).
if timeout 300 "$B/test_embed" > "$OUT/embed_tests.log" 2>&1; then note "test_embed: passed"
else note "test_embed: FAILED (rc=$?)"; fi
grep -E "^\[doctest\] (test cases|assertions)|NOT RUN|MESSAGE: variants" "$OUT/embed_tests.log" | sed 's/^/  /' > "$OUT/embed_tests_summary.txt"

# 2. Launch and graph benchmarks.
if timeout 300 "$B/tessel_bench_embedding" "$OUT/bench_embedding.json" > "$OUT/bench_embedding.log" 2>&1; then
  note "bench_embedding: ok"
else note "bench_embedding: FAILED (rc=$?)"; fi

# 3. Per-device tuning and a bundle on every device.
for d in $(seq 0 $((gpus - 1))); do
  if timeout 240 "$B/tessel" tune add softmax --sizes 16M,4096x4096 --device "$d" --budget 1 --db "$OUT/tuning.json" \
       > "$OUT/tune_device$d.log" 2>&1; then note "tessel tune --device $d: ok"
  else note "tessel tune --device $d: FAILED"; fi
  if timeout 120 "$B/tessel" run matmul --device "$d" --rows 1000 --cols 1000 > "$OUT/run_device$d.log" 2>&1 &&
     grep -q "verified" "$OUT/run_device$d.log"; then note "tessel run matmul --device $d: verified"
  else note "tessel run matmul --device $d: FAILED"; fi
done
python3 - "$OUT/tuning.json" > "$OUT/tuning_devices.txt" 2>&1 <<'PY'
import json, sys
db = json.load(open(sys.argv[1]))
entries = db.get("entries", db) if isinstance(db, dict) else db
print(json.dumps(entries, indent=1)[:3000])
PY

# 4. The PyTorch extension (and, with two GPUs, the data-parallel step).
if B="$B" OUT="$OUT" timeout 560 samples/torch/run_on_device.sh > "$OUT/torch_run.log" 2>&1; then note "samples/torch: passed"
else note "samples/torch: FAILED (rc=$?)"; fi

(cd "$OUT" && tar -czf embedding_logs.tar.gz *.log *.txt 2>/dev/null)
echo "== $(head -n 2 "$OUT/gpu.txt" | tail -n 1) ($gpus GPU)"
printf '%s\n' "${summary[@]}"
cat "$OUT/embed_tests_summary.txt"
tail -n 30 "$OUT/bench_embedding.log"
tail -n 40 "$OUT/torch_run.log"
printf '%s\n' "${summary[@]}" | grep -q FAILED && exit 1
exit 0
