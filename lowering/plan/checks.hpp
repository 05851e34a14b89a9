// What the lowering refuses before planning: options it cannot honour for this kernel and
// target, tiles that are not powers of two, tiles too large for a thread's registers.
#pragma once
#include "tessel/lowering/compile.hpp"

namespace tessel::lowering {

// Throws CompileError (or ResourceLimitError for a tile past the register budget) naming the
// kernel and, where there is one, the tile's source line.
void check_kernel(const ir::Function& f, const Options& o);

}  // namespace tessel::lowering
