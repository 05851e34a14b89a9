#!/usr/bin/env bash
# The CPU tests again, against tessel built with AddressSanitizer and UndefinedBehaviorSanitizer
# (-DTESSEL_SANITIZE=address,undefined, cmake/sanitize.cmake) into ./build-asan: any memory error,
# leak or undefined behaviour aborts the test that made it. The test code is linked with the
# sanitizers' runtimes but not instrumented, and the samples and the CLI compile at -O0, which keeps
# this build under 15 minutes on 2 cores. The libraries at -O1 with line tables keep the build
# and the run short; asserts stay on. GPU entries skip here as in scripts/test.sh; the install
# test (which builds consumer projects against an installed tree) is left to the plain build.
# The fuzzer runs TESSEL_FUZZ_SEEDS programs (default 100 here, 300 in the plain run).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1" \
      -DTESSEL_SANITIZE=address,undefined -DTESSEL_BUILD_BENCH=OFF >/dev/null
cmake --build build-asan
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TESSEL_FUZZ_SEEDS=${TESSEL_FUZZ_SEEDS:-100}
ctest --test-dir build-asan --output-on-failure -j"$(nproc)" -E '^install'
