#!/usr/bin/env bash
# Builds tessel and runs every test (unit, golden-text, interpreter, CLI; GPU tests when a
# driver is present, else ctest lists their entries (*_gpu) as skipped, never as passed;
# TESSEL_TEST_REQUIRE_GPU=1 makes every such skip a failure).
# --sanitize: then the CPU tests again under AddressSanitizer + UBSan (scripts/test-sanitize.sh), as
# CI (.ci/run) does after this script.
set -euo pipefail
cd "$(dirname "$0")/.."
sanitize=0
for a in "$@"; do
  case "$a" in
    --sanitize) sanitize=1 ;;
    *) echo "usage: scripts/test.sh [--sanitize]" >&2; exit 2 ;;
  esac
done
scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)"
if [ "$sanitize" = 1 ]; then
  scripts/test-sanitize.sh
fi
