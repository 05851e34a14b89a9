// Result checking and random inputs shared by every sample.
#include <fmt/format.h>

#include <cmath>
#include <new>
#include <random>

#include "tessel/samples/sample.hpp"

namespace tessel::samples {

RunResult compare(std::span<const float> out, std::span<const double> ref, double atol, double rtol) {
  RunResult r;
  r.atol = atol;
  r.rtol = rtol;
  r.checked = static_cast<int64_t>(ref.size());
  if (out.size() != ref.size()) {
    r.mismatches = r.checked;
    r.first_mismatch = fmt::format("output has {} elements, expected {}", out.size(), ref.size());
    return r;
  }
  for (size_t i = 0; i < ref.size(); ++i) {
    double err = std::fabs(static_cast<double>(out[i]) - ref[i]);
    bool ok = err <= atol + rtol * std::fabs(ref[i]);  // false for NaN
    if (!std::isnan(err)) r.max_abs_err = std::max(r.max_abs_err, err);
    if (!ok) {
      if (r.mismatches == 0) r.first_mismatch = fmt::format("out[{}] = {}, expected {}", i, out[i], ref[i]);
      ++r.mismatches;
      if (std::isnan(err)) r.max_abs_err = INFINITY;
    }
  }
  r.verified = r.mismatches == 0 && r.checked > 0;
  return r;
}

std::vector<float> random_floats(size_t n, uint64_t seed, float lo, float hi) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v;
  try {
    v.resize(n);
  } catch (const std::bad_alloc&) {  // the first and largest allocation of most samples: say its size
    throw UserError(fmt::format("cannot allocate {} bytes for {} random inputs: out of host memory (expected a "
                                "problem size that fits this machine's memory)",
                                n * sizeof(float), n));
  }
  for (auto& x : v) x = dist(gen);
  return v;
}

}  // namespace tessel::samples
