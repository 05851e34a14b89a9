#!/usr/bin/env bash
# On the device machine (issue 24's GPU checks, after bench/gpu_run.sh's sweep): SASS from the
# CLI, the precise-math error table, tensor-core ceilings on the report, variant entry symbols
# as a profiler shows them. Logs and the SVG go to $OUT (one archive); a summary prints last.
set -uo pipefail
source "$(dirname "$0")/gpu_setup.sh"
export TESSEL_TEST_REQUIRE_GPU=1 TESSEL_REQUIRE_GPU=1
summary=()
note() { summary+=("$1"); }
# 1. tessel compile --emit sass (nvdisasm or cuobjdump from the toolkit here)
if sh "$(dirname "$0")/../tests/cli/sass_cli.sh" real "$B/tessel" > "$OUT/sass_cli.log" 2>&1; then note "PASS sass_cli real"
else note "FAIL sass_cli real: $(tail -n 1 "$OUT/sass_cli.log")"; fi
"$B/tessel" compile matmul --emit sass --arch sm_90a --num-warps 8 --num-stages 4 -D BLOCK_M=128 -D BLOCK_N=256 \
  -D BLOCK_K=64 > "$OUT/matmul_sm90a.sass" 2> "$OUT/matmul_sass.err" && note "SASS of matmul sm_90a: $(grep -c 'HGMMA' "$OUT/matmul_sm90a.sass") HGMMA lines, entry $(grep -m1 -o 'matmul_[A-Za-z0-9_]*' "$OUT/matmul_sm90a.sass")" \
  || note "FAIL sass matmul: $(tail -n 1 "$OUT/matmul_sass.err")"
# 2. precise math: measured max error of each function in both modes (test_jit's GPU case, -s)
ls -l /usr/local/cuda/nvvm/libdevice/libdevice.10.bc > "$OUT/libdevice.txt" 2>&1
timeout -s KILL 300 "$B/test_jit" -ts=gpu -tc='GPU: max error*' -s > "$OUT/precise_math.log" 2>&1
grep -q "Status: SUCCESS!" "$OUT/precise_math.log" && note "PASS precise math GPU errors" || note "FAIL precise math (see precise_math.log)"
# 3. tensor-core ceilings: tune matmul at two sizes with the dot probes, plot, table
mkdir -p /tmp/fc
timeout -s KILL 420 "$B/tessel" tune matmul --sizes 4096x4096x4096 --budget 2 --db /tmp/fc/tuning.json \
  --plot "$OUT/report.svg" > "$OUT/tune_matmul.log" 2>&1 && note "PASS tune matmul with ceilings" || note "FAIL tune matmul (see tune_matmul.log)"
note "$(grep -m1 'roofline probes' "$OUT/tune_matmul.log" | tr -s ' ')"
note "ceilings in the SVG: $(grep -o 'class="tensor-ceiling" data-dtype="[a-z0-9]*"' "$OUT/report.svg" | tr '\n' ' ')"
"$B/tessel" report "$OUT/report2.svg" --db /tmp/fc/tuning.json --table > "$OUT/report_table.log" 2>&1
# 4. entry symbols as ncu shows them: two variants of one kernel
if command -v ncu > /dev/null; then
  timeout -s KILL 120 ncu --metrics gpu__time_duration.sum "$B/tessel" run matmul --rows 512 --cols 512 -D BLOCK_M=64 > "$OUT/ncu1.log" 2>&1
  timeout -s KILL 120 ncu --metrics gpu__time_duration.sum "$B/tessel" run matmul --rows 512 --cols 512 -D BLOCK_M=128 --num-warps 8 > "$OUT/ncu2.log" 2>&1
  note "ncu kernel names: $(grep -ho 'matmul_[A-Za-z0-9_]*' "$OUT"/ncu1.log "$OUT"/ncu2.log | sort -u | tr '\n' ' ')"
fi
(cd "$OUT" && tar -czf first_contact_logs.tar.gz *.log *.txt *.sass *.err 2>/dev/null && rm -f *.log *.txt *.sass *.err)
printf '%s\n' "${summary[@]}"
