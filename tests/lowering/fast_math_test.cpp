// The f32 math sequences the lowering emits (fast_math.hpp), run on the CPU through a float backend
// and measured against long double libm over a dense sweep of f32 inputs and the edge cases.
//
// The backend below stands in for the PTX instructions one for one: std::exp2f for ex2.approx
// (flushing subnormal inputs and results for the .ftz form), std::log2f for lg2.approx, fmaf
// for fma.rn. What this proves is the emitted algorithm (constants, polynomials, branch bounds,
// sign and special-value handling) given exact exp2/log2; the hardware .approx error (about
// 2^-22 relative) comes on top on the GPU, where tests/interp_gpu compares with the interpreter.
//
// Bounds, in f32 ulps of the exact result (ulp of a subnormal result: 2^-149), all x:
//   tanh, erf, log: 1.5 ulp (measured: 1.29, 1.10, 1.38);  exp2, log2: 1 ulp (the stand-ins);
//   exp: 1 + 1.25 |x| ulp: t = x * f32(log2 e) is off by up to |x| (|f32(log2 e) - log2 e| +
//   2^-24 log2 e) = 1.05e-7 |x|, which 2^t turns into 1.22 |x| ulp (CUDA documents
//   2 + 1.173 |x| for __expf, its ex2 included);
//   sigmoid: 2 + 1.25 |x| ulp (the same product), and 0 where sigmoid(x) < 2^-126 and
//   2^(-x log2 e) overflows (x < -88.7).
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "emit/fast_math.hpp"

namespace fm = tessel::lowering::fast_math;

namespace {

// One f32 operation per backend call, as the IR backend emits them.
struct CpuF32Backend {
  static float flush(float x) { return std::fabs(x) < 0x1p-126f ? std::copysign(0.0f, x) : x; }
  float c(float v) { return v; }
  float add(float x, float y) { return x + y; }
  float sub(float x, float y) { return x - y; }
  float mul(float x, float y) { return x * y; }
  float div(float x, float y) { return x / y; }
  float fma(float x, float y, float z) { return std::fmaf(x, y, z); }
  float abs(float x) { return std::bit_cast<float>(std::bit_cast<uint32_t>(x) & 0x7fffffffu); }
  float copysign(float m, float s) {
    return std::bit_cast<float>((std::bit_cast<uint32_t>(m) & 0x7fffffffu) | (std::bit_cast<uint32_t>(s) & 0x80000000u));
  }
  // llvm.minimum: NaN if either operand is NaN; -0 below +0.
  float minimum(float x, float y) {
    if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<float>::quiet_NaN();
    if (x == y) return std::signbit(x) ? x : y;
    return x < y ? x : y;
  }
  float ex2(float x) { return std::exp2f(x); }
  float ex2_ftz(float x) { return flush(std::exp2f(flush(x))); }
  float lg2(float x) { return std::log2f(x); }
  bool lt(float x, float y) { return x < y; }
  float sel(bool m, float x, float y) { return m ? x : y; }
};

CpuF32Backend cpu;
const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

// The spacing of f32 values at |r| (2^-149 below the normal range).
long double f32_ulp_at(long double r) {
  long double a = std::fabs(r);
  if (a < 0x1p-126L) return 0x1p-149L;
  int e = 0;
  std::frexp(a, &e);  // a = m 2^e, m in [0.5, 1)
  return std::ldexp(1.0L, e - 24);
}

// |got - ref| in f32 ulps of ref. NaN, infinities and results that overflow f32 must match
// exactly (else the error is infinite); `flush_ok` accepts 0 for references below 2^-126.
double ulp_error(float got, long double ref, bool flush_ok = false) {
  const double bad = std::numeric_limits<double>::infinity();
  if (std::isnan(ref)) return std::isnan(got) ? 0 : bad;
  if (std::isnan(got)) return bad;
  if (std::fabs(ref) >= 0x1.ffffffp127L) return got == std::copysign(kInf, static_cast<float>(ref)) ? 0 : bad;
  if (std::isinf(got)) return bad;
  if (flush_ok && got == 0.0f && std::fabs(ref) < 0x1p-126L) return 0;
  return static_cast<double>(std::fabs(static_cast<long double>(got) - ref) / f32_ulp_at(ref));
}

// Every 997th positive f32 bit pattern (about 8400 per binade) with its negation, every f32
// within 2^14 ulps of each +-bound, and the edge cases.
std::vector<float> sweep(std::initializer_list<float> bounds) {
  std::vector<float> xs;
  for (uint32_t bits = 0; bits < 0x7f800000u; bits += 997) {
    float x = std::bit_cast<float>(bits);
    xs.push_back(x);
    xs.push_back(-x);
  }
  for (float b : bounds) {
    uint32_t c = std::bit_cast<uint32_t>(b);
    for (uint32_t d = c - (1u << 14); d <= c + (1u << 14); ++d) {
      xs.push_back(std::bit_cast<float>(d));
      xs.push_back(-std::bit_cast<float>(d));
    }
  }
  for (float x : {0.0f, -0.0f, 0x1p-149f, -0x1p-149f, 0x1p-126f, -0x1p-126f, 1e-30f, -1e-30f, 1e-6f, -1e-6f, 1.0f,
                  -1.0f, 10.0f, -10.0f, 100.0f, -100.0f, 1e30f, -1e30f, std::numeric_limits<float>::max(),
                  -std::numeric_limits<float>::max(), kInf, -kInf, kNaN, -kNaN})
    xs.push_back(x);
  return xs;
}

struct Sweep {
  double worst = 0;       // the largest error seen, in ulp
  float worst_at = 0;     // where
  int64_t over = 0;       // inputs past their bound
  float first_over = 0;   // the first of them
  double first_over_err = 0;
};

// Runs f over xs against ref, each within bound(x) ulp.
Sweep measure(const std::vector<float>& xs, const std::function<float(float)>& f,
              const std::function<long double(long double)>& ref, const std::function<double(float)>& bound,
              bool flush_ok = false) {
  Sweep s;
  for (float x : xs) {
    double e = ulp_error(f(x), ref(static_cast<long double>(x)), flush_ok);
    if (e > s.worst || std::isinf(e)) {
      s.worst = e;
      s.worst_at = x;
    }
    // NaN and infinite inputs must give the exact answer
    if (!(e <= (std::isfinite(x) ? bound(x) : 0.0))) {
      if (s.over++ == 0) {
        s.first_over = x;
        s.first_over_err = e;
      }
    }
  }
  return s;
}

void report(const char* name, const Sweep& s) {
  MESSAGE(std::string(name) << ": max " << s.worst << " ulp at " << s.worst_at << "; " << s.over << " inputs past the bound"
               << (s.over ? " (first " + std::to_string(s.first_over) + ": " + std::to_string(s.first_over_err) + " ulp)"
                          : std::string()));
  CHECK(s.over == 0);
  // the measurement sees real rounding error (a sweep comparing a function with itself would not)
  CHECK(s.worst > 0.3);
}

long double sigmoid_ref(long double x) { return 1.0L / (1.0L + std::exp(-x)); }

}  // namespace

TEST_CASE("f32 tanh as emitted: within 1.5 ulp of tanhl over the f32 range, odd, exact at the edges") {
  auto xs = sweep({fm::kTanhBound, 1e-2f});
  auto f = [](float x) { return fm::tanh(cpu, x); };
  report("tanh", measure(xs, f, [](long double x) { return std::tanh(x); }, [](float) { return 1.5; }));
  int64_t not_odd = 0;
  for (float x : xs) not_odd += !std::isnan(x) && std::bit_cast<uint32_t>(f(-x)) != (std::bit_cast<uint32_t>(f(x)) ^ 0x80000000u);
  CHECK(not_odd == 0);
  CHECK(std::bit_cast<uint32_t>(f(0.0f)) == 0u);
  CHECK(std::bit_cast<uint32_t>(f(-0.0f)) == 0x80000000u);  // tanh(-0) = -0
  CHECK(f(0x1p-149f) == 0x1p-149f);
  CHECK(f(1e-30f) == 1e-30f);
  CHECK(f(50.0f) == 1.0f);
  CHECK(f(-kInf) == -1.0f);
  CHECK(f(kInf) == 1.0f);
  CHECK(std::isnan(f(kNaN)));
}

TEST_CASE("f32 erf as emitted: within 1.5 ulp of erfl over the f32 range, odd, saturating") {
  auto xs = sweep({1.0f, fm::kErfBound, 1e-3f});
  auto f = [](float x) { return fm::erf(cpu, x); };
  report("erf", measure(xs, f, [](long double x) { return std::erf(x); }, [](float) { return 1.5; }));
  int64_t not_odd = 0;
  for (float x : xs) not_odd += !std::isnan(x) && std::bit_cast<uint32_t>(f(-x)) != (std::bit_cast<uint32_t>(f(x)) ^ 0x80000000u);
  CHECK(not_odd == 0);
  CHECK(std::bit_cast<uint32_t>(f(-0.0f)) == 0x80000000u);
  CHECK(f(10.0f) == 1.0f);
  CHECK(f(-10.0f) == -1.0f);
  CHECK(f(kInf) == 1.0f);
  CHECK(std::isnan(f(kNaN)));
  CHECK(std::isnan(f(-kNaN)));
}

TEST_CASE("f32 sigmoid as emitted: within 2 + 1.25|x| ulp of 1/(1+expl(-x)); 0 once 2^(-x log2 e) overflows") {
  auto xs = sweep({-87.0f, 20.0f});
  auto f = [](float x) { return fm::sigmoid(cpu, x); };
  report("sigmoid", measure(xs, f, sigmoid_ref, [](float x) { return 2.0 + 1.25 * std::fabs(x); }, true));
  CHECK(f(0.0f) == 0.5f);
  CHECK(f(100.0f) == 1.0f);
  CHECK(f(kInf) == 1.0f);
  CHECK(f(-kInf) == 0.0f);
  CHECK(f(-100.0f) == 0.0f);
  CHECK(std::isnan(f(kNaN)));
}

TEST_CASE("f32 exp and exp2 as emitted: exp within 1 + 1.25|x| ulp of expl, exp2 within 1 ulp of exp2l; results "
          "below 2^-126 flushed to 0") {
  auto xs = sweep({-87.0f, 88.0f});
  report("exp", measure(xs, [](float x) { return fm::exp(cpu, x); }, [](long double x) { return std::exp(x); },
                        [](float x) { return 1.0 + 1.25 * std::fabs(x); }, true));
  report("exp2", measure(xs, [](float x) { return fm::exp2(cpu, x); }, [](long double x) { return std::exp2(x); },
                         [](float) { return 1.0; }, true));
  CHECK(fm::exp(cpu, 0.0f) == 1.0f);
  CHECK(fm::exp(cpu, 89.0f) == kInf);
  CHECK(fm::exp(cpu, -kInf) == 0.0f);
  CHECK(fm::exp2(cpu, -126.0f) == 0x1p-126f);  // the smallest normal result stays
  CHECK(fm::exp2(cpu, -127.0f) == 0.0f);       // .ftz: a subnormal result is flushed to 0
  CHECK(fm::exp(cpu, -88.0f) == 0.0f);         // e^-88 < 2^-126
  CHECK(std::isnan(fm::exp(cpu, kNaN)));
}

TEST_CASE("f32 log and log2 as emitted: log within 1.5 ulp of logl, log2 within 1 ulp; IEEE special cases") {
  std::vector<float> xs;
  for (float x : sweep({1.0f, 2.0f})) xs.push_back(x);
  report("log", measure(xs, [](float x) { return fm::log(cpu, x); }, [](long double x) { return std::log(x); },
                        [](float) { return 1.5; }));
  report("log2", measure(xs, [](float x) { return fm::log2(cpu, x); }, [](long double x) { return std::log2(x); },
                         [](float) { return 1.0; }));
  CHECK(fm::log(cpu, 1.0f) == 0.0f);
  CHECK(fm::log(cpu, 0.0f) == -kInf);
  CHECK(fm::log(cpu, kInf) == kInf);
  CHECK(std::isnan(fm::log(cpu, -1.0f)));
  CHECK(std::isnan(fm::log2(cpu, kNaN)));
}
