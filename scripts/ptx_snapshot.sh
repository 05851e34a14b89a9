#!/usr/bin/env bash
# Compiles every kernel of `tessel list` under a matrix of targets and options and writes
# each stage (PTX by default) or its error to OUT_DIR/<kernel>.<config>.<stage>. Two snapshots
# taken before and after a refactor of the lowering are compared with `diff -r`: a change
# meant to keep behaviour must leave every file byte-identical.
#   scripts/ptx_snapshot.sh TESSEL_BINARY OUT_DIR [STAGE]
set -euo pipefail
tessel=$(readlink -f "$1")
out=$2
stage=${3:-ptx}
mkdir -p "$out"
configs=(
  "sm80|--arch sm_80"
  "sm90a|--arch sm_90a"
  "sm90a_al|--arch sm_90a --aligned"
  "sm80_al_s3|--arch sm_80 --aligned --num-stages 3"
  "sm86_al_w2_s2|--arch sm_86 --aligned --num-warps 2 --num-stages 2"
  "sm90a_al_w8_s4|--arch sm_90a --aligned --num-warps 8 --num-stages 4"
  "sm90a_al_w8_s4_ws|--arch sm_90a --aligned --num-warps 8 --num-stages 4 --warp-specialize"
  "sm90a_al_w8_s4_ws_tma|--arch sm_90a --aligned --num-warps 8 --num-stages 4 --warp-specialize --tma"
  "sm90a_al_w4_s3_p2|--arch sm_90a --aligned --num-warps 4 --num-stages 3 --programs-per-cta 2"
  "sm90a_al_w4_s3_p2_ws_tma|--arch sm_90a --aligned --num-warps 4 --num-stages 3 --programs-per-cta 2 --warp-specialize --tma"
  "sm90a_al_w4_s4_ws|--arch sm_90a --aligned --num-warps 4 --num-stages 4 --warp-specialize"
  "sm90a_al_w4_s4_p2_ws|--arch sm_90a --aligned --num-warps 4 --num-stages 4 --programs-per-cta 2 --warp-specialize"
  "sm90a_precise|--arch sm_90a --aligned --precise-math"
)
# Tensor-core tiles for the kernels with BLOCK_M/BLOCK_N/BLOCK_K (matmuls): the schedules
# (pipelined mma.sync, wgmma, rings, TMA, clusters, ping-pong) need them.
unit="--one stride_ak --one stride_bn --one stride_cn"
tile4="$unit -D BLOCK_M=128 -D BLOCK_N=128 -D BLOCK_K=64"
tile8="$unit -D BLOCK_M=128 -D BLOCK_N=256 -D BLOCK_K=64"
mm_configs=(
  "mm_sm80_s3|--arch sm_80 --aligned --num-warps 4 --num-stages 3 $tile4"
  "mm_sm90a_w4_s4|--arch sm_90a --aligned --num-warps 4 --num-stages 4 $tile4"
  "mm_sm90a_w8_s4|--arch sm_90a --aligned --num-warps 8 --num-stages 4 $tile8"
  "mm_sm90a_w8_s4_ws|--arch sm_90a --aligned --num-warps 8 --num-stages 4 --warp-specialize $tile8"
  "mm_sm90a_w8_s4_ws_tma|--arch sm_90a --aligned --num-warps 8 --num-stages 4 --warp-specialize --tma $tile8"
  "mm_sm90a_w4_s3_p2|--arch sm_90a --aligned --num-warps 4 --num-stages 3 --programs-per-cta 2 $tile4"
  "mm_sm90a_w4_s3_p2_ws|--arch sm_90a --aligned --num-warps 4 --num-stages 3 --programs-per-cta 2 --warp-specialize $tile4"
  "mm_sm90a_w4_s3_p2_ws_tma|--arch sm_90a --aligned --num-warps 4 --num-stages 3 --programs-per-cta 2 --warp-specialize --tma $tile4"
  "mm_sm90a_w4_s4_ws_tma|--arch sm_90a --aligned --num-warps 4 --num-stages 4 --warp-specialize --tma $tile4"
)
# The attention forwards' schedules at 128x128 tiles of 8 warps (two warpgroups): stages
# signalled by mbarriers, warpgroup turns, producer warps, the rotated loop; two query blocks a
# program (PAIRED), also at 64x64 with producer warps in 128 registers.
att="--arch sm_90a --aligned --num-warps 8 --num-stages 2 -D BLOCK_M=128 -D BLOCK_N=128 -D HEAD_DIM=128"
att_configs=(
  "att_w8_s2|$att"
  "att_w8_s2_mb|$att --stage-mbarriers"
  "att_w8_s2_mb_wt|$att --stage-mbarriers --warpgroup-turns"
  "att_w8_s2_ws_cr232|$att --warp-specialize --consumer-registers 232"
  "att_w8_s2_ws_wt|$att --warp-specialize --warpgroup-turns"
  "att_w8_s2_ws_cr232_pair|$att --warp-specialize --consumer-registers 232 -D PAIRED=1"
  "att_w8_s2_mb_pair|$att --stage-mbarriers -D PAIRED=1"
  "att_w4_s2_r128_ws_cr232_pair|--arch sm_90a --aligned --num-warps 4 --num-stages 2 -D BLOCK_M=64 -D BLOCK_N=64 -D HEAD_DIM=128 --max-registers 128 --warp-specialize --consumer-registers 232 -D PAIRED=1"
)
listing=$("$tessel" list)
kernels=$(awk '/^[a-z]/{sec=$1} sec=="kernels" && /^  [a-z]/{print $1}' <<< "$listing")
matmuls=$(awk '/^[a-z]/{sec=$1} sec=="kernels" && /^  [a-z]/{k=$1} sec=="kernels" && /meta:.*BLOCK_K=.*BLOCK_M=.*BLOCK_N=/{print k}' <<< "$listing")
jobs=()
for k in $kernels; do
  for c in "${configs[@]}"; do jobs+=("$k|$c"); done
done
for k in $matmuls; do
  for c in "${mm_configs[@]}"; do jobs+=("$k|$c"); done
done
for k in attention_fwd attention_fwd_bf16; do
  for c in "${att_configs[@]}"; do jobs+=("$k|$c"); done
  for c in "${att_configs[@]}"; do jobs+=("$k|${c/|/_ov|} -D OVERLAP=1"); done
done
printf '%s\n' "${jobs[@]}" | xargs -P "$(nproc)" -I{} bash -c '
  IFS="|" read -r k name flags <<< "{}"
  f="'"$out"'/$k.$name.'"$stage"'"
  # shellcheck disable=SC2086
  "'"$tessel"'" compile "$k" --emit '"$stage"' $flags > "$f" 2>&1 || echo "exit $?" >> "$f"
'
echo "$(ls "$out" | wc -l) files in $out"
