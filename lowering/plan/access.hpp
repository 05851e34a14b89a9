// Memory access widths: the widest vector the axis analysis proves safe for a load or store.
#pragma once
#include <cstdint>

#include "plan/axis_analysis.hpp"
#include "plan/layout.hpp"
#include "tessel/ir/ir.hpp"

namespace tessel::lowering {

// What bounds a vector access through pointer tile `ptr` with `mask` (null: none) in layout `l`
// of a tile of `shape` and `elem_bytes`, each in elements along the layout's fastest dimension
// (the last one unless layout_along chose another): the layout's contiguous run per thread, the
// pointers' contiguity, their divisibility (alignment), and the mask's constancy.
struct AccessLimits {
  int fast = 0;  // the dimension
  int64_t run = 1, contiguity = 1, alignment = 1, mask = 1;
};
AccessLimits access_limits(const AxisAnalysis& axis, const ir::Value* ptr, const ir::Value* mask, const Layout& l,
                           const ir::Shape& shape, int64_t elem_bytes);

// The widest vector (in elements) for such an access: the smallest of its limits and 16 bytes.
int64_t access_vector_width(const AxisAnalysis& axis, const ir::Value* ptr, const ir::Value* mask, const Layout& l,
                            const ir::Shape& shape, int64_t elem_bytes);

// Does `load` in layout `l` give every thread 16 contiguous bytes per register group (a
// cp.async of 16 bytes)?
bool copies_16_bytes(const AxisAnalysis& axis, const ir::Op& load, const Layout& l);

}  // namespace tessel::lowering
