// Demand order: a register-pressure pass run on the optimised LLVM IR before NVPTX codegen.
//
// The lowering emits tile ops one at a time over every register of a tile (all of v = x + b,
// then all of erf(v), ...), so a chain of elementwise ops over a 128-register accumulator holds
// several whole tiles live at once. NVPTX selects instructions in IR order and ptxas only
// partly undoes that, so such epilogues ran out of registers (255 and spills) where one element
// at a time needs a handful. Within each basic block this pass keeps every instruction that
// touches memory, has side effects, is convergent or is a tensor-core op (the anchors) in its
// order, and places each pure arithmetic value just before the first instruction that needs it,
// depth first: a store pulls its element's whole chain in behind the previous element's. Up to
// four consecutive independent anchors pull their chains in together, interleaved, for ILP.
// Inline asm is an anchor unless marked kSinkToUse (pure: the producer warps' copy addresses).
// Values only later blocks use stay in the block, after its anchors. (Recomputing cheap values
// instead of holding them was tried and dropped: NVPTX's SelectionDAG merges identical nodes
// within a block, so the copies never reached the PTX.)
#pragma once
#include <llvm/IR/Function.h>

namespace tessel::lowering {

void order_by_demand(llvm::Function& f);

// Metadata on a pure inline-asm call (no memory, no side effects) that the order may move like
// arithmetic: the producer warps' copy addresses (expand_pointers).
inline constexpr const char* kSinkToUse = "tessel.sink";

}  // namespace tessel::lowering
