// The shapes of the exchanges through shared memory that layout conversions, reductions across
// warps, scans, reshapes and atomics make (write, one barrier, read): how many bytes each
// request asks SharedSlots for, and how a 2-D conversion is cut into chunks of columns to fit
// the shared memory it may use without costing occupancy. LLVM-free: the emitter
// (emit/lower_convert.cpp) asks these, then emits the accesses; a planner walking the IR asks
// the same (issue 25).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "plan/layout.hpp"
#include "plan/layout_assignment.hpp"
#include "tessel/ir/types.hpp"

namespace tessel::lowering {

// One exchange of `slots` items of several channels (a value and, say, its index), each
// channel in its own 16-byte-aligned array of `channel_bytes[c]`-byte elements: the arrays'
// offsets and the request's bytes.
struct ExchangeShape {
  std::vector<int64_t> offset;
  int64_t bytes = 0;
};
ExchangeShape exchange_shape(const std::vector<int64_t>& channel_bytes, int64_t slots);

// 2-D conversions of f16, bf16, f32 or 32-bit integer tiles whose rows are 128 bytes or more go
// through rows padded by 16 bytes with vector accesses (the padding spreads a column's writes
// over the banks); others element by element (exchange_shape of the whole tile).
bool vector_convertible(const ir::Type& t);
int64_t padded_bytes(const ir::Shape& s, int64_t cols, int64_t elem_bytes);
// The columns converted at a time: all of them when the padded tile fits `budget` (the shared
// memory a conversion may use without costing occupancy: SharedSlots::reusable / growable),
// else the target's column footprint where both layouts' footprints tile it (each chunk is then
// held by the same registers of every thread); a barrier separates the chunks.
int64_t chunk_columns(const ir::Shape& s, int64_t elem_bytes, const Layout& from, const Layout& to, int64_t budget);

// A layout of 16-byte vectors for storing a 2-D tile held in narrower pieces (a dot's
// accumulator), converted within `budget`: `whole` (the shape's default layout) when the padded
// tile fits, else chunks of columns, the widest that fits; nullopt when none does.
std::optional<Layout> vector_store_layout(const Layout& whole, const Layout& from, const ir::Shape& s,
                                          int64_t elem_bytes, int64_t budget);

// The layout a store whose operands are held in `l` writes from: for a 2-D f16, bf16, f32 or i32
// tile in a layout that stores narrower vectors than the shape's default would (a dot's
// accumulator: 4 or 8 bytes a piece), vector_store_layout's 16-byte one when it fits `budget`
// and gives wider accesses (access_vector_width); else nullopt (the store writes from `l`).
std::optional<Layout> wider_store_layout(const LayoutAssignment& layouts, const AxisAnalysis& axis,
                                         const ir::Op& store, const Layout& l, int64_t budget);

}  // namespace tessel::lowering
