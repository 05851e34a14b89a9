// What every tutorial program shares: random inputs and a result check against a host reference.
// Standard C++ only, so the runtime-only program of tutorial 05 can use it too.
#pragma once
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <random>
#include <string>
#include <vector>

namespace tutorial {

// n floats drawn uniformly from [lo, hi), reproducibly from `seed`.
inline std::vector<float> random_floats(size_t n, unsigned seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

// True when every got[i] is within atol + rtol * |want[i]| of want[i] (NaN never is); prints
// the first mismatch and how many values differ otherwise.
inline bool check_close(const char* what, const std::vector<float>& got, const std::vector<double>& want, double atol,
                        double rtol) {
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double g = i < got.size() ? got[i] : NAN;
    if (!(std::fabs(g - want[i]) <= atol + rtol * std::fabs(want[i]))) {
      if (bad++ == 0) first = i;
    }
  }
  if (bad == 0) {
    std::printf("%-40s PASS (%zu values)\n", what, want.size());
    return true;
  }
  std::printf("%-40s FAIL: %zu of %zu values differ; first at [%zu]: got %.9g, want %.9g\n", what, bad, want.size(),
              first, first < got.size() ? double(got[first]) : NAN, want[first]);
  return false;
}

// The tests run the tutorials on the device with TESSEL_TEST_REQUIRE_GPU=1: there, running on
// the interpreter instead of the GPU is a failure, not a quiet pass.
inline bool gpu_required() {
  const char* v = std::getenv("TESSEL_TEST_REQUIRE_GPU");
  return v && std::strcmp(v, "1") == 0;
}

// A tutorial program's main: `checks` returns true when every result matched the host reference;
// any exception is reported (a CompileError names the kernel's file and line); under
// TESSEL_TEST_REQUIRE_GPU=1 (the device runs) a run that did not use the GPU fails.
template <class Checks, class OnGpu>
int run_tutorial(Checks checks, OnGpu on_gpu) {
  try {
    const bool ok = checks();
    if (gpu_required() && !on_gpu()) {
      std::printf("FAIL: TESSEL_TEST_REQUIRE_GPU=1 but this ran on the interpreter\n");
      return 1;
    }
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::printf("FAIL: %s\n", e.what());
    return 1;
  }
}

}  // namespace tutorial
