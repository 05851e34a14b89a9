#!/usr/bin/env bash
# Builds tessel and runs every test (unit, golden-text, interpreter, CLI; GPU tests when a
# driver is present, else ctest lists their entries (*_gpu) as skipped, never as passed;
# TESSEL_TEST_REQUIRE_GPU=1 makes every such skip a failure).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)"
