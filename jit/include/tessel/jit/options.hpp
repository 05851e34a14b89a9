// Options that select a compiled variant of a kernel (beyond its meta-parameters).
#pragma once
#include <string>

namespace tessel::jit {

struct CompileOptions {
  int num_warps = 4;   // warps per program instance on the GPU
  int num_stages = 1;  // software-pipelining depth of runtime loops (GPU)
  // Programs sharing one CTA on the GPU (1 or 2; lowering::Options::programs_per_cta): the
  // launch's program count along x must then be a multiple of it.
  int programs_per_cta = 1;
  // A producer warpgroup per CTA for pipelined wgmma K loops (sm_90a; see
  // lowering::Options::warp_specialize): the CTA has 128 more threads.
  bool warp_specialize = false;
  // With warp_specialize: the producers copy by TMA where the loads allow it (tensor maps
  // built at each launch from the arguments; lowering::Options::tma), else by cp.async.
  bool tma = false;
  friend bool operator==(const CompileOptions&, const CompileOptions&) = default;
};

}  // namespace tessel::jit
