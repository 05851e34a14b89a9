// The f64 math the lowering emits, run on the CPU through a double backend, against libm.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "emit/f64_math.hpp"

namespace fm = tessel::lowering::f64_math;

namespace {

// The same steps the IR backend emits, on doubles (rint rounds half to even like cvt.rni).
struct CpuBackend {
  double c(double v) { return v; }
  int64_t ci(int64_t v) { return v; }
  double add(double x, double y) { return x + y; }
  double sub(double x, double y) { return x - y; }
  double mul(double x, double y) { return x * y; }
  double div(double x, double y) { return x / y; }
  double fma(double x, double y, double z) { return std::fma(x, y, z); }
  double rint(double x) { return std::nearbyint(x); }
  bool lt(double x, double y) { return x < y; }
  bool gt(double x, double y) { return x > y; }
  bool eq(double x, double y) { return x == y; }
  bool ieq(int64_t x, int64_t y) { return x == y; }
  bool isnan(double x) { return std::isnan(x); }
  bool lor(bool x, bool y) { return x || y; }
  double sel(bool m, double x, double y) { return m ? x : y; }
  int64_t isel(bool m, int64_t x, int64_t y) { return m ? x : y; }
  int64_t to_int(double x) { return static_cast<int64_t>(x); }
  double to_double(int64_t x) { return static_cast<double>(x); }
  int64_t iadd(int64_t x, int64_t y) { return static_cast<int64_t>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y)); }
  int64_t isub(int64_t x, int64_t y) { return static_cast<int64_t>(static_cast<uint64_t>(x) - static_cast<uint64_t>(y)); }
  int64_t iand(int64_t x, int64_t y) { return x & y; }
  int64_t ior(int64_t x, int64_t y) { return x | y; }
  int64_t shl(int64_t x, int n) { return static_cast<int64_t>(static_cast<uint64_t>(x) << n); }
  int64_t ashr(int64_t x, int n) { return x >> n; }
  double from_bits(int64_t x) { return std::bit_cast<double>(x); }
  int64_t to_bits(double x) { return std::bit_cast<int64_t>(x); }
};

double ulp_err(double got, double ref) {
  if (std::isnan(ref)) return std::isnan(got) ? 0 : 1e30;
  if (std::isinf(ref)) return got == ref ? 0 : 1e30;
  double u = std::nextafter(std::fabs(ref), INFINITY) - std::fabs(ref);
  if (u == 0) u = std::numeric_limits<double>::denorm_min();
  return std::fabs(got - ref) / u;
}

template <class F, class R>
double worst(F f, R ref, double lo, double hi, double* at, bool log_scale = false) {
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<double> dist(lo, hi);
  double w = 0;
  for (int i = 0; i < 100000; ++i) {
    double x = dist(rng);
    if (log_scale) x = std::exp2(x);
    double e = ulp_err(f(x), ref(x));
    if (e > w) {
      w = e;
      *at = x;
    }
  }
  return w;
}

CpuBackend cpu;
const double kNaN = std::nan("");
const double kInf = std::numeric_limits<double>::infinity();

}  // namespace

TEST_CASE("f64 exp and exp2: a few ulp, overflow to inf, underflow to 0, NaN kept") {
  double at = 0;
  double e = worst([](double x) { return fm::exp(cpu, x); }, [](double x) { return std::exp(x); }, -700, 700, &at);
  MESSAGE("exp: max " << e << " ulp at " << at);
  CHECK(e < 3);
  CHECK(e > 0.1);
  e = worst([](double x) { return fm::exp2(cpu, x); }, [](double x) { return std::exp2(x); }, -1000, 1000, &at);
  MESSAGE("exp2: max " << e << " ulp at " << at);
  CHECK(e < 3);
  CHECK(fm::exp(cpu, 0.0) == 1.0);
  CHECK(fm::exp(cpu, 1000.0) == INFINITY);
  CHECK(fm::exp(cpu, -kInf) == 0.0);
  CHECK(fm::exp(cpu, -1000.0) == 0.0);
  CHECK(std::isnan(fm::exp(cpu, kNaN)));
  CHECK(fm::exp2(cpu, 10.0) == 1024.0);
  for (double x : {-708.5, -720.25, -740.0, -744.4})  // subnormal results
    CHECK(ulp_err(fm::exp(cpu, x), std::exp(x)) <= 2);
  CHECK(fm::exp2(cpu, -1074.0) == std::exp2(-1074.0));  // smallest subnormal
}

TEST_CASE("f64 log and log2: a few ulp including subnormals; IEEE special cases") {
  double at = 0;
  double e = worst([](double x) { return fm::log(cpu, x); }, [](double x) { return std::log(x); }, -1070, 1020, &at, true);
  MESSAGE("log: max " << e << " ulp at " << at);
  CHECK(e < 3);
  e = worst([](double x) { return fm::log(cpu, x); }, [](double x) { return std::log(x); }, 0.5, 2.0, &at);
  CHECK(e < 3);
  e = worst([](double x) { return fm::log2(cpu, x); }, [](double x) { return std::log2(x); }, -1070, 1020, &at, true);
  MESSAGE("log2: max " << e << " ulp at " << at);
  CHECK(e < 3);
  CHECK(fm::log(cpu, 1.0) == 0.0);
  CHECK(fm::log2(cpu, 8.0) == 3.0);
  CHECK(fm::log(cpu, 0.0) == -INFINITY);
  CHECK(fm::log(cpu, kInf) == INFINITY);
  CHECK(std::isnan(fm::log(cpu, -1.0)));
  CHECK(std::isnan(fm::log2(cpu, kNaN)));
}

TEST_CASE("f64 sin and cos: a few ulp for moderate arguments") {
  double at = 0;
  double e = worst([](double x) { return fm::sincos(cpu, x, false); }, [](double x) { return std::sin(x); }, -10, 10, &at);
  MESSAGE("sin: max " << e << " ulp at " << at);
  CHECK(e < 4);
  e = worst([](double x) { return fm::sincos(cpu, x, true); }, [](double x) { return std::cos(x); }, -10, 10, &at);
  MESSAGE("cos: max " << e << " ulp at " << at);
  CHECK(e < 4);
  double big = 0;
  for (double x = 1e3; x < 1e6; x *= 1.37) big = std::max(big, std::fabs(fm::sincos(cpu, x, false) - std::sin(x)));
  CHECK(big < 1e-12);
  CHECK(fm::sincos(cpu, 0.0, true) == 1.0);
  CHECK(std::isnan(fm::sincos(cpu, kInf, false)));
  CHECK(std::isnan(fm::sincos(cpu, kNaN, true)));
}

TEST_CASE("f64 tanh and sigmoid") {
  double at = 0;
  double e = worst([](double x) { return fm::tanh(cpu, x); }, [](double x) { return std::tanh(x); }, -20, 20, &at);
  MESSAGE("tanh: max " << e << " ulp at " << at);
  CHECK(e < 4);
  e = worst([](double x) { return fm::tanh(cpu, x); }, [](double x) { return std::tanh(x); }, -0.6, 0.6, &at);
  CHECK(e < 4);
  e = worst([](double x) { return fm::sigmoid(cpu, x); }, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, -30, 30, &at);
  MESSAGE("sigmoid: max " << e << " ulp at " << at);
  CHECK(e < 4);
  CHECK(fm::tanh(cpu, 800.0) == 1.0);
  CHECK(fm::tanh(cpu, -800.0) == -1.0);
  CHECK(std::isnan(fm::tanh(cpu, kNaN)));
  CHECK(fm::sigmoid(cpu, -1000.0) == 0.0);
}
