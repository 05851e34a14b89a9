// The roofline probes: a copy kernel (bandwidth ceiling) and an FMA-chain kernel (compute ceiling).
#pragma once
#include "tessel/tessel.hpp"

namespace tessel::samples {
using namespace tessel::lang;

// out = x: 8 bytes moved per element, no flops.
inline void copy_kernel(Ptr<f32> x, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask), mask);
}

// Each element runs a dependent chain of ITERS fused multiply-adds in registers: exactly
// 2 * ITERS flops per element (the C++ loop unrolls at trace time; nothing else computes).
// The threads' several elements are independent chains, which hides the FMA latency.
inline void fma_chain_kernel(Ptr<f32> x, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  const int ITERS = m["ITERS"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  Tile v = load(x + offs, mask);
  for (int i = 0; i < ITERS; ++i) v = fma(v, 0.999f, 0.001f);  // stays bounded: converges to 1
  store(out + offs, v, mask);
}

inline jit::Kernel k_copy{"copy", &copy_kernel, {"x", "out", "n"}, Meta{{"BLOCK", 1024}}};
inline jit::Kernel k_fma_chain{"fma_chain", &fma_chain_kernel, {"x", "out", "n"},
                               Meta{{"BLOCK", 1024}, {"ITERS", 512}}};

}  // namespace tessel::samples
