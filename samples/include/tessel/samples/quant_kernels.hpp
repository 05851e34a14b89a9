// Weight-only int4 matmul (W4A16): C[M, N] = A[M, K] @ dequant(Wq), in one kernel.
//
// The weights are int4, eight per u32 word, packed along K (GPTQ's layout): word (r, n) of
// Wq[K / 8, N] holds W[8r + j, n] in bits 4j .. 4j + 3. Each group of GROUP rows of K shares a
// per-column f16 scale S[K / GROUP, N]; the zero point is 8 (symmetric int4), or per group and
// column Z[K / GROUP, N] (f16) in the _zp form:  W[k, n] = (q - 8 or Z[k / GROUP, n]) * S[k / GROUP, n].
// The dequantisation runs inside the K loop, on the tile the loop just loaded: unpack gives
// the nibbles as f16 in the loading thread (two per bit operation, no conversions), the scale
// is one row per trip (BLOCK_K divides GROUP), and the dot takes the f16 tile. The weight bytes
// read are a quarter of the f16 matmul's. M may be 1 (decode): BLOCK_M is the dot's minimum of
// 16 rows, the rows beyond M masked off.
#pragma once
#include "tessel/tessel.hpp"

namespace tessel::samples {
using namespace tessel::lang;

inline void w4a16_body(Ptr<f16> a, Ptr<u32> wq, Ptr<f16> scales, const Ptr<f16>* zero_points, Ptr<f16> c, Int M, Int N,
                       Int K, const Meta& m) {
  const int BM = m["BLOCK_M"], BN = m["BLOCK_N"], BK = m["BLOCK_K"], G = m["GROUP"];
  auto rm = program_id(0) * BM + arange(0, BM);
  auto rn = program_id(1) * BN + arange(0, BN);
  auto rk = arange(0, BK);
  auto rw = arange(0, BK / 8);  // the words of a K block
  auto row_ok = rm.col() < M;
  auto col_ok = rn.row() < N;
  Var pa{a + rm.col() * K + rk.row()};
  Var pw{wq + rw.col() * N + rn.row()};
  Var acc{zeros<f32>({BM, BN})};
  for (auto k : range(0, K, BK)) {
    auto at = load(pa, row_ok & (rk.row() < K - k), 0);
    auto words = load(pw, (rw.col() < (K - k) / 8) & col_ok, 0);
    auto group = k / G;
    auto s = load(scales + group * N + rn, rn < N, 0).row();
    auto q = unpack<f16>(words, 0, 4);  // [BK, BN], values 0..15
    auto w = zero_points ? (q - load(*zero_points + group * N + rn, rn < N, 0).row()) * s : (q - 8.0f) * s;
    acc = dot(at, w, acc);
    pa += BK;
    pw += (BK / 8) * N;
  }
  store(c + rm.col() * N + rn.row(), acc.get(), row_ok & col_ok);
}

inline void w4a16_matmul_kernel(Ptr<f16> a, Ptr<u32> wq, Ptr<f16> scales, Ptr<f16> c, Int M, Int N, Int K,
                                const Meta& m) {
  w4a16_body(a, wq, scales, nullptr, c, M, N, K, m);
}

inline void w4a16_matmul_zp_kernel(Ptr<f16> a, Ptr<u32> wq, Ptr<f16> scales, Ptr<f16> zeros, Ptr<f16> c, Int M,
                                   Int N, Int K, const Meta& m) {
  w4a16_body(a, wq, scales, &zeros, c, M, N, K, m);
}

// BLOCK_K must divide GROUP (one scale row per trip) and be a multiple of 8 (whole words); K a
// multiple of 8 (whole words) and of GROUP's share a trip reads (K % BLOCK_K == 0 keeps every
// trip inside one group).
inline const Meta kW4A16Meta{{"BLOCK_M", 16}, {"BLOCK_N", 64}, {"BLOCK_K", 128}, {"GROUP", 128}};
inline jit::Kernel k_w4a16_matmul{"w4a16_matmul", &w4a16_matmul_kernel,
                                  {"a", "wq", "scales", "c", "M", "N", "K"}, kW4A16Meta};
inline jit::Kernel k_w4a16_matmul_zp{"w4a16_matmul_zp", &w4a16_matmul_zp_kernel,
                                     {"a", "wq", "scales", "zeros", "c", "M", "N", "K"}, kW4A16Meta};

}  // namespace tessel::samples
