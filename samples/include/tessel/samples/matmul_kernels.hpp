// The matmul seed kernels: C = A @ B with tensor-core `dot` (f16, bf16, f32/tf32, i8), fused
// bias + ReLU / bias + GELU epilogues, the unfused bias + GELU pass, and batched matmul.
//
// Structure (Triton's matmul tutorial, in the DSL): one program per BLOCK_M x BLOCK_N tile of
// C. Program ids are ordered in groups of GROUP_M tile rows so that programs running together
// share rows of A and columns of B in L2. The K dimension is a runtime `range` loop: the f32
// (i32) accumulator and the two pointer tiles are loop-carried `Var`s, the pointer tiles step
// BLOCK_K along K each iteration. Loads and stores are masked, so M, N and K need not be
// multiples of the tile. Matrices are given by base pointer and (row, column) strides in
// elements, so row-padded and transposed layouts work too. Offsets are i32: every matrix (one
// batch) must span fewer than 2^31 elements.
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "tessel/tessel.hpp"

namespace tessel::samples {
using namespace tessel::lang;

// (pid_m, pid_n) of this program in grouped order: programs walk GROUP_M tile rows down a
// column of tiles before moving to the next column, so a group reuses the same B columns.
struct TileCoord {
  Tile m, n;
};
inline TileCoord grouped_tile(const Tile& pid, const Tile& M, const Tile& N, int BM, int BN, int GROUP_M) {
  auto num_pid_m = (M + (BM - 1)) / BM;
  auto num_pid_n = (N + (BN - 1)) / BN;
  auto num_in_group = num_pid_n * GROUP_M;
  auto first_m = (pid / num_in_group) * GROUP_M;
  auto group_rows = minimum(num_pid_m - first_m, GROUP_M);  // the last group may be short
  auto in_group = pid % num_in_group;
  return {first_m + in_group % group_rows, in_group / group_rows};
}

// The accumulator of one output tile: acc[i, j] = sum_k A[rows[i], k] * B[k, cols[j]] in f32
// (i32 for i8), with rows = pid_m * BM + [0, BM) and cols = pid_n * BN + [0, BN).
struct AccTile {
  Tile acc, rows, cols;
};
// `bias` (optional, T[N]): the accumulator starts at bias[cols] instead of 0, so A @ B + bias
// needs no add after the K loop and no bias registers live beside the accumulator there.
// `multicast_b`: the B load is marked multicast (lang::multicast): the caller promises that
// programs 2k and 2k + 1 load the same B tiles (for_each_tile_pair does).
template <DTypeTag T>
AccTile matmul_acc(const Tile& a, const Tile& b, const Tile& M, const Tile& N, const Tile& K, const Tile& stride_am,
                   const Tile& stride_ak, const Tile& stride_bk, const Tile& stride_bn, const TileCoord& at,
                   const Meta& m, const Tile* bias = nullptr, bool multicast_b = false) {
  const int BM = m["BLOCK_M"], BN = m["BLOCK_N"], BK = m["BLOCK_K"];
  DotOptions opts;
  if constexpr (std::is_same_v<T, f32>) opts.allow_tf32 = m["ALLOW_TF32"] != 0;
  auto rm = at.m * BM + arange(0, BM);
  auto rn = at.n * BN + arange(0, BN);
  auto rk = arange(0, BK);
  Var pa{a + rm.col() * stride_am + rk.row() * stride_ak};  // [BM, BK] pointers, step BK along K
  Var pb{b + rk.col() * stride_bk + rn.row() * stride_bn};  // [BK, BN]
  Var acc{std::is_same_v<T, i8> ? zeros<i32>({BM, BN}) : zeros<f32>({BM, BN})};  // one branch is traced
  if (bias) acc = acc.get() + cast<f32>(load(*bias + rn, rn < N, 0)).row();
  auto row_ok = rm.col() < M;
  auto col_ok = rn.row() < N;
  for (auto k : range(0, K, BK)) {
    auto k_left = K - k;  // K edge: only the first K - k columns of A / rows of B are real
    auto at_ = load(pa, row_ok & (rk.row() < k_left), 0);
    auto bt_ = load(pb, (rk.col() < k_left) & col_ok, 0);
    if (multicast_b) bt_ = multicast(bt_);
    acc = dot(at_, bt_, acc, opts);
    pa += stride_ak * BK;
    pb += stride_bk * BK;
  }
  return {acc.get(), rm, rn};
}

// Stores an accumulator-shaped tile into C (store casts it to C's element type), masked at the edges.
inline void store_tile(const Tile& c, const Tile& v, const AccTile& t, const Tile& M, const Tile& N, const Tile& stride_cm,
                const Tile& stride_cn) {
  auto mask = (t.rows.col() < M) & (t.cols.row() < N);
  store(c + t.rows.col() * stride_cm + t.cols.row() * stride_cn, v, mask);
}

// GELU with erf, in f32: h + h * erf(x / sqrt 2) with h = x / 2 (one fma where
// h * (1 + erf) takes an add and a multiply, and rounds 1 + erf where it cancels).
inline Tile gelu(const Tile& x) {
  auto h = x * 0.5f;
  return h + h * erf(x * 0.7071067811865476f);
}

// ---- the kernels ------------------------------------------------------------------------

// C = A @ B. A: T[M, K], B: T[K, N], C: Out[M, N] (the f32 / i32 accumulator cast to Out).
template <DTypeTag T, DTypeTag Out>
void matmul_kernel(Ptr<T> a, Ptr<T> b, Ptr<Out> c, Int M, Int N, Int K, Int stride_am, Int stride_ak,
                   Int stride_bk, Int stride_bn, Int stride_cm, Int stride_cn, const Meta& m) {
  auto at = grouped_tile(program_id(0), M, N, m["BLOCK_M"], m["BLOCK_N"], m["GROUP_M"]);
  auto t = matmul_acc<T>(a, b, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, at, m);
  store_tile(c, t.acc, t, M, N, stride_cm, stride_cn);
}

// C = act(A @ B + bias[None, :]) with the epilogue fused: the accumulator never leaves
// registers. bias: T[N]. Act: Relu or Gelu. C has A's element type.
enum class Act { Relu, Gelu };
template <DTypeTag T, Act A>
void matmul_bias_act_kernel(Ptr<T> a, Ptr<T> b, Ptr<T> bias, Ptr<T> c, Int M, Int N, Int K, Int stride_am,
                            Int stride_ak, Int stride_bk, Int stride_bn, Int stride_cm, Int stride_cn,
                            const Meta& m) {
  auto at = grouped_tile(program_id(0), M, N, m["BLOCK_M"], m["BLOCK_N"], m["GROUP_M"]);
  const Tile bias_tile = bias;
  auto t = matmul_acc<T>(a, b, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, at, m, &bias_tile);
  store_tile(c, A == Act::Relu ? maximum(t.acc, 0.0f) : gelu(t.acc), t, M, N, stride_cm, stride_cn);
}

// The unfused epilogue: out = gelu(x + bias[None, :]) over an M x N matrix (one read of x, one
// write of out: the round trip the fused kernel saves). Grid: (cdiv(M, BLOCK_M), cdiv(N, BLOCK_N)).
template <DTypeTag T>
void bias_gelu_2d_kernel(Ptr<T> x, Ptr<T> bias, Ptr<T> out, Int M, Int N, Int stride_xm, Int stride_om,
                         const Meta& m) {
  const int BM = m["BLOCK_M"], BN = m["BLOCK_N"];
  auto rm = program_id(0) * BM + arange(0, BM);
  auto rn = program_id(1) * BN + arange(0, BN);
  auto mask = (rm.col() < M) & (rn.row() < N);
  auto v = cast<f32>(load(x + rm.col() * stride_xm + rn.row(), mask, 0)) +
           cast<f32>(load(bias + rn, rn < N, 0)).row();
  store(out + rm.col() * stride_om + rn.row(), cast<T>(gelu(v)), mask);
}

// Persistent forms: a fixed number of programs (about two per SM), each looping over output
// tiles program_id(0), + num_programs(0), ... in grouped order. Compiled with
// programs_per_cta = 2 on sm_90a, the two programs of a CTA take turns at their wgmma K loops,
// so one program's epilogue runs while the other's main loop has the tensor cores. Grid:
// min(tiles, 2 * SMs) rounded up to a multiple of programs_per_cta (a program past the last
// tile runs no trips).
template <class Epilogue>
void for_each_tile(const Tile& M, const Tile& N, const Meta& m, Epilogue&& epilogue) {
  const int BM = m["BLOCK_M"], BN = m["BLOCK_N"];
  auto tiles = ((M + (BM - 1)) / BM) * ((N + (BN - 1)) / BN);
  for (auto tile : range(program_id(0), tiles, num_programs(0)))
    epilogue(grouped_tile(tile, M, N, BM, BN, m["GROUP_M"]));
}

// Persistent in vertical pairs: programs 2k and 2k + 1 take the two tiles of a pair (tile rows
// 2p and 2p + 1, the same columns) at the same time, so they read the same B tiles; the pairs
// go in grouped order. With B's load marked multicast, a warp-specialised TMA kernel runs the two
// programs in the two CTAs of a cluster, which load each B tile once for both. The grid is a
// multiple of 2 programs_per_cta (paired_tiles_grid); the second tile of a last, half pair (an
// odd number of tile rows) lies past M and stores nothing.
template <class Epilogue>
void for_each_tile_pair(const Tile& M, const Tile& N, const Meta& m, Epilogue&& epilogue) {
  const int BM = m["BLOCK_M"], BN = m["BLOCK_N"];
  auto rank = program_id(0) % 2;
  auto pairs = ((M + (2 * BM - 1)) / (2 * BM)) * ((N + (BN - 1)) / BN);
  for (auto pair : range(program_id(0) / 2, pairs, num_programs(0) / 2)) {
    auto at = grouped_tile(pair, M, N, 2 * BM, BN, m["GROUP_M"]);  // over rows of 2 * BM
    epilogue(TileCoord{at.m * 2 + rank, at.n});
  }
}

// The paired kernels' grid for tile_rows x tile_cols output tiles: two programs per pair, at
// most one CTA per SM, a multiple of 2 programs_per_cta.
inline jit::Grid paired_tiles_grid(int64_t tile_rows, int64_t tile_cols, int programs_per_cta) {
  const int64_t pairs = (tile_rows + 1) / 2 * tile_cols, unit = 2 * programs_per_cta;
  const int64_t programs = std::min<int64_t>(2 * pairs, programs_per_cta * jit::Device::current().multiprocessors());
  return jit::Grid{static_cast<uint32_t>(std::max<int64_t>(programs / unit * unit, unit))};
}

// The persistent kernels' grid for `tiles` output tiles.
inline jit::Grid persistent_tiles_grid(int64_t tiles, int programs_per_cta) {
  int64_t programs = std::min<int64_t>(tiles, 2 * jit::Device::current().multiprocessors());
  programs = (programs + programs_per_cta - 1) / programs_per_cta * programs_per_cta;
  return jit::Grid{static_cast<uint32_t>(programs)};
}

// C = A @ B, persistent.
template <DTypeTag T>
void matmul_persistent_kernel(Ptr<T> a, Ptr<T> b, Ptr<T> c, Int M, Int N, Int K, Int stride_am, Int stride_ak,
                              Int stride_bk, Int stride_bn, Int stride_cm, Int stride_cn, const Meta& m) {
  for_each_tile(M, N, m, [&](const TileCoord& at) {
    auto t = matmul_acc<T>(a, b, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, at, m);
    store_tile(c, t.acc, t, M, N, stride_cm, stride_cn);
  });
}

// C = gelu(A @ B + bias[None, :]), persistent, the epilogue fused.
template <DTypeTag T>
void matmul_bias_gelu_persistent_kernel(Ptr<T> a, Ptr<T> b, Ptr<T> bias, Ptr<T> c, Int M, Int N, Int K,
                                        Int stride_am, Int stride_ak, Int stride_bk, Int stride_bn, Int stride_cm,
                                        Int stride_cn, const Meta& m) {
  for_each_tile(M, N, m, [&](const TileCoord& at) {
    const Tile bias_tile = bias;
    auto t = matmul_acc<T>(a, b, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, at, m, &bias_tile);
    store_tile(c, gelu(t.acc), t, M, N, stride_cm, stride_cn);
  });
}

// C = A @ B and C = gelu(A @ B + bias), persistent in vertical pairs sharing B (multicast).
template <DTypeTag T>
void matmul_paired_kernel(Ptr<T> a, Ptr<T> b, Ptr<T> c, Int M, Int N, Int K, Int stride_am, Int stride_ak,
                          Int stride_bk, Int stride_bn, Int stride_cm, Int stride_cn, const Meta& m) {
  for_each_tile_pair(M, N, m, [&](const TileCoord& at) {
    auto t = matmul_acc<T>(a, b, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, at, m, nullptr, true);
    store_tile(c, t.acc, t, M, N, stride_cm, stride_cn);
  });
}
template <DTypeTag T>
void matmul_bias_gelu_paired_kernel(Ptr<T> a, Ptr<T> b, Ptr<T> bias, Ptr<T> c, Int M, Int N, Int K, Int stride_am,
                                    Int stride_ak, Int stride_bk, Int stride_bn, Int stride_cm, Int stride_cn,
                                    const Meta& m) {
  for_each_tile_pair(M, N, m, [&](const TileCoord& at) {
    const Tile bias_tile = bias;
    auto t = matmul_acc<T>(a, b, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, at, m, &bias_tile, true);
    store_tile(c, gelu(t.acc), t, M, N, stride_cm, stride_cn);
  });
}

// C[z] = A[z] @ B[z] for z = program_id(1), each matrix at base + z * batch stride.
template <DTypeTag T>
void batched_matmul_kernel(Ptr<T> a, Ptr<T> b, Ptr<T> c, Int M, Int N, Int K, Int stride_az, Int stride_am,
                           Int stride_ak, Int stride_bz, Int stride_bk, Int stride_bn, Int stride_cz, Int stride_cm,
                           Int stride_cn, const Meta& m) {
  auto z = program_id(1);
  auto at = grouped_tile(program_id(0), M, N, m["BLOCK_M"], m["BLOCK_N"], m["GROUP_M"]);
  auto t = matmul_acc<T>(a + z * stride_az, b + z * stride_bz, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                         at, m);
  store_tile(c + z * stride_cz, t.acc, t, M, N, stride_cm, stride_cn);
}

// ---- the Kernel objects ------------------------------------------------------------------
// Grid: cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N) programs on axis 0 (and the batch on axis 1).

inline const Meta kMatmulMeta{{"BLOCK_M", 64}, {"BLOCK_N", 64}, {"BLOCK_K", 32}, {"GROUP_M", 8}};
inline const Meta kMatmulF32Meta{{"BLOCK_M", 64}, {"BLOCK_N", 64}, {"BLOCK_K", 32}, {"GROUP_M", 8}, {"ALLOW_TF32", 1}};
inline const std::vector<std::string> kMatmulParams{"a", "b", "c", "M", "N", "K", "stride_am", "stride_ak",
                                                    "stride_bk", "stride_bn", "stride_cm", "stride_cn"};
inline const std::vector<std::string> kMatmulBiasParams{"a", "b", "bias", "c", "M", "N", "K", "stride_am",
                                                        "stride_ak", "stride_bk", "stride_bn", "stride_cm",
                                                        "stride_cn"};

inline jit::Kernel k_matmul{"matmul", &matmul_kernel<f16, f16>, kMatmulParams, kMatmulMeta};
inline jit::Kernel k_matmul_bf16{"matmul_bf16", &matmul_kernel<bf16, bf16>, kMatmulParams, kMatmulMeta};
inline jit::Kernel k_matmul_f32{"matmul_f32", &matmul_kernel<f32, f32>, kMatmulParams, kMatmulF32Meta};
inline jit::Kernel k_matmul_i8{"matmul_i8", &matmul_kernel<i8, i32>, kMatmulParams, kMatmulMeta};
inline jit::Kernel k_matmul_bias_relu{"matmul_bias_relu", &matmul_bias_act_kernel<f16, Act::Relu>,
                                      kMatmulBiasParams, kMatmulMeta};
inline jit::Kernel k_matmul_bias_gelu{"matmul_bias_gelu", &matmul_bias_act_kernel<f16, Act::Gelu>,
                                      kMatmulBiasParams, kMatmulMeta};
inline jit::Kernel k_matmul_bias_gelu_bf16{"matmul_bias_gelu_bf16", &matmul_bias_act_kernel<bf16, Act::Gelu>,
                                           kMatmulBiasParams, kMatmulMeta};
inline jit::Kernel k_bias_gelu_2d{"bias_gelu_2d", &bias_gelu_2d_kernel<f16>,
                                  {"x", "bias", "out", "M", "N", "stride_xm", "stride_om"},
                                  Meta{{"BLOCK_M", 32}, {"BLOCK_N", 64}}};
inline jit::Kernel k_matmul_persistent{"matmul_persistent", &matmul_persistent_kernel<f16>, kMatmulParams, kMatmulMeta};
inline jit::Kernel k_matmul_persistent_bf16{"matmul_persistent_bf16", &matmul_persistent_kernel<bf16>, kMatmulParams,
                                            kMatmulMeta};
inline jit::Kernel k_matmul_bias_gelu_persistent{"matmul_bias_gelu_persistent",
                                                 &matmul_bias_gelu_persistent_kernel<f16>, kMatmulBiasParams,
                                                 kMatmulMeta};
inline jit::Kernel k_matmul_paired{"matmul_paired", &matmul_paired_kernel<f16>, kMatmulParams, kMatmulMeta};
inline jit::Kernel k_matmul_paired_bf16{"matmul_paired_bf16", &matmul_paired_kernel<bf16>, kMatmulParams,
                                        kMatmulMeta};
inline jit::Kernel k_matmul_bias_gelu_paired{"matmul_bias_gelu_paired", &matmul_bias_gelu_paired_kernel<f16>,
                                             kMatmulBiasParams, kMatmulMeta};
inline jit::Kernel k_batched_matmul{"batched_matmul", &batched_matmul_kernel<f16>,
                                    {"a", "b", "c", "M", "N", "K", "stride_az", "stride_am", "stride_ak", "stride_bz",
                                     "stride_bk", "stride_bn", "stride_cz", "stride_cm", "stride_cn"},
                                    kMatmulMeta};

}  // namespace tessel::samples
