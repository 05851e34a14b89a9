// canonicalize: float folding rounds to the dtype, and stays away from what it cannot round.
#include <cmath>
#include <limits>

#include "pass_test_util.hpp"

using namespace passtest;

namespace {

double random_float(double lo, double hi) {
  std::uniform_real_distribution<double> d(lo, hi);
  double v = d(rng());
  return v == 0 ? 0.375 : v;
}

double f32(double v) { return static_cast<double>(static_cast<float>(v)); }

}  // namespace

TEST_CASE("f32 arithmetic folds rounded through float, f64 through double") {
  int differs = 0;
  for (int i = 0; i < 200; ++i) {
    float a = static_cast<float>(random_float(-1e3, 1e3));
    float b = static_cast<float>(random_float(-1e3, 1e3));
    CHECK(fold_float_binary(OpKind::Add, Scalar::f32, a, b) == static_cast<double>(a + b));
    CHECK(fold_float_binary(OpKind::Sub, Scalar::f32, a, b) == static_cast<double>(a - b));
    CHECK(fold_float_binary(OpKind::Mul, Scalar::f32, a, b) == static_cast<double>(a * b));
    CHECK(fold_float_binary(OpKind::Div, Scalar::f32, a, b) == static_cast<double>(a / b));
    CHECK(fold_float_binary(OpKind::Min, Scalar::f32, a, b) == static_cast<double>(std::min(a, b)));
    CHECK(fold_float_binary(OpKind::Max, Scalar::f32, a, b) == static_cast<double>(std::max(a, b)));
    double da = a, db = b;
    CHECK(fold_float_binary(OpKind::Mul, Scalar::f64, da, db) == da * db);
    CHECK(fold_float_binary(OpKind::Div, Scalar::f64, da, db) == da / db);
    if (static_cast<double>(a / b) != da / db) ++differs;
  }
  CHECK(differs > 100);  // the f32 checks above really are about float rounding
}

TEST_CASE("f32 constants are read as the float the target materialises") {
  // 0.1 and 0.2 are not floats: the target computes 0.1f + 0.2f.
  auto r = fold_float_binary(OpKind::Add, Scalar::f32, 0.1, 0.2);
  REQUIRE(r);
  CHECK(*r == static_cast<double>(0.1f + 0.2f));
  CHECK(*r != 0.1 + 0.2);
  CHECK(fold_float_binary(OpKind::Add, Scalar::f64, 0.1, 0.2) == 0.1 + 0.2);
  CHECK(fold_float_binary(OpKind::Add, Scalar::f32, 1.0, 1e-8) == 1.0);  // absorbed in f32
  CHECK(fold_float_binary(OpKind::Add, Scalar::f32, 3e38, 3e38) == std::numeric_limits<double>::infinity());
}

TEST_CASE("float division by zero and NaN are not folded") {
  CHECK_FALSE(fold_float_binary(OpKind::Div, Scalar::f32, 2.5, 0.0));
  CHECK_FALSE(fold_float_binary(OpKind::Div, Scalar::f64, -2.5, -0.0));
  double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK_FALSE(fold_float_binary(OpKind::Add, Scalar::f32, nan, 1.0));
  CHECK_FALSE(fold_float_binary(OpKind::CmpNe, Scalar::f32, nan, 1.0));
  CHECK_FALSE(fold_float_binary(OpKind::Mul, Scalar::f32, 0.0, std::numeric_limits<double>::infinity()));
  // min/max of zeros of either sign depend on the min convention.
  CHECK_FALSE(fold_float_binary(OpKind::Min, Scalar::f32, 0.0, -0.0));
  // float rem is fmod or floor-mod depending on the front end.
  CHECK_FALSE(fold_float_binary(OpKind::Rem, Scalar::f32, 7.5, 2.0));
}

TEST_CASE("f16 and bf16 fold only exactly representable results") {
  CHECK(fold_float_binary(OpKind::Add, Scalar::f16, 1.5, 2.25) == 3.75);
  CHECK(fold_float_binary(OpKind::Mul, Scalar::bf16, -1.5, 2.5) == -3.75);
  CHECK(fold_float_binary(OpKind::Div, Scalar::f16, 3.0, 4.0) == 0.75);
  // 1 + 2^-11 needs 12 significant bits: f16 would round, so no fold.
  CHECK_FALSE(fold_float_binary(OpKind::Add, Scalar::f16, 1.0, std::ldexp(1.0, -11)));
  CHECK_FALSE(fold_float_binary(OpKind::Div, Scalar::f16, 1.0, 3.0));
  CHECK_FALSE(fold_float_binary(OpKind::Mul, Scalar::f16, 300.0, 300.0));  // 90000 > f16 max
  CHECK_FALSE(fold_float_binary(OpKind::Add, Scalar::bf16, 1.0, std::ldexp(1.0, -8)));
  // 0.1 is not an f16: we do not guess how the target rounds the constant.
  CHECK_FALSE(fold_float_binary(OpKind::Add, Scalar::f16, 0.1, 1.0));
  // Comparisons of representable values are exact.
  Kernel k;
  Op& st = k.sink(k.op(OpKind::CmpLt, {k.c_float(1.5, Scalar::f16), k.c_float(2.0, Scalar::f16)}));
  canonicalize(k.f);
  CHECK(folded_int(stored(st)) == 1);
}

TEST_CASE("float comparisons fold") {
  for (int i = 0; i < 100; ++i) {
    float a = static_cast<float>(random_float(-50, 50));
    float b = i % 5 == 0 ? a : static_cast<float>(random_float(-50, 50));
    auto cmp = [&](OpKind k) {
      Kernel kn;
      Op& st = kn.sink(kn.op(k, {kn.c_float(a, Scalar::f32), kn.c_float(b, Scalar::f32)}));
      canonicalize(kn.f);
      return folded_int(stored(st));
    };
    CHECK(cmp(OpKind::CmpEq) == int64_t{a == b});
    CHECK(cmp(OpKind::CmpNe) == int64_t{a != b});
    CHECK(cmp(OpKind::CmpLt) == int64_t{a < b});
    CHECK(cmp(OpKind::CmpLe) == int64_t{a <= b});
    CHECK(cmp(OpKind::CmpGt) == int64_t{a > b});
    CHECK(cmp(OpKind::CmpGe) == int64_t{a >= b});
  }
}

TEST_CASE("exact unary float ops fold; transcendental ones do not") {
  auto unary = [](OpKind k, Scalar s, double a) {
    Kernel kn;
    Op& st = kn.sink(kn.op(k, {kn.c_float(a, s)}));
    canonicalize(kn.f);
    return folded_float(stored(st));
  };
  CHECK(unary(OpKind::Neg, Scalar::f32, 2.75) == -2.75);
  CHECK(unary(OpKind::Abs, Scalar::f64, -6.125) == 6.125);
  CHECK(unary(OpKind::Floor, Scalar::f32, -2.5) == -3.0);
  CHECK(unary(OpKind::Ceil, Scalar::f16, 2.25) == 3.0);
  CHECK(unary(OpKind::Neg, Scalar::f32, 0.1) == -f32(0.1));
  CHECK_FALSE(unary(OpKind::Exp, Scalar::f32, 1.5));
  CHECK_FALSE(unary(OpKind::Sqrt, Scalar::f32, 2.0));
  CHECK_FALSE(unary(OpKind::Tanh, Scalar::f32, 0.5));
}

TEST_CASE("fma folds with one f32 rounding") {
  for (int i = 0; i < 50; ++i) {
    float a = static_cast<float>(random_float(-10, 10)), b = static_cast<float>(random_float(-10, 10));
    float c = static_cast<float>(random_float(-10, 10));
    Kernel k;
    Op& st = k.sink(k.b.value(OpKind::Fma, {k.c_float(a, Scalar::f32), k.c_float(b, Scalar::f32),
                                            k.c_float(c, Scalar::f32)}));
    canonicalize(k.f);
    CHECK(folded_float(stored(st)) == static_cast<double>(std::fma(a, b, c)));
  }
}
