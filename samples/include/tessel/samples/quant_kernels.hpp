// Weight-only int4 matmul (W4A16): C[M, N] = A[M, K] @ dequant(Wq), dequantised in the K loop.
//
// The weights are int4, eight per u32 word, packed along K (GPTQ's layout): word (r, n) of
// Wq[K / 8, N] holds W[8r + j, n] in bits 4j .. 4j + 3. Each group of GROUP rows of K shares a
// per-column f16 scale S[K / GROUP, N]; the zero point is 8 (symmetric int4), or per group and
// column Z[K / GROUP, N] (f16) in the _zp form:  W[k, n] = f16((q - 8 or Z[k / GROUP, n]) * S[k / GROUP, n])
// (the subtraction is exact, the product rounds to f16).
// Each trip of the K loop unpacks one BLOCK_K slice of the packed words in the thread that
// loaded it (two nibbles per bit operation, no conversions; the symmetric zero point 8 in the
// same subtraction), subtracts a zero-point tile in the _zp form, scales
// (BLOCK_K divides GROUP: one scale row per trip) and multiplies by A on the tensor cores. With
// num_stages >= 2 the loop's pipeliner issues every trip's loads num_stages - 1 trips ahead by
// cp.async: A's tile straight into the dot's staging, the words and the scales (which reach the
// dot through unpack and the scaling) into each thread's own slots, read back in their trip.
// The weight bytes are a quarter of the f16 matmul's. M may be 1 (decode): BLOCK_M
// is the dot's minimum of 16 rows, the rows beyond M masked off. (Scaling each trip's f32
// product instead of every weight was measured slower at every M: a second accumulator.)
//
// Small M has too few output tiles to keep the GPU's memory busy with one program per tile: the
// split-K form runs program_id(2) over slices of k_per_split rows of K (a multiple of BLOCK_K)
// and writes f32 partial products P[split, M, N]. The last program of each output tile to
// finish (an acq_rel counter per tile) adds them into C in slice order and resets its counter:
// one kernel, the same sums whichever program comes last.
#pragma once
#include "tessel/samples/split_k.hpp"
#include "tessel/tessel.hpp"

namespace tessel::samples {
using namespace tessel::lang;

// The f32 accumulator of the output tile (program_id(0), program_id(1)) over K rows [k0, k1).
inline Tile w4a16_acc(Ptr<f16> a, Ptr<u32> wq, Ptr<f16> scales, const Ptr<f16>* zero_points, const Tile& M,
                      const Tile& N, const Tile& K, const Tile& k0, const Tile& k1, const Tile& rm, const Tile& rn,
                      const Meta& m) {
  const int BM = m["BLOCK_M"], BN = m["BLOCK_N"], BK = m["BLOCK_K"], G = m["GROUP"];
  auto rk = arange(0, BK);
  auto rw = arange(0, BK / 8);  // the words of a K block
  auto row_ok = rm.col() < M;
  auto col_ok = rn.row() < N;
  Var pa{a + rm.col() * K + (k0 + rk).row()};
  Var pw{wq + (k0 / 8 + rw).col() * N + rn.row()};
  Var acc{zeros<f32>({BM, BN})};
  for (auto k : range(k0, k1, BK)) {
    auto at = load(pa, row_ok & (rk.row() < k1 - k), 0);
    auto words = load(pw, (rw.col() < (k1 - k) / 8) & col_ok, 0);
    auto group = k / G;
    auto s = load(scales + group * N + rn, rn < N, 0).row();
    // [BK, BN]: q - 8 for symmetric int4 (the zero point folded into the unpack), else q.
    auto q = unpack<f16>(words, 0, 4, zero_points ? 0 : 8);
    auto w = zero_points ? (q - load(*zero_points + group * N + rn, rn < N, 0).row()) * s : q * s;
    acc = dot(at, w, acc);
    pa += BK;
    pw += (BK / 8) * N;
  }
  return acc.get();
}

inline void w4a16_matmul_kernel(Ptr<f16> a, Ptr<u32> wq, Ptr<f16> scales, Ptr<f16> c, Int M, Int N, Int K,
                                const Meta& m) {
  auto rm = program_id(0) * m["BLOCK_M"] + arange(0, m["BLOCK_M"]);
  auto rn = program_id(1) * m["BLOCK_N"] + arange(0, m["BLOCK_N"]);
  auto acc = w4a16_acc(a, wq, scales, nullptr, M, N, K, cast<i32>(0), K, rm, rn, m);
  store(c + rm.col() * N + rn.row(), acc, (rm.col() < M) & (rn.row() < N));
}

inline void w4a16_matmul_zp_kernel(Ptr<f16> a, Ptr<u32> wq, Ptr<f16> scales, Ptr<f16> zeros, Ptr<f16> c, Int M,
                                   Int N, Int K, const Meta& m) {
  auto rm = program_id(0) * m["BLOCK_M"] + arange(0, m["BLOCK_M"]);
  auto rn = program_id(1) * m["BLOCK_N"] + arange(0, m["BLOCK_N"]);
  auto acc = w4a16_acc(a, wq, scales, &zeros, M, N, K, cast<i32>(0), K, rm, rn, m);
  store(c + rm.col() * N + rn.row(), acc, (rm.col() < M) & (rn.row() < N));
}

// P[program_id(2), M, N] = the product over K rows [split * k_per_split, + k_per_split); the
// last of the num_programs(2) programs of an output tile to arrive sets C[M, N] (f16) to their
// sum in slice order. count[tile] (i32, zero before the first launch) counts the arrivals and
// is zero again when the kernel ends.
inline void w4a16_splitk_kernel(Ptr<f16> a, Ptr<u32> wq, Ptr<f16> scales, Ptr<f32> part, Ptr<i32> count, Ptr<f16> c,
                                Int M, Int N, Int K, Int k_per_split, const Meta& m) {
  auto rm = program_id(0) * m["BLOCK_M"] + arange(0, m["BLOCK_M"]);
  auto rn = program_id(1) * m["BLOCK_N"] + arange(0, m["BLOCK_N"]);
  auto k0 = program_id(2) * k_per_split;
  auto acc = w4a16_acc(a, wq, scales, nullptr, M, N, K, k0, minimum(k0 + k_per_split, K), rm, rn, m);
  auto ok = (rm.col() < M) & (rn.row() < N);
  auto tile = rm.col() * N + rn.row();
  split_k_sum_last(part, count, acc, tile, ok, M * N, [&](const Tile& sum) { store(c + tile, sum, ok); });
}

// Decode (M of a few rows): C[m, :] = A[m, :] @ dequant(Wq) without tensor cores, one program a
// row m (program_id(0)), BLOCK_N columns (program_id(1)) and one slice of K (program_id(2)).
// Each thread streams its own words (16-byte loads along N), unpacks them in registers,
// scales them to f16 as w4a16_matmul does, multiplies by the activation row in f16 (one more
// rounding a product: within the samples' bound for products in f16's normal range,
// quant_samples.cpp) and sums each trip's BLOCK_K products in f32: no shared memory and no
// barrier in the K loop, so the weight stream is limited by the words in flight, not by a
// tensor-core staging. Slices combine as in w4a16_splitk (part[split, M, N] f32, count per
// (row, column block)).
inline void w4a16_gemv_kernel(Ptr<f16> a, Ptr<u32> wq, Ptr<f16> scales, Ptr<f32> part, Ptr<i32> count, Ptr<f16> c,
                              Int M, Int N, Int K, Int k_per_split, const Meta& m) {
  const int BN = m["BLOCK_N"], BK = m["BLOCK_K"], G = m["GROUP"];
  auto row = program_id(0);
  auto rn = program_id(1) * BN + arange(0, BN);
  auto k0 = program_id(2) * k_per_split;
  auto k1 = minimum(k0 + k_per_split, K);
  auto rk = arange(0, BK);
  auto rw = arange(0, BK / 8);
  auto col_ok = rn < N;
  Var pw{wq + (k0 / 8 + rw).col() * N + rn.row()};
  Var acc{zeros<f32>({BN})};
  for (auto k : range(k0, k1, BK)) {
    auto words = load(pw, (rw.col() < (k1 - k) / 8) & col_ok.row(), 0);
    auto x = load(a + row * K + k + rk, rk < k1 - k, 0);
    auto s = load(scales + (k / G) * N + rn, col_ok, 0);
    auto w = unpack<f16>(words, 0, 4, 8) * s.row();  // [BK, BN]: f16((q - 8) * S), as w4a16_matmul's
    acc = acc.get() + sum(w * x.col(), 0);  // f16 products (one rounding each), f32 sums
    pw += (BK / 8) * N;
  }
  auto at = row * N + rn;
  split_k_sum_last(part, count, acc.get(), at, col_ok, M * N, [&](const Tile& total) { store(c + at, total, col_ok); });
}

// dequant -> matmul -> quant in one kernel: C = A @ dequant(Wq) as above, then quantised to int8
// per row of each BLOCK_N-column group of the output (scales S_out[M, cdiv(N, BLOCK_N)] f32:
// the group's largest |C| / 127; q = C / scale rounded half away from zero, in [-127, 127]).
// With BLOCK_N >= N a group is a whole row: the per-row (per-token) quantisation. A row whose
// group is all zeros gets scale 0 and q 0.
inline void w4a16_matmul_q8_kernel(Ptr<f16> a, Ptr<u32> wq, Ptr<f16> scales, Ptr<i8> q, Ptr<f32> q_scales, Int M,
                                   Int N, Int K, const Meta& m) {
  const int BN = m["BLOCK_N"];
  auto rm = program_id(0) * m["BLOCK_M"] + arange(0, m["BLOCK_M"]);
  auto rn = program_id(1) * BN + arange(0, BN);
  auto acc = w4a16_acc(a, wq, scales, nullptr, M, N, K, cast<i32>(0), K, rm, rn, m);
  auto ok = (rm.col() < M) & (rn.row() < N);
  auto amax = max(where(ok, abs(acc), 0.0f), 1);  // [BM]
  auto scale = amax / 127.0f;
  auto inv = where(amax > 0.0f, 127.0f / amax, 0.0f);
  auto x = acc * inv.col();
  auto r = where(x < 0.0f, -floor(0.5f - x), floor(x + 0.5f));  // half away from zero
  store(q + rm.col() * N + rn.row(), cast<i8>(minimum(maximum(r, -127.0f), 127.0f)), ok);
  auto groups = (N + (BN - 1)) / BN;
  store(q_scales + rm * groups + program_id(1), scale, rm < M);
}

// BLOCK_K must divide GROUP (one scale row per trip) and be a multiple of 8 (whole words); K a
// multiple of GROUP (whole groups), k_per_split of BLOCK_K.
inline const Meta kW4A16Meta{{"BLOCK_M", 16}, {"BLOCK_N", 64}, {"BLOCK_K", 128}, {"GROUP", 128}};
inline jit::Kernel k_w4a16_matmul{"w4a16_matmul", &w4a16_matmul_kernel,
                                  {"a", "wq", "scales", "c", "M", "N", "K"}, kW4A16Meta};
inline jit::Kernel k_w4a16_matmul_zp{"w4a16_matmul_zp", &w4a16_matmul_zp_kernel,
                                     {"a", "wq", "scales", "zeros", "c", "M", "N", "K"}, kW4A16Meta};
// SPLITS: the K slices its launchers make (the grid's z and k_per_split); the kernel's code does
// not read it, so a tuned config carries the split with the tile.
inline const Meta kW4A16SplitMeta{{"BLOCK_M", 16}, {"BLOCK_N", 64}, {"BLOCK_K", 128}, {"GROUP", 128}, {"SPLITS", 4}};
inline jit::Kernel k_w4a16_splitk{"w4a16_splitk", &w4a16_splitk_kernel,
                                  {"a", "wq", "scales", "part", "count", "c", "M", "N", "K", "k_per_split"},
                                  kW4A16SplitMeta};
// The GEMV form: BLOCK_N a multiple of 128 x num_warps puts every warp along N (4 words a thread).
inline const Meta kW4A16GemvMeta{{"BLOCK_N", 512}, {"BLOCK_K", 64}, {"GROUP", 128}, {"SPLITS", 16}};
inline jit::Kernel k_w4a16_gemv{"w4a16_gemv", &w4a16_gemv_kernel,
                                {"a", "wq", "scales", "part", "count", "c", "M", "N", "K", "k_per_split"},
                                kW4A16GemvMeta};
inline jit::Kernel k_w4a16_matmul_q8{"w4a16_matmul_q8", &w4a16_matmul_q8_kernel,
                                     {"a", "wq", "scales", "q", "q_scales", "M", "N", "K"}, kW4A16Meta};

}  // namespace tessel::samples
