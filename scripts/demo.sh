#!/usr/bin/env bash
# The main job: build, then JIT-compile and run the fused bias+GELU+dropout sample on the GPU
# when one is present (on the CPU interpreter otherwise), checked against a host reference.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
exec build/tools/tessel/tessel run bias_gelu_dropout --size 4194304 "$@"
