// Error of the tanh / erf polynomials the lowering emits, measured on the CPU mirrors.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

#include "tessel/lowering/fast_math.hpp"

using namespace tessel::lowering::fast_math;

namespace {
double ulp_of(double ref) {
  float r = static_cast<float>(ref);
  float next = std::nextafter(std::fabs(r), INFINITY);
  return static_cast<double>(next) - std::fabs(static_cast<double>(r));
}

template <class F, class R>
double max_ulp(F approx, R exact, float lo, float hi, double* worst_x) {
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> dist(lo, hi);
  double worst = 0;
  auto probe = [&](float x) {
    double ref = exact(static_cast<double>(x));
    double err = std::fabs(static_cast<double>(approx(x)) - ref) / ulp_of(ref);
    if (err > worst) {
      worst = err;
      *worst_x = x;
    }
  };
  for (int i = 0; i < 200000; ++i) probe(dist(rng));
  for (float x = lo; x < hi; x += (hi - lo) / 20000) probe(x);
  return worst;
}
}  // namespace

TEST_CASE("erf polynomial: under 2 ulp over the f32 range, odd, saturating, NaN-preserving") {
  double wx = 0;
  double e = max_ulp(erf_ref, [](double x) { return std::erf(x); }, -6.0f, 6.0f, &wx);
  CAPTURE(wx);
  MESSAGE("erf: max " << e << " ulp at " << wx);
  CHECK(e > 0.5);  // the measurement sees real rounding error
  CHECK(e < 2.0);
  double es = max_ulp(erf_ref, [](double x) { return std::erf(x); }, -1e-3f, 1e-3f, &wx);
  CHECK(es < 2.0);
  CHECK(erf_ref(10.0f) == 1.0f);
  CHECK(erf_ref(-10.0f) == -1.0f);
  CHECK(erf_ref(INFINITY) == 1.0f);
  CHECK(erf_ref(0.37f) == -erf_ref(-0.37f));
  CHECK(std::isnan(erf_ref(NAN)));
  CHECK(erf_ref(0.0f) == 0.0f);
}

TEST_CASE("tanh polynomial + exp: under 3 ulp over the f32 range") {
  double wx = 0;
  double e = max_ulp(tanh_ref, [](double x) { return std::tanh(x); }, -12.0f, 12.0f, &wx);
  CAPTURE(wx);
  MESSAGE("tanh: max " << e << " ulp at " << wx);
  CHECK(e > 0.5);
  CHECK(e < 3.0);
  double es = max_ulp(tanh_ref, [](double x) { return std::tanh(x); }, -1e-2f, 1e-2f, &wx);
  CHECK(es < 2.0);
  CHECK(tanh_ref(50.0f) == 1.0f);
  CHECK(tanh_ref(-INFINITY) == -1.0f);
  CHECK(std::isnan(tanh_ref(NAN)));
}
