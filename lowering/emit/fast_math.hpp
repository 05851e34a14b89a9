// The f32 exp, exp2, log, log2, tanh, erf and sigmoid sequences the lowering emits, written once
// over an arithmetic backend (as f64_math.hpp is): lower_math.cpp instantiates them with an LLVM
// IR builder backend, tests/lowering/fast_math_test.cpp with a CPU float backend, so the CPU
// check evaluates exactly the emitted steps, constants and branch selection.
//
// A backend B provides a value type V (f32) and a mask type M (bool) and:
//   V c(float); V add, sub, mul, div (V, V); V fma(V, V, V); V abs(V);
//   V copysign(V mag, V sign) (|mag| with sign's sign bit); V minimum(V, V) (NaN if either is);
//   V ex2(V) (ex2.approx.f32), V ex2_ftz(V) (ex2.approx.ftz.f32), V lg2(V) (lg2.approx.f32);
//   M lt(V, V) (ordered: false on NaN); V sel(M, V, V).
// Each step is named before it is used, so the IR comes out in source order. No multiply
// feeds an add outside an explicit fma, so the backend's fp-contraction changes nothing.
// Accuracy with an exact exp2/log2 (tests/lowering/fast_math_test.cpp states the bounds):
// tanh and erf within 1.5 ulp over the whole f32 range; on the GPU the .approx instructions
// add their own error (about 2^-22 relative, 2^-22.6 absolute for lg2 near 1, per the PTX ISA).
#pragma once
#include <cstddef>

namespace tessel::lowering::fast_math {

inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kLn2 = 0.693147180559945309f;

// tanh(x) = x + x * p(x^2) for |x| < kTanhBound (Chebyshev fit of tanh(x)/x - 1, highest
// power first); otherwise sign(x) * (1 - 2 / (2^(2|x| log2 e) + 1)). The constant term is
// exactly 0 (tanh(x)/x - 1 vanishes at 0; the fit's -1.03e-9 moved results by under 0.02 ulp): a
// negative p(0) made -0 * p(0) + -0 round to +0, so tanh(-0) came out +0.
inline constexpr float kTanhBound = 0.9f;
inline constexpr float kTanhPoly[] = {-0.0004492283915169537f, 0.002563927322626114f, -0.008242053911089897f,
                                      0.02164984494447708f,   -0.05392485857009888f, 0.13332904875278473f,
                                      -0.33333316445350647f,  0.0f};
// erf(x) = x + x * p(x^2) for |x| < 1 (fit of erf(x)/x - 1);
// otherwise sign(x) * (1 - 2^q(min(|x|, kErfBound))) with q a fit of log2(erfc(x)) on
// [1, kErfBound]; past the bound erf(x) rounds to 1 in f32.
inline constexpr float kErfBound = 3.92f;
inline constexpr float kErfSmallPoly[] = {7.875874871388078e-05f, -0.000801686430349946f, 0.005189087241888046f,
                                          -0.02685421146452427f,  0.11283594369888306f,   -0.3761262595653534f,
                                          0.12837916612625122f};
inline constexpr float kErfLargePoly[] = {-9.182150506603648e-08f, 4.408276709000347e-06f, -8.623152825748548e-05f,
                                          0.0009697233908809721f,  -0.00724022975191474f,  0.03894885629415512f,
                                          -0.1600077897310257f,    -0.910460889339447f,    -1.6311243772506714f,
                                          0.0005799019709229469f};

// k[0] t^(N-1) + ... + k[N-1] by Horner's rule, one fma per step.
template <class B, class V, size_t N>
V horner(B& b, const float (&k)[N], V t) {
  V p = b.c(k[0]);
  for (size_t i = 1; i < N; ++i) p = b.fma(p, t, b.c(k[i]));
  return p;
}

// e^x = 2^(x log2 e): the product's error (f32 log2 e, then the rounding) costs up to
// 1.22 |x| ulp, as CUDA's __expf. exp and exp2 take the .ftz ex2 (as __expf under -ftz=true):
// a result below 2^-126 is flushed to 0 (an absolute error under 2^-126), and the instruction is
// one MUFU.EX2 where the plain form adds a range test and two multiplies: a quarter of the
// instructions of attention's softmax, measured on the H200 (2026-11-27).
template <class B, class V>
V exp(B& b, V x) {
  V t = b.mul(x, b.c(kLog2e));
  return b.ex2_ftz(t);
}

template <class B, class V>
V exp2(B& b, V x) {
  return b.ex2_ftz(x);
}

template <class B, class V>
V log(B& b, V x) {
  V l = b.lg2(x);
  return b.mul(l, b.c(kLn2));
}

template <class B, class V>
V log2(B& b, V x) {
  return b.lg2(x);
}

// The ex2 here is the .ftz form: its power 2^(2|x| log2 e) is >= 1, never subnormal.
template <class B, class V>
V tanh(B& b, V x) {
  V x2 = b.mul(x, x);
  V p = horner(b, kTanhPoly, x2);
  V small = b.fma(x, p, x);
  V a = b.abs(x);
  // 1 - 2 / (e^(2|x|) + 1): no cancellation for |x| >= 0.9; inf and NaN fall out right.
  V t = b.mul(a, b.c(2.0f * kLog2e));
  V e = b.ex2_ftz(t);
  V e1 = b.add(e, b.c(1.0f));
  V q = b.div(b.c(2.0f), e1);
  V large = b.sub(b.c(1.0f), q);
  V signed_large = b.copysign(large, x);
  auto is_small = b.lt(a, b.c(kTanhBound));
  return b.sel(is_small, small, signed_large);
}

// The ex2 here is the .ftz form: a flushed 2^q (q < -126) changes no result, erf being
// 1 - 2^q with q >= -23 over [1, kErfBound].
template <class B, class V>
V erf(B& b, V x) {
  V x2 = b.mul(x, x);
  V p = horner(b, kErfSmallPoly, x2);
  V small = b.fma(x, p, x);
  V a = b.abs(x);
  // minimum keeps NaN (a min that drops NaN would turn it into the bound).
  V ac = b.minimum(a, b.c(kErfBound));
  V q = horner(b, kErfLargePoly, ac);
  V e = b.ex2_ftz(q);
  V large = b.sub(b.c(1.0f), e);
  V signed_large = b.copysign(large, x);
  auto is_small = b.lt(a, b.c(1.0f));
  return b.sel(is_small, small, signed_large);
}

// 1 / (1 + 2^(-x log2 e)); the .ftz ex2: where 2^q would be subnormal (q < -126) the sum
// 1 + 2^q rounds to 1 either way.
template <class B, class V>
V sigmoid(B& b, V x) {
  V t = b.mul(x, b.c(-kLog2e));
  V e = b.ex2_ftz(t);
  V d = b.add(b.c(1.0f), e);
  return b.div(b.c(1.0f), d);
}

}  // namespace tessel::lowering::fast_math
