// sum((pred - target)^2) over any number of f32 elements, for torch.ops.tessel.mse_sum (the
// data-parallel loss of samples/torch/two_gpu_mse.py), and how to launch it.
//
// Why not the samples' mse_kernel (reduction_kernels.hpp): it adds one partial sum per 1024
// elements into the output with atomic_add, so 2^30 elements make 2^20 f32 additions into one
// scalar, and their rounding alone has a relative spread of about 1.4e-5 (sqrt(n) * 2^-23.5 / 6
// for n additions to a growing sum) -- more than the 1e-5 the two-GPU check allows. Here each
// program walks its blocks p, p + P, p + 2P, ... (P = num_programs, a few per SM), each lane
// keeping its own sum of a few hundred squares, and adds once: a few hundred atomic additions
// per launch, so the order the atomics land in changes the result by about 1e-7 of it.
//
// Offsets are i32 (program_id and n are). A launch covers at most kMseSumChunk elements, so
// start + P * BLOCK, the loop's last increment, stays below 2^31; a larger tensor takes one
// launch per chunk (mse_sum_launches), all adding into the same output.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "tessel/tessel.hpp"

// Its own namespace: the DSL's names (sum, max, where, ...) stay out of torch_ext.
namespace tessel::torch_ext::kernels {
using namespace tessel::lang;

// out += sum((pred - target)^2) over n elements (out must start at 0 before the first launch).
inline void mse_sum_kernel(Ptr<f32> pred, Ptr<f32> target, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto P = num_programs(0);
  Var acc{zeros<f32>({BLOCK})};
  for (auto start : range(program_id(0) * BLOCK, n, P * BLOCK)) {
    auto offs = start + arange(0, BLOCK);
    auto mask = offs < n;
    auto d = load(pred + offs, mask, 0.0f) - load(target + offs, mask, 0.0f);
    acc += d * d;
  }
  atomic_add(out, sum(acc, 0));
}

// BLOCK 4096 with 8 warps: 16 elements of each input per thread per step, loads enough in
// flight to stream from HBM with a few programs per SM.
inline constexpr int64_t kMseSumBlock = 4096;
inline constexpr int kMseSumWarps = 8;
inline constexpr int64_t kMseSumProgramsPerSm = 4;
// Elements per launch: 2^30 keeps every i32 offset and loop counter below 2^31 (see above) and
// each chunk's start a multiple of BLOCK (so of 16 bytes) when the tensor's start is.
inline constexpr int64_t kMseSumChunk = int64_t{1} << 30;

inline jit::Kernel k_mse_sum{"mse_sum", &mse_sum_kernel, {"pred", "target", "out", "n"},
                             Meta{{"BLOCK", kMseSumBlock}}};

// One launch of mse_sum_kernel: `count` elements from element `offset`, on `grid` programs.
struct MseSumLaunch {
  int64_t offset = 0, count = 0;
  uint32_t grid = 0;
};

// The launches that cover n elements: chunks of at most `chunk` elements, each on
// min(blocks of the chunk, max_programs) programs (max_programs >= 1). None for n = 0.
inline std::vector<MseSumLaunch> mse_sum_launches(int64_t n, int64_t max_programs, int64_t block = kMseSumBlock,
                                                  int64_t chunk = kMseSumChunk) {
  std::vector<MseSumLaunch> v;
  max_programs = std::max<int64_t>(max_programs, 1);
  for (int64_t off = 0; off < n; off += chunk) {
    const int64_t count = std::min(chunk, n - off);
    const int64_t blocks = (count + block - 1) / block;
    v.push_back({off, count, static_cast<uint32_t>(std::min(blocks, max_programs))});
  }
  return v;
}

}  // namespace tessel::torch_ext::kernels
