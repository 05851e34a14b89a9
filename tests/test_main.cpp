// doctest's main for every test executable. A run with no failure that skipped GPU cases exits
// 77 (ctest's SKIP_RETURN_CODE for the "gpu" entries), so a skip is never counted as a pass.
// TESSEL_TEST_REQUIRE_GPU=1 also sets TESSEL_REQUIRE_GPU=1, which makes the library refuse to
// fall back to the CPU interpreter.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <stdlib.h>

#include <cstdio>

#include "common/gpu_gate.hpp"

int main(int argc, char** argv) {
  if (tessel_test::require_gpu()) ::setenv("TESSEL_REQUIRE_GPU", "1", 1);
  doctest::Context ctx(argc, argv);
  const int rc = ctx.run();
  if (ctx.shouldExit() || rc != 0) return rc;
  if (int n = tessel_test::skipped_gpu_cases(); n > 0) {
    std::printf("%d GPU check(s) SKIPPED (no usable GPU); exit 77\n", n);
    return 77;
  }
  return 0;
}
