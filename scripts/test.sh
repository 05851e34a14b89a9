#!/usr/bin/env bash
# Builds tessel and runs every test (unit, golden-text, interpreter, CLI; GPU tests when a
# driver is present, skipped with a message otherwise).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)"
