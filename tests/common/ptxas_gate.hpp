// How checks that need NVIDIA's ptxas run or skip. The one finder is tessel::rt::find_ptxas();
// a check that cannot run calls skip_ptxas_check(why): it says SKIPPED and is counted (the test
// main prints the count), and under TESSEL_TEST_REQUIRE_PTXAS=1 (CI, which has a toolkit) it is
// a test failure instead, so a lost ptxas never turns assembly checks into silent passes.
#pragma once
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <string_view>

#include "tessel/runtime/ptxas.hpp"

namespace tessel_test {

// TESSEL_TEST_REQUIRE_PTXAS=1: ptxas must be found; a skipped assembly check fails.
inline bool require_ptxas() {
  const char* v = std::getenv("TESSEL_TEST_REQUIRE_PTXAS");
  return v != nullptr && *v != '\0' && std::string_view(v) != "0";
}

// ptxas checks skipped in this process (the test main reports them).
inline int& skipped_ptxas_checks() {
  static int n = 0;
  return n;
}

// Reports that the current check cannot run without ptxas; a failure when ptxas is required.
inline void skip_ptxas_check(const std::string& what) {
  if (require_ptxas()) {
    FAIL_CHECK("ptxas not found under TESSEL_TEST_REQUIRE_PTXAS=1 (" << tessel::rt::ptxas_not_found_hint()
                                                                     << "): " << what);
    return;
  }
  ++skipped_ptxas_checks();
  MESSAGE("SKIPPED (no ptxas: " << tessel::rt::ptxas_not_found_hint() << "): " << what);
}

// The ptxas to run, or "" after reporting the skip of `what` (see skip_ptxas_check).
inline std::string ptxas_or_skip(const std::string& what) {
  std::string p = tessel::rt::find_ptxas();
  if (p.empty()) skip_ptxas_check(what);
  return p;
}

}  // namespace tessel_test
