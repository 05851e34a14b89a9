// fp8 scaled matmul (the contract of torch._scaled_mm): C[M, N] = (A @ B^T) * scale_a * scale_b.
//
// A[M, K] and B[N, K] hold OCP e4m3 values, both row-major, so both are contiguous along K: a
// Linear layer's weight as stored, and the operand order fp8 tensor cores read (wgmma k32 takes
// 8-bit operands K-major only). The product accumulates in f32; the scales are applied once, in
// the epilogue: per row of A and per row of B (ROWWISE = 1: scale_a f32[M], scale_b f32[N]) or
// per tensor (ROWWISE = 0: one f32 each). The result is stored as OUT (f16 or bf16), rounded
// once. One program per BLOCK_M x BLOCK_N tile in grouped order (matmul_kernels.hpp), a runtime
// K loop with K-edge masks: M, N and K need not be multiples of the tile.
#pragma once
#include "tessel/samples/matmul_kernels.hpp"
#include "tessel/tessel.hpp"

namespace tessel::samples {
using namespace tessel::lang;

template <DTypeTag OUT>
inline void fp8_matmul_kernel(Ptr<f8e4m3> a, Ptr<f8e4m3> b, Ptr<f32> scale_a, Ptr<f32> scale_b, Ptr<OUT> c, Int M,
                              Int N, Int K, const Meta& m) {
  const int BM = m["BLOCK_M"], BN = m["BLOCK_N"], BK = m["BLOCK_K"];
  auto at = grouped_tile(program_id(0), M, N, BM, BN, m["GROUP_M"]);
  auto rm = at.m * BM + arange(0, BM);
  auto rn = at.n * BN + arange(0, BN);
  auto rk = arange(0, BK);
  auto row_ok = rm.col() < M;
  auto col_ok = rn.row() < N;
  Var pa{a + rm.col() * K + rk.row()};  // [BM, BK]
  Var pb{b + rk.col() + rn.row() * K};  // [BK, BN]: B^T, contiguous along K (dim 0)
  Var acc{zeros<f32>({BM, BN})};
  for (auto k : range(0, K, BK)) {
    auto k_left = K - k;
    auto at_ = load(pa, row_ok & (rk.row() < k_left), 0);
    auto bt_ = load(pb, (rk.col() < k_left) & col_ok, 0);
    acc = dot(at_, bt_, acc);
    pa += BK;
    pb += BK;
  }
  Tile out = acc.get();
  if (m["ROWWISE"] != 0)
    out = out * load(scale_a + rm, rm < M, 0).col() * load(scale_b + rn, rn < N, 0).row();
  else
    out = out * (load(scale_a) * load(scale_b));
  store(c + rm.col() * N + rn.row(), out, row_ok & col_ok);
}

// Defaults that fit every target without spilling (the FMA fallback holds the whole tile in
// registers); the fastest tiles on an H200 are larger (tunables_quant.cpp, bench/RESULTS.md).
inline const Meta kFp8MatmulMeta{{"BLOCK_M", 64}, {"BLOCK_N", 64}, {"BLOCK_K", 32}, {"GROUP_M", 8}, {"ROWWISE", 1}};
inline const std::vector<std::string> kFp8MatmulParams{"a", "b", "scale_a", "scale_b", "c", "M", "N", "K"};
inline jit::Kernel k_fp8_matmul{"fp8_matmul", &fp8_matmul_kernel<f16>, kFp8MatmulParams, kFp8MatmulMeta};
// The bf16 form defaults to per-tensor scales (ROWWISE = 0); either form takes either.
inline jit::Kernel k_fp8_matmul_bf16{"fp8_matmul_bf16", &fp8_matmul_kernel<bf16>, kFp8MatmulParams,
                                     Meta{{"BLOCK_M", 64}, {"BLOCK_N", 64}, {"BLOCK_K", 32}, {"GROUP_M", 8},
                                          {"ROWWISE", 0}}};

}  // namespace tessel::samples
