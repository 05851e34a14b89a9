// Warp specialisation's roles (Options::warp_specialize): what the producer warps compute, in
// which layouts, and whether they can copy each ring's operands.
#pragma once
#include "plan/kernel_plan.hpp"

namespace tessel::lowering {

// Fills k.producer_ops, k.producer_values and k.producer_layouts from k.rings. Throws
// CompileError when the kernel has no ring loop or when a producer value depends on a dot or a
// store.
void plan_roles(KernelPlan& k);
// Throws CompileError when the producers cannot copy a cp.async ring's loads 16 bytes at a time
// in their layouts (each pointer tile in one layout through the loop).
void check_producer_rings(const KernelPlan& k);

}  // namespace tessel::lowering
