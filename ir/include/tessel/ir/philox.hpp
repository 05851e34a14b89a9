// The random stream of the rand/randn ops: Philox 4x32-10, defined once for every backend.
//
// One Philox call yields four 32-bit words, and tessel uses all four: offsets 4c..4c+3 share
// the call with counter c, so a thread holding four consecutive offsets runs Philox once.
//
// rand(seed, offset): u = uint32(offset); key = (low 32 bits of seed, high 32 bits of seed);
// words = Philox4x32-10(counter = (u >> 2, 0, 0, 0), key); w = words[u & 3]; w becomes a float
// in [0, 1) as: s = int32(w); s = s < 0 ? ~s : s (i.e. -s - 1); result = f32(s) * 4.6566127342e-10f,
// both rounded to f32. The scale is the f32 just below 2^-31 (bits 0x2FFFFFFF), so the result
// never reaches 1.0.
// randn(seed, offset): the same call; the pair p = (u >> 1) & 1 takes words (2p, 2p+1) as
// uniforms u1, u2 (as above), u1 = max(u1, 1e-7); r = sqrt(-2 ln u1), t = 2 pi u2; offsets with
// u & 1 == 0 get r cos t, odd ones r sin t (Box-Muller, both outputs used).
// Triton's tl.rand draws one call per element with counter = offset and takes word 0; tessel's
// stream therefore differs from Triton's for the same seed (by design: a quarter of the work).
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

// The four words of the call that serves `offset`.
inline std::array<uint32_t, 4> words_for(int64_t seed, int32_t offset) {
  uint32_t u = static_cast<uint32_t>(offset);
  return philox4x32(u >> 2, 0, 0, 0, static_cast<uint32_t>(seed),
                    static_cast<uint32_t>(static_cast<uint64_t>(seed) >> 32));
}

inline float rand(int64_t seed, int32_t offset) {
  return uint_to_uniform(words_for(seed, offset)[static_cast<uint32_t>(offset) & 3]);
}

inline float randn(int64_t seed, int32_t offset) {
  auto w = words_for(seed, offset);
  uint32_t u = static_cast<uint32_t>(offset);
  uint32_t p = (u >> 1) & 1;
  float u1 = uint_to_uniform(w[2 * p]);
  float u2 = uint_to_uniform(w[2 * p + 1]);
  if (u1 < 1e-7f) u1 = 1e-7f;
  float th = 6.283185307179586f * u2;
  float rad = std::sqrt(-2.0f * std::log(u1));
  return (u & 1) ? rad * std::sin(th) : rad * std::cos(th);
}

}  // namespace tessel::ir::philox
