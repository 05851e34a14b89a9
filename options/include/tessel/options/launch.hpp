// The launch record's arithmetic that every layer must agree on: the lowering sets the PTX's
// .maxntid from it, and the JIT, the cache and bundles launch that many threads.
#pragma once

namespace tessel {

// Warp specialisation adds one producer warpgroup per CTA, after the programs' warps.
inline constexpr int kProducerWarps = 4;

// Threads per CTA: 32 per warp, num_warps per program, programs_per_cta programs, plus the
// producer warpgroup where the kernel has one (warp_specialize).
constexpr int threads_per_cta(int num_warps, int programs_per_cta, bool producer_warps) {
  return 32 * num_warps * programs_per_cta + (producer_warps ? 32 * kProducerWarps : 0);
}

}  // namespace tessel
