// Double-precision exp, exp2, log, log2, sin, cos, tanh and sigmoid, written once over an
// arithmetic backend: the lowering instantiates it to emit LLVM IR, the tests to run it on
// the CPU against libm. No libdevice: range reduction plus Taylor/atanh series.
//
// A backend B provides value types V (f64), I (i64) and M (bool) and:
//   V c(double); I ci(int64_t);
//   V add, sub, mul, div (V, V); V fma(V, V, V); V rint(V);
//   M lt, gt, eq (V, V); M ieq(I, I); M isnan(V); M lor(M, M); V sel(M, V, V); I isel(M, I, I);
//   I to_int(V) (finite, in range); V to_double(I); I iadd, isub, iand, ior (I, I);
//   I shl(I, int); I ashr(I, int); V from_bits(I); I to_bits(V).
// Accuracy on the CPU mirror (tests/lowering/f64_math_test.cpp): a few ulp; sin and cos
// reduce with a two-part pi/2 and lose accuracy for |x| beyond about 1e9.
#pragma once
#include <cstdint>

namespace tessel::lowering::f64_math {

inline constexpr double kLn2Hi = 0.6931471805599453;        // ln 2 rounded
inline constexpr double kLn2Lo = 2.3190468138462996e-17;    // ln 2 - kLn2Hi
inline constexpr double kLog2e = 1.4426950408889634;
inline constexpr double kPio2Hi = 1.5707963267948966;       // pi/2 rounded
inline constexpr double kPio2Lo = 6.123233995736766e-17;    // pi/2 - kPio2Hi
inline constexpr double kTwoOverPi = 0.6366197723675814;
inline constexpr double kSqrt2 = 1.4142135623730951;

// Taylor coefficients of tanh(x)/x - 1 in t = x^2, highest power first (t^18 .. t^1).
inline constexpr double kTanhTaylor[] = {
    7.054636946400968e-08,   -1.7406618963571648e-07, 4.294911078273806e-07, -1.0597268320104654e-06,
    2.6147711512907546e-06,  -6.451689215655431e-06,  1.5918905069328964e-05, -3.927832388331683e-05,
    9.691537956929451e-05,   -0.00023912911424355248, 0.000590027440945586,   -0.0014558343870513183,
    0.003592128036572481,    -0.008863235529902197,   0.021869488536155203,   -0.05396825396825397,
    0.13333333333333333,     -0.3333333333333333};

template <class B, class V, size_t N>
V horner(B& b, const double (&k)[N], V t) {
  V p = b.c(k[0]);
  for (size_t i = 1; i < N; ++i) p = b.fma(p, t, b.c(k[i]));
  return p;
}

// e^r for |r| <= ln2/2: Taylor series to r^13 (remainder below 2^-55).
template <class B, class V>
V exp_reduced(B& b, V r) {
  static constexpr double k[] = {1.0 / 6227020800.0, 1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0,
                                 1.0 / 362880.0,     1.0 / 40320.0,     1.0 / 5040.0,     1.0 / 720.0,
                                 1.0 / 120.0,        1.0 / 24.0,        1.0 / 6.0,        0.5,
                                 1.0,                1.0};
  return horner(b, k, r);
}

// p * 2^n for n in [-2100, 2100]: two factors so each stays a normal double.
template <class B, class V, class I>
V scale_pow2(B& b, V p, I n) {
  I n1 = b.ashr(n, 1);
  I n2 = b.isub(n, n1);
  V s1 = b.from_bits(b.shl(b.iadd(n1, b.ci(1023)), 52));
  V s2 = b.from_bits(b.shl(b.iadd(n2, b.ci(1023)), 52));
  return b.mul(b.mul(p, s1), s2);
}

// Clamps x into [lo, hi]; NaN becomes 0 (the caller restores it).
template <class B, class V>
V clamp_finite(B& b, V x, double lo, double hi) {
  V y = b.sel(b.lt(x, b.c(lo)), b.c(lo), b.sel(b.gt(x, b.c(hi)), b.c(hi), x));
  return b.sel(b.isnan(x), b.c(0.0), y);
}

template <class B, class V>
V exp(B& b, V x) {
  V xs = clamp_finite(b, x, -750.0, 710.0);
  V n = b.rint(b.mul(xs, b.c(kLog2e)));
  V r = b.fma(n, b.c(-kLn2Hi), xs);
  r = b.fma(n, b.c(-kLn2Lo), r);
  V res = scale_pow2(b, exp_reduced(b, r), b.to_int(n));
  return b.sel(b.isnan(x), x, res);
}

template <class B, class V>
V exp2(B& b, V x) {
  V xs = clamp_finite(b, x, -1100.0, 1030.0);
  V n = b.rint(xs);
  V f = b.sub(xs, n);  // exact
  V r = b.fma(f, b.c(kLn2Hi), b.mul(f, b.c(kLn2Lo)));
  V res = scale_pow2(b, exp_reduced(b, r), b.to_int(n));
  return b.sel(b.isnan(x), x, res);
}

// ln x = e ln 2 + ln m with m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s), s = (m-1)/(m+1).
// Returns e (as a double) and ln m through the out-parameters.
template <class B, class V>
void log_parts(B& b, V x, V& e_out, V& lm_out) {
  using I = decltype(b.to_bits(x));
  auto tiny = b.lt(x, b.c(2.2250738585072014e-308));  // subnormals (and <= 0, fixed up later)
  V xs = b.sel(tiny, b.mul(x, b.c(18014398509481984.0)), x);  // * 2^54
  I bits = b.to_bits(xs);
  I e = b.isub(b.iand(b.ashr(bits, 52), b.ci(0x7ff)), b.ci(1023));
  e = b.isel(tiny, b.isub(e, b.ci(54)), e);
  V m = b.from_bits(b.ior(b.iand(bits, b.ci(0x000FFFFFFFFFFFFFll)), b.ci(0x3FF0000000000000ll)));
  auto big = b.gt(m, b.c(kSqrt2));
  m = b.sel(big, b.mul(m, b.c(0.5)), m);
  e = b.isel(big, b.iadd(e, b.ci(1)), e);
  V f = b.sub(m, b.c(1.0));  // exact
  V s = b.div(f, b.add(f, b.c(2.0)));
  V s2 = b.mul(s, s);
  static constexpr double q[] = {1.0 / 23, 1.0 / 21, 1.0 / 19, 1.0 / 17, 1.0 / 15, 1.0 / 13,
                                 1.0 / 11, 1.0 / 9,  1.0 / 7,  1.0 / 5,  1.0 / 3};
  V two_s = b.add(s, s);
  lm_out = b.fma(b.mul(two_s, s2), horner(b, q, s2), two_s);
  e_out = b.to_double(e);
}

// ln x / log2 x with IEEE special cases: x < 0 -> NaN, 0 -> -inf, inf -> inf, NaN -> NaN.
template <class B, class V>
V log_special(B& b, V x, V res) {
  V inf = b.c(__builtin_inf());
  res = b.sel(b.eq(x, b.c(0.0)), b.c(-__builtin_inf()), res);
  res = b.sel(b.eq(x, inf), inf, res);
  res = b.sel(b.lt(x, b.c(0.0)), b.c(__builtin_nan("")), res);
  return b.sel(b.isnan(x), x, res);
}

template <class B, class V>
V log(B& b, V x) {
  V e, lm;
  log_parts(b, x, e, lm);
  return log_special(b, x, b.fma(e, b.c(kLn2Hi), b.fma(e, b.c(kLn2Lo), lm)));
}

template <class B, class V>
V log2(B& b, V x) {
  V e, lm;
  log_parts(b, x, e, lm);
  return log_special(b, x, b.fma(lm, b.c(kLog2e), e));
}

// sin (cos_wanted = false) or cos of x: x = k pi/2 + r, |r| <= pi/4, Taylor series of
// sin r (to r^17) and cos r (to r^18), quadrant from k mod 4.
template <class B, class V>
V sincos(B& b, V x, bool cos_wanted) {
  using I = decltype(b.to_bits(x));
  auto bad = b.lor(b.isnan(x), b.gt(b.mul(x, x), b.c(1e30)));  // NaN, inf, |x| > 1e15
  V xs = b.sel(bad, b.c(0.0), x);
  V k = b.rint(b.mul(xs, b.c(kTwoOverPi)));
  V r = b.fma(k, b.c(-kPio2Hi), xs);
  r = b.fma(k, b.c(-kPio2Lo), r);
  V r2 = b.mul(r, r);
  static constexpr double sk[] = {1.0 / 355687428096000.0, -1.0 / 1307674368000.0, 1.0 / 6227020800.0,
                                  -1.0 / 39916800.0,       1.0 / 362880.0,         -1.0 / 5040.0,
                                  1.0 / 120.0,             -1.0 / 6.0};
  // cos r = 1 + r2 * p(r2), p = -1/2! + r2/4! - r2^2/6! + ...
  static constexpr double ck[] = {-1.0 / 6402373705728000.0, 1.0 / 20922789888000.0, -1.0 / 87178291200.0,
                                  1.0 / 479001600.0,         -1.0 / 3628800.0,       1.0 / 40320.0,
                                  -1.0 / 720.0,              1.0 / 24.0,             -0.5};
  V sin_r = b.fma(b.mul(r, r2), horner(b, sk, r2), r);
  V cos_r = b.fma(r2, horner(b, ck, r2), b.c(1.0));
  I q = b.iand(b.to_int(k), b.ci(3));
  if (cos_wanted) q = b.iand(b.iadd(q, b.ci(1)), b.ci(3));  // cos x = sin(x + pi/2)
  auto q_is = [&](int64_t v) { return b.ieq(q, b.ci(v)); };
  V neg_sin = b.sub(b.c(0.0), sin_r), neg_cos = b.sub(b.c(0.0), cos_r);
  V res = b.sel(q_is(0), sin_r, b.sel(q_is(1), cos_r, b.sel(q_is(2), neg_sin, neg_cos)));
  return b.sel(bad, b.c(__builtin_nan("")), res);
}

template <class B, class V>
V tanh(B& b, V x) {
  V a = b.sel(b.lt(x, b.c(0.0)), b.sub(b.c(0.0), x), x);
  V t = b.mul(x, x);
  V small = b.fma(b.mul(x, t), horner(b, kTanhTaylor, t), x);
  V e = exp(b, b.add(a, a));
  V large = b.sub(b.c(1.0), b.div(b.c(2.0), b.add(e, b.c(1.0))));
  large = b.sel(b.lt(x, b.c(0.0)), b.sub(b.c(0.0), large), large);
  return b.sel(b.lt(a, b.c(0.5)), small, b.sel(b.isnan(x), x, large));
}

template <class B, class V>
V sigmoid(B& b, V x) {
  return b.div(b.c(1.0), b.add(b.c(1.0), exp(b, b.sub(b.c(0.0), x))));
}

}  // namespace tessel::lowering::f64_math
