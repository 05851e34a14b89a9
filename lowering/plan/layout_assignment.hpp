// Chooses the layout every tile value of a kernel is computed in.
#pragma once
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tessel/ir/ir.hpp"
#include "plan/axis_analysis.hpp"
#include "plan/layout.hpp"

namespace tessel::lowering {

// The natural layout of each value (indexed by ir::Value::id; nullopt for scalars).
//
// Every tile shape gets one default layout (default_layout with the narrowest element size
// that a load or store of that shape moves, and warps kept off the dim that tiles of that
// shape are reduced or scanned along), so elementwise chains need no conversion.
//
// Anchors come first, walking forwards: a reduction's result lives in the slice of its
// operand's layout (that is where the reduction leaves it, in every thread along the reduced
// dim), and the values computed from anchored values inherit the anchor: elementwise ops,
// expand_dims / broadcast back to the parent layout, loop-carried values they feed, and
// stores (which then store straight from the slice layout). So `x - max(x, 1)[:, None]` and
// `store(out + rows, sum(x, 1))` need no conversion.
//
// Then, walking the kernel backwards, a value that is not anchored and whose every use asks
// for the same other layout takes it: expand_dims operands ask for the slice of their
// result's layout, broadcast operands for their result's layout, reductions for the layout
// whose slice is their result's, and elementwise users pass that request on to their own
// operands (so arange -> addptr -> load feeding a [None, :] is loaded directly in the slice
// layout). Uses that disagree leave the value in its default layout; the lowering then
// recomputes cheap producers or converts through shared memory.
struct LayoutAssignment {
  std::vector<std::optional<Layout>> by_value;
  std::map<ir::Shape, Layout> defaults;              // per tile shape
  std::unordered_map<const ir::Op*, Layout> stores;  // per store of a tile (looked up only)

  const Layout& of(const ir::Value* v) const;
  const Layout& default_for(const ir::Shape& s) const;
  // The layout an op is computed in: its tile result's, or a store's; null for scalar ops.
  const Layout* of_op(const ir::Op& op) const;
};

// `wgmma` (sm_90a targets): dots that wgmma can compute get wgmma_accumulator_layout
// (mma_layout.hpp), every warp along M, rather than mma_accumulator_layout.
//
// `axis` (when given): a 2-D load whose pointers are contiguous along dim 0 and not along the
// last dim (Triton's K^T idiom: `k + offs_n[None, :] * stride + offs_d[:, None]`) is anchored,
// with its pointer tile (and the loop-carried pointers it is read through), in
// layout_along(dim 0), so it moves 16-byte vectors down its columns instead of scalars.
//
// Register B: a dot on mma.sync (f16/bf16, f32 accumulator, every warp along N) whose B is an
// unpack of 8 fields per word along K, through elementwise ops (W4A16's dequantisation), has
// that unpack's result anchored in mma_b_register_layout, read from its words in the
// lane-split words layout (unpack_operand_layout), and its loaded words (with their pointers)
// in copy_layout: B's registers are then its mma fragments and the dequantised tile never goes
// through shared memory (MmaPlan::b_in_registers).
LayoutAssignment assign_layouts(const ir::Function& f, int num_warps, bool wgmma = false,
                                const AxisAnalysis* axis = nullptr);

// The layout an op wants operand `i` in when its result (or, for a store, the op itself)
// is computed in layout `l`; nullopt when the operand is a scalar or the op does not care.
// Fields per word of an unpack op (its word width / bits).
inline int unpack_count(const ir::Op& op) {
  return ir::bit_width(op.operands[0]->type.dtype.scalar) / static_cast<int>(op.int_attr("bits"));
}

std::optional<Layout> operand_layout(const ir::Op& op, int i, const Layout& l);
// Sums, extrema, arg-extrema and reductions with a combine body (their result is a slice).
bool is_reduction(const ir::Op& op);
// The tile operands of `op` (computed in layout `l`) converted to the layouts it reads them in
// before it is lowered, in operand order: (operand index, layout). None for a scalar op, and
// none for a store (its layout may widen by the shared memory free where it is lowered:
// wider_store_layout) or a reduction (reduce_source_layout): those fetch their operands first.
std::vector<std::pair<int, Layout>> operands_converted_first(const ir::Op& op, const Layout* l);

// The layout a dot's result is anchored in: wgmma_accumulator_layout where `wgmma` and it
// applies, else mma_accumulator_layout; nullopt for results smaller than 16 x 8.
std::optional<Layout> dot_accumulator_layout(const ir::Op& dot, int num_warps, bool wgmma);

}  // namespace tessel::lowering
