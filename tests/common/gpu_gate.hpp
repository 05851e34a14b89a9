// How GPU test cases run or skip. A GPU case that cannot run calls skip_gpu_case(why): it says
// SKIPPED and counts the skip (the test main then exits 77, which ctest reports as skipped),
// and under TESSEL_TEST_REQUIRE_GPU=1 (the device runs) the skip is a test failure instead.
// GPU cases live in the doctest suite "gpu" so ctest runs them as their own entry.
#pragma once
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <string_view>

namespace tessel_test {

// TESSEL_TEST_REQUIRE_GPU=1: every GPU case must run; a skip or an interpreter fallback fails.
inline bool require_gpu() {
  const char* v = std::getenv("TESSEL_TEST_REQUIRE_GPU");
  return v != nullptr && *v != '\0' && std::string_view(v) != "0";
}

// GPU cases skipped in this process (the test main turns a clean run with skips into exit 77).
inline int& skipped_gpu_cases() {
  static int n = 0;
  return n;
}

// Reports that the current GPU case cannot run here, why, and returns. A failure when the GPU
// is required.
inline void skip_gpu_case(const std::string& why) {
  if (require_gpu()) {
    FAIL_CHECK("GPU case not run under TESSEL_TEST_REQUIRE_GPU=1: " << why);
    return;
  }
  ++skipped_gpu_cases();
  MESSAGE("SKIPPED: " << why);
}

}  // namespace tessel_test
