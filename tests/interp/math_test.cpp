// Interpreter: float math in f32 (unary functions, fma, min/max with NaN, comparisons, select).
#include "interp_test_util.hpp"
#include "tessel/interp/float_formats.hpp"

using namespace interp_test;

namespace {

struct UnaryCase {
  OpKind kind;
  double (*ref_double)(double);
  float (*ref_float)(float);
  float lo, hi;  // input domain
};

double sigmoid_d(double x) { return 1.0 / (1.0 + std::exp(-x)); }
float sigmoid_f(float x) { return 1.0f / (1.0f + std::exp(-x)); }
double rsqrt_d(double x) { return 1.0 / std::sqrt(x); }
float rsqrt_f(float x) { return 1.0f / std::sqrt(x); }

}  // namespace

TEST_CASE("every unary float op in f32 equals the double std:: function rounded to f32") {
  const UnaryCase cases[] = {
      {OpKind::Exp, [](double x) { return std::exp(x); }, [](float x) { return std::exp(x); }, -80, 80},
      {OpKind::Exp2, [](double x) { return std::exp2(x); }, [](float x) { return std::exp2(x); }, -120, 120},
      {OpKind::Log, [](double x) { return std::log(x); }, [](float x) { return std::log(x); }, 1e-6f, 1e6f},
      {OpKind::Log2, [](double x) { return std::log2(x); }, [](float x) { return std::log2(x); }, 1e-6f, 1e6f},
      {OpKind::Sqrt, [](double x) { return std::sqrt(x); }, [](float x) { return std::sqrt(x); }, 0, 1e6f},
      {OpKind::Rsqrt, rsqrt_d, rsqrt_f, 1e-3f, 1e6f},
      {OpKind::Sin, [](double x) { return std::sin(x); }, [](float x) { return std::sin(x); }, -10, 10},
      {OpKind::Cos, [](double x) { return std::cos(x); }, [](float x) { return std::cos(x); }, -10, 10},
      {OpKind::Tanh, [](double x) { return std::tanh(x); }, [](float x) { return std::tanh(x); }, -6, 6},
      {OpKind::Sigmoid, sigmoid_d, sigmoid_f, -20, 20},
      {OpKind::Erf, [](double x) { return std::erf(x); }, [](float x) { return std::erf(x); }, -4, 4},
      {OpKind::Floor, [](double x) { return std::floor(x); }, [](float x) { return std::floor(x); }, -1e3f, 1e3f},
      {OpKind::Ceil, [](double x) { return std::ceil(x); }, [](float x) { return std::ceil(x); }, -1e3f, 1e3f},
      {OpKind::Neg, [](double x) { return -x; }, [](float x) { return -x; }, -1e3f, 1e3f},
      {OpKind::Abs, [](double x) { return std::fabs(x); }, [](float x) { return std::fabs(x); }, -1e3f, 1e3f},
  };
  std::mt19937 rng(2024);
  const int64_t n = 777;
  for (const auto& c : cases) {
    CAPTURE(name_of(c.kind));
    Function f("unary");
    build_map_kernel(f, {Scalar::f32}, Scalar::f32,
                     [&](Builder& b, const std::vector<Value*>& v) { return b.value(c.kind, {v[0]}); }, 128);
    std::uniform_real_distribution<float> dist(c.lo, c.hi);
    std::vector<float> x(n);
    for (auto& e : x) e = dist(rng);
    std::vector<float> out = run_map<float>(f, std::vector<std::vector<float>>{x}, 128);
    int64_t inexact = 0, far = 0;
    for (int64_t i = 0; i < n; ++i) {
      inexact += !(out[i] == static_cast<float>(c.ref_double(x[i])));
      far += ulp_distance(out[i], c.ref_float(x[i])) > 2;
    }
    CHECK(inexact == 0);
    CHECK(far == 0);
  }
}

TEST_CASE("f32 binary arithmetic rounds to f32 after each op") {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-50.f, 50.f);
  const int64_t n = 513;
  std::vector<float> x(n), y(n);
  for (auto& e : x) e = dist(rng);
  for (auto& e : y) e = dist(rng);
  y[3] = 0.0f;  // x / 0 -> inf, fmod(x, 0) -> NaN
  const std::pair<OpKind, float (*)(float, float)> ops[] = {
      {OpKind::Add, [](float a, float b) { return a + b; }},
      {OpKind::Sub, [](float a, float b) { return a - b; }},
      {OpKind::Mul, [](float a, float b) { return a * b; }},
      {OpKind::Div, [](float a, float b) { return a / b; }},
      {OpKind::Rem, [](float a, float b) { return std::fmod(a, b); }},
      {OpKind::Min, [](float a, float b) { return std::fmin(a, b); }},
      {OpKind::Max, [](float a, float b) { return std::fmax(a, b); }},
  };
  for (const auto& [k, ref] : ops) {
    CAPTURE(name_of(k));
    Function f("bin");
    build_map_kernel(f, {Scalar::f32, Scalar::f32}, Scalar::f32,
                     [k = k](Builder& b, const std::vector<Value*>& v) { return bin(b, k, v[0], v[1]); }, 64);
    std::vector<float> out = run_map<float>(f, std::vector<std::vector<float>>{x, y}, 64);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) {
      float want = ref(x[i], y[i]);
      bad += !(out[i] == want || (std::isnan(out[i]) && std::isnan(want)));
    }
    CHECK(bad == 0);
  }
}

TEST_CASE("min and max propagate NaN; comparisons with NaN are false except cmp_ne") {
  const float nan = std::nanf("");
  std::vector<float> x = {nan, 1.0f, nan, -2.0f, 3.0f};
  std::vector<float> y = {1.0f, nan, nan, 5.0f, 3.0f};
  auto run_bin = [&](OpKind k) {
    Function f("nan");
    build_map_kernel(f, {Scalar::f32, Scalar::f32}, Scalar::f32,
                     [k](Builder& b, const std::vector<Value*>& v) { return bin(b, k, v[0], v[1]); }, 8);
    return run_map<float>(f, std::vector<std::vector<float>>{x, y}, 8);
  };
  auto mn = run_bin(OpKind::Min), mx = run_bin(OpKind::Max);
  for (int i = 0; i < 3; ++i) {
    CHECK(std::isnan(mn[i]));
    CHECK(std::isnan(mx[i]));
  }
  CHECK(mn[3] == -2.0f);
  CHECK(mx[3] == 5.0f);

  const std::pair<OpKind, bool (*)(float, float)> cmps[] = {
      {OpKind::CmpEq, [](float a, float b) { return a == b; }}, {OpKind::CmpNe, [](float a, float b) { return a != b; }},
      {OpKind::CmpLt, [](float a, float b) { return a < b; }},  {OpKind::CmpLe, [](float a, float b) { return a <= b; }},
      {OpKind::CmpGt, [](float a, float b) { return a > b; }},  {OpKind::CmpGe, [](float a, float b) { return a >= b; }},
  };
  for (const auto& [k, ref] : cmps) {
    CAPTURE(name_of(k));
    Function f("cmp");
    // store select(cmp, 1.0, -1.0) so the i1 result is visible as a float
    build_map_kernel(f, {Scalar::f32, Scalar::f32}, Scalar::f32,
                     [k = k](Builder& b, const std::vector<Value*>& v) {
                       Type t = v[0]->type;
                       return b.value(OpKind::Select, {bin(b, k, v[0], v[1]), b.const_float(1.0, t),
                                                       b.const_float(-1.0, t)});
                     },
                     8);
    auto out = run_map<float>(f, std::vector<std::vector<float>>{x, y}, 8);
    for (size_t i = 0; i < x.size(); ++i) CHECK(out[i] == (ref(x[i], y[i]) ? 1.0f : -1.0f));
  }
}

TEST_CASE("f32 fma rounds once") {
  // a*b+c where rounding a*b first loses the answer: (1+2^-12)^2 - (1+2^-11) = 2^-24.
  std::vector<float> a = {1.0f + 0x1p-12f, 3.0f, -1.5f};
  std::vector<float> b = {1.0f + 0x1p-12f, 0.1f, 2.25f};
  std::vector<float> c = {-(1.0f + 0x1p-11f), -0.3f, 7.0f};
  Function f("fma");
  build_map_kernel(f, {Scalar::f32, Scalar::f32, Scalar::f32}, Scalar::f32,
                   [](Builder& bb, const std::vector<Value*>& v) { return bb.value(OpKind::Fma, {v[0], v[1], v[2]}); },
                   4);
  auto out = run_map<float>(f, std::vector<std::vector<float>>{a, b, c}, 4);
  CHECK(out[0] == 0x1p-24f);
  for (int i = 0; i < 3; ++i) CHECK(out[i] == std::fma(a[i], b[i], c[i]));
}

TEST_CASE("f16 and bf16 arithmetic round to their format after every op") {
  std::mt19937 rng(8);
  std::uniform_real_distribution<double> dist(-300.0, 300.0);
  for (Scalar s : {Scalar::f16, Scalar::bf16}) {
    CAPTURE(name_of(s));
    auto to_bits = s == Scalar::f16 ? f16_from_double : bf16_from_double;
    auto from_bits = s == Scalar::f16 ? f16_to_double : bf16_to_double;
    std::vector<uint16_t> x(300), y(300);
    for (auto& e : x) e = to_bits(dist(rng));
    for (auto& e : y) e = to_bits(dist(rng) / 64);
    // (x * y + x) / y: three roundings, each to the format
    Function f("half");
    build_map_kernel(f, {s, s}, s,
                     [](Builder& b, const std::vector<Value*>& v) {
                       return bin(b, OpKind::Div, bin(b, OpKind::Add, bin(b, OpKind::Mul, v[0], v[1]), v[0]), v[1]);
                     },
                     128);
    auto out = run_map<uint16_t>(f, std::vector<std::vector<uint16_t>>{x, y}, 128);
    int64_t bad = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      double a = from_bits(x[i]), b = from_bits(y[i]);
      double p = from_bits(to_bits(a * b));
      double q = from_bits(to_bits(p + a));
      bad += out[i] != to_bits(q / b);
    }
    CHECK(bad == 0);
  }
}
