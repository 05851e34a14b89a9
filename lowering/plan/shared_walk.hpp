// The shared-memory requests of a kernel, walked from its plan before any LLVM is made: the
// same requests and barriers, in the same order, as the emitter makes while it lowers
// (SharedSlots::events), so that the slots are the plan's: elementwise chains, reductions, scans,
// reshapes and transposes, their sequential loops, layout conversions, accumulator-style stores
// and atomics, dots (FMA, mma.sync and wgmma staging), loops pipelined by cp.async (stage
// buffers, stage mbarriers, resident operands kept across loops, prefetched loads, wgmma groups
// in flight, warpgroup turns), rings (producer warps: both roles) and several programs a CTA
// (their turn words). The emitter follows the result (emit/shared_steps.hpp) and stops with an
// internal error at the first step it would take differently.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "plan/kernel_plan.hpp"
#include "plan/shared_slots.hpp"

namespace tessel::lowering {

// The kernel's shared-memory plan: its steps and decisions as the emitter will meet them, its
// slots and their placement.
SharedPlan walk_shared(const KernelPlan& k);

}  // namespace tessel::lowering
