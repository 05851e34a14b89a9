// Recompute or convert: a tile wanted in another layout than its own is computed again in that
// layout when its whole producer chain is cheap, else converted (through shared memory).
#pragma once
#include <vector>

#include "tessel/ir/ir.hpp"

namespace tessel::lowering {

// By Value::id: whether the value, a tile, is recomputed in another layout rather than converted
// there. True when every producer up to 12 ops back is pure, cheap and regionless (elementwise,
// constants, aranges, splats, broadcasts, casts, pointer arithmetic), rooted in scalars; false
// for loads, loop values, reductions, scans, reshapes, transposes, dots, unpacks and random
// numbers, which are computed once in their own layout.
std::vector<bool> recomputed_values(const ir::Function& f);

}  // namespace tessel::lowering
