// Dots on tensor cores: a dot's mma.sync / wgmma plan, and the loads it copies straight into
// its shared-memory staging (cp.async) instead of through registers.
#pragma once
#include <string>
#include <optional>

#include "plan/axis_analysis.hpp"
#include "plan/layout_assignment.hpp"
#include "plan/mma_layout.hpp"
#include "tessel/lowering/compile.hpp"

namespace tessel::lowering {

// The tensor-core plan of `dot` on o.target with its accumulator in the layout `layouts`
// gives it; nullopt when it has none (the FMA path).
std::optional<MmaPlan> plan_dot(const ir::Op& dot, const Options& o, const LayoutAssignment& layouts);

// The dot that is the only user of a load's tile, later in the same block with nothing that
// writes memory in between (so issuing the load at the dot reads the same values), and which
// operand the tile is; null when there is none.
const ir::Op* sole_dot_user(const ir::Op& load, int& operand);

// A constant 0 (or a splat of one), not -0.0.
bool is_zero_constant(const ir::Value* v);

// Why the dot that is the sole user of `load` (planned `mma`) does not copy its tile into its
// staging with cp.async, or "" when it does. It copies a single-use 2-D tile with zero (or no)
// `other` in 16-byte copies along the staging's rows (a [N][K]-staged b: a tile loaded
// contiguous along k), and not tf32 inputs (rounded on their way through registers). Copies
// narrower than 16 bytes name the kernel arguments whose launch values were not divisible by 16.
std::string copy_mismatch(const ir::Function& f, const ir::Op& load, int operand, const MmaPlan& mma, int uses,
                          const AxisAnalysis& axis, const Layout& l);

}  // namespace tessel::lowering
