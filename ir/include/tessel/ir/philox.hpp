// The random stream of the rand/randn ops: Philox 4x32-10, defined once for every backend.
//
// rand(seed, offset): key = (low 32 bits of seed, high 32 bits of seed), counter =
// (uint32(offset), 0, 0, 0); ten Philox rounds; the first output word u becomes a float in
// [0, 1) as: s = int32(u); s = s < 0 ? ~s : s (i.e. -s - 1); result = f32(s) * 4.6566127342e-10f,
// both rounded to f32. The scale is the f32 just below 2^-31 (bits 0x2FFFFFFF), so the result
// never reaches 1.0.
// randn(seed, offset): the first two output words u1, u2 as above, u1 = max(u1, 1e-7),
// result = sqrt(-2 ln u1) * cos(2 pi u2) (Box-Muller, first of the pair).
// This is the stream Triton's tl.rand / tl.randn draw, one Philox call per element.
#pragma once
#include <array>
#include <cmath>
#include <cstdint>

namespace tessel::ir::philox {

inline constexpr uint32_t kKeyA = 0x9E3779B9u, kKeyB = 0xBB67AE85u;
inline constexpr uint32_t kRoundA = 0xD2511F53u, kRoundB = 0xCD9E8D57u;
inline constexpr int kRounds = 10;

constexpr std::array<uint32_t, 4> philox4x32(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3,
                                             uint32_t k0, uint32_t k1) {
  for (int r = 0; r < kRounds; ++r) {
    uint64_t pa = uint64_t{kRoundA} * c0;
    uint64_t pb = uint64_t{kRoundB} * c2;
    uint32_t n0 = static_cast<uint32_t>(pb >> 32) ^ c1 ^ k0;
    uint32_t n2 = static_cast<uint32_t>(pa >> 32) ^ c3 ^ k1;
    c1 = static_cast<uint32_t>(pb);
    c3 = static_cast<uint32_t>(pa);
    c0 = n0;
    c2 = n2;
    k0 += kKeyA;
    k1 += kKeyB;
  }
  return {c0, c1, c2, c3};
}

inline float uint_to_uniform(uint32_t u) {
  int32_t s = static_cast<int32_t>(u);
  if (s < 0) s = ~s;  // -s - 1 without overflow at INT32_MIN
  return static_cast<float>(s) * 4.6566127342e-10f;
}

inline float rand(int64_t seed, int32_t offset) {
  auto r = philox4x32(static_cast<uint32_t>(offset), 0, 0, 0, static_cast<uint32_t>(seed),
                      static_cast<uint32_t>(static_cast<uint64_t>(seed) >> 32));
  return uint_to_uniform(r[0]);
}

inline float randn(int64_t seed, int32_t offset) {
  auto r = philox4x32(static_cast<uint32_t>(offset), 0, 0, 0, static_cast<uint32_t>(seed),
                      static_cast<uint32_t>(static_cast<uint64_t>(seed) >> 32));
  float u1 = uint_to_uniform(r[0]);
  float u2 = uint_to_uniform(r[1]);
  if (u1 < 1e-7f) u1 = 1e-7f;
  float th = 6.283185307179586f * u2;
  float rad = std::sqrt(-2.0f * std::log(u1));
  return rad * std::cos(th);
}

}  // namespace tessel::ir::philox
