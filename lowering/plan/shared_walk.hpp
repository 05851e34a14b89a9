// The shared-memory requests of a kernel, walked from its plan before any LLVM is made: the
// same requests and barriers, in the same order, as the emitter makes while it lowers
// (SharedSlots::events), so that the slots can become the plan's (issue 25). This walk covers
// kernels on one program a CTA without producer warps: elementwise chains, reductions, scans,
// reshapes and transposes, normalisations, their sequential loops, layout conversions,
// accumulator-style stores and atomics, dots (FMA, mma.sync and wgmma staging) and loops
// pipelined by cp.async (stage buffers, stage mbarriers, resident operands kept across loops,
// prefetched loads, wgmma groups in flight); not yet warpgroup turns, rings (producer warps) or
// several programs a CTA: for those it says why not. The emitter checks it where it applies
// (TESSEL_CHECK_SHARED_WALK=1: compile.cpp).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "plan/kernel_plan.hpp"
#include "plan/shared_slots.hpp"

namespace tessel::lowering {

struct SharedWalk {
  std::vector<SharedSlots::Event> events;  // when the walk covers the kernel
  std::string not_covered;                 // else why not (empty when covered)
};
SharedWalk walk_shared(const KernelPlan& k);

}  // namespace tessel::lowering
