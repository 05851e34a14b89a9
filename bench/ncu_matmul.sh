#!/usr/bin/env bash
# On the device machine: Nsight Compute on the matmul samples (one config), to see where the
# cycles go (tensor-pipe activity, issue slots, warp stall reasons, shared-memory bank traffic).
# Unpacks .payload itself (always: a warm machine may hold an older build); prints the report.
# Usage: SAMPLES='matmul ...' CFGS=$'cfg1\ncfg2' N=2048 bash bench/ncu_matmul.sh
set -uo pipefail
source "$(dirname "$0")/gpu_setup.sh"
uname -r; which ncu || ls /opt/nvidia/nsight-compute/*/ncu
N=${N:-2048}
ROWS=${ROWS:-$N}
# Configs, one per line (meta-parameters, warps, stages).
mapfile -t CFGS <<< "${CFGS:-"-D BLOCK_M=128 -D BLOCK_N=128 -D BLOCK_K=32 --num-warps 4 --num-stages 3"}"
for k in ${SAMPLES:-matmul matmul_bias_gelu}; do
  for CFG in "${CFGS[@]}"; do
    echo "=== $k $CFG N=$N"
    timeout 240 ncu --clock-control none --kernel-name "regex:^$k" --launch-count 1 \
      --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy \
      --section LaunchStats --section InstructionStats ${NCU_EXTRA:-} \
      --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,l1tex__data_bank_reads.avg.pct_of_peak_sustained_elapsed,l1tex__data_bank_writes.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed,sm__cycles_elapsed.avg.per_second,regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio \
      /tmp/tessel/tessel run "$k" --rows "$ROWS" --cols "$N" $CFG 2>&1 | grep -vE "^==PROF==|^\s*$" | grep -v -- "-----" 
  done
done
# The cubins the driver made (one per config), disassembled: what ptxas did with the K loop.
if command -v cuobjdump >/dev/null && [ -n "${SASS_OUT:-}" ]; then
  mkdir -p "$SASS_OUT"
  find "$TESSEL_CACHE_DIR" -name '*.cubin' | while read -r f; do
    cuobjdump -sass "$f" > "$SASS_OUT/$(basename "$(dirname "$f")").sass" 2>&1
  done
fi
