// Host-side helpers of the production programs: random inputs, poisoned outputs, checked results.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "tessel/runtime/runtime.hpp"

namespace tessel::production {

// A quiet NaN with a payload no kernel computes: an output element still holding it was never
// written.
inline constexpr uint32_t kPoison = 0x7fc0dead;

inline std::vector<float> random_floats(size_t n, uint64_t seed, float lo = -2.0f, float hi = 2.0f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

struct Check {
  bool ok = true;
  size_t mismatches = 0;
  double max_abs_err = 0;
  std::string first;  // "out[17] = 1.5, expected 2.25"
};

// |got - ref| <= atol + rtol * |ref| for the first ref.size() elements (NaN fails), and the 16
// guard elements after them (got holds ref.size() + 16) still poisoned.
inline Check compare(std::span<const float> got, std::span<const double> ref, double atol, double rtol) {
  const size_t n = ref.size();
  Check c;
  auto fail = [&](const std::string& what) {
    c.ok = false;
    if (c.mismatches++ == 0) c.first = what;
  };
  if (got.size() < n + 16) {
    fail("output shorter than n + 16 guard elements");
    return c;
  }
  for (size_t i = 0; i < n; ++i) {
    double err = std::fabs(static_cast<double>(got[i]) - ref[i]);
    if (!(err <= atol + rtol * std::fabs(ref[i])))
      fail("out[" + std::to_string(i) + "] = " + std::to_string(got[i]) + ", expected " + std::to_string(ref[i]));
    else if (err > c.max_abs_err)
      c.max_abs_err = err;
  }
  for (size_t i = n; i < n + 16; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &got[i], 4);
    if (bits != kPoison) fail("out[" + std::to_string(i) + "], past the end, was written");
  }
  return c;
}

}  // namespace tessel::production
