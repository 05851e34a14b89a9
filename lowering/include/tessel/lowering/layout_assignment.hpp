// Chooses the layout every tile value of a kernel is computed in.
#pragma once
#include <map>
#include <optional>
#include <vector>

#include "tessel/ir/ir.hpp"
#include "tessel/lowering/layout.hpp"

namespace tessel::lowering {

// The natural layout of each value (indexed by ir::Value::id; nullopt for scalars).
//
// Every tile shape gets one default layout (default_layout with the narrowest element size
// that a load or store of that shape moves), so elementwise chains need no conversion.
// Then, walking the kernel backwards, a value whose every use asks for the same other
// layout takes it: expand_dims operands ask for the slice of their result's layout and
// broadcast operands for their result's layout, and elementwise users pass that request on
// to their own operands (so arange -> addptr -> load feeding a [None, :] is loaded directly
// in the slice layout). Uses that disagree leave the value in its default layout; the
// lowering then recomputes cheap producers or converts through shared memory.
// Loop-carried values and loop results always use their shape's default layout.
struct LayoutAssignment {
  std::vector<std::optional<Layout>> by_value;
  std::map<ir::Shape, Layout> defaults;  // per tile shape

  const Layout& of(const ir::Value* v) const;
  const Layout& default_for(const ir::Shape& s) const;
};

LayoutAssignment assign_layouts(const ir::Function& f, int num_warps);

// The layout an op wants operand `i` in when its result (or, for a store, the op itself)
// is computed in layout `l`; nullopt when the operand is a scalar or the op does not care.
std::optional<Layout> operand_layout(const ir::Op& op, int i, const Layout& l);

}  // namespace tessel::lowering
