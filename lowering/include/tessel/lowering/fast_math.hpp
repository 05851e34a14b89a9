// The polynomial approximations the lowering emits for tanh and erf (f32), with CPU
// mirrors of the emitted instruction sequences so tests can measure their error.
#pragma once
#include <cmath>

namespace tessel::lowering::fast_math {

inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kLn2 = 0.693147180559945309f;

// tanh(x) = x + x * p(x^2) for |x| < kTanhBound (Chebyshev fit of tanh(x)/x - 1, highest
// power first); otherwise sign(x) * (1 - 2 / (2^(2|x| log2 e) + 1)).
inline constexpr float kTanhBound = 0.9f;
inline constexpr float kTanhPoly[] = {-0.0004492283915169537f, 0.002563927322626114f, -0.008242053911089897f,
                                      0.02164984494447708f,   -0.05392485857009888f, 0.13332904875278473f,
                                      -0.33333316445350647f,  -1.029574203670336e-09f};
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

template <size_t N>
float horner(const float (&k)[N], float t) {
  float p = k[0];
  for (size_t i = 1; i < N; ++i) p = std::fma(p, t, k[i]);
  return p;
}

// CPU mirrors (exp2 stands in for ex2.approx.f32).
inline float tanh_ref(float x) {
  float a = std::fabs(x);
  if (a < kTanhBound) return std::fma(x, horner(kTanhPoly, x * x), x);
  float e = std::exp2(a * (2.0f * kLog2e));
  return std::copysign(1.0f - 2.0f / (e + 1.0f), x);
}

inline float erf_ref(float x) {
  float a = std::fabs(x);
  if (a < 1.0f) return std::fma(x, horner(kErfSmallPoly, x * x), x);
  if (std::isnan(a)) return a;
  return std::copysign(1.0f - std::exp2(horner(kErfLargePoly, std::fmin(a, kErfBound))), x);
}

}  // namespace tessel::lowering::fast_math
