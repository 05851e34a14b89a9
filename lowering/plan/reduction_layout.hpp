// Layout math of reductions, scans and register-level reshapes: which registers, lanes and
// warps meet. Pure integer math (no LLVM), unit-tested on the CPU by simulating every thread.
//
// A reduction along tile dim `axis` (parent dim p) of a tile in layout L runs in three stages:
//  1. in thread: each thread combines the registers that differ only along `axis`;
//  2. in warp: butterfly shuffles (xor of the lane id) across the lanes that differ only in
//     their lane coordinate along p; afterwards every such lane holds the same partial;
//  3. across warps: when several warps hold distinct parts of the dim, each writes its
//     partial to shared memory, one barrier, and every thread combines all warps' partials.
// The result is in slice_layout(L, axis): every thread along p holds the full result, which
// is what expand_dims + broadcast of the result need (no conversion).
// Replication (a dim smaller than the layout's footprint) is respected at every stage: only
// registers, lanes and warps holding distinct elements are combined, so sums count each
// element once.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "tessel/ir/types.hpp"
#include "plan/layout.hpp"

namespace tessel::lowering {

// A layout whose reduction along tile dim `axis` has layout `result`:
// slice_layout(unslice_layout(r, axis), axis) == r. nullopt when `result` is not such a slice
// (no sliced parent dim can take tile position `axis`). With one sliced dim it inverts
// slice_layout exactly; when several adjacent sliced dims could take the position (a 3-D tile
// reduced twice) it picks the last, which may not be the layout the operand was sliced from.
std::optional<Layout> unslice_layout(const Layout& result, int axis);
// The layout a reduction along `axis` reads its operand in: the operand's own (`natural`) when
// its slice is the result's layout `result` (null: a scalar result), else the result's
// unslice where there is one (else the natural one, the result converted afterwards).
Layout reduce_source_layout(const Layout& natural, const Layout* result, int axis);

struct ReducePlan {
  int axis = 0;
  int parent_dim = 0;
  bool scalar_result = false;  // a rank-1 operand reduces to a scalar
  Layout result;               // slice_layout(src, axis); meaningless for a scalar result
  ir::Shape result_shape;      // the operand's shape without `axis`
  int64_t result_numel = 1;
  // Per result register (one for a scalar result): the operand registers holding distinct
  // elements along `axis`, in increasing coordinate order.
  std::vector<std::vector<int64_t>> groups;
  std::vector<int> lane_masks;  // butterfly stages: xor masks of the lane id, smallest first
  int lanes = 1;                // distinct lane coordinates along p (2^|lane_masks|)
  int lane_stride = 1;
  int warps = 1;                // distinct warp coordinates along p (1: no shared-memory stage)
  int warp_stride = 1;          // warp coordinate j = (warp / warp_stride) % warps
};

ReducePlan plan_reduce(const Layout& src, const ir::Shape& shape, int axis);

// An inclusive scan along tile dim `axis` keeps the layout. A thread's registers along `axis`
// form runs of consecutive coordinates, one per repetition of the layout's footprint; lanes
// scan run totals with shuffles (shfl.up), warps through shared memory, and repetitions carry
// their totals forward.
struct ScanRun {
  int64_t rep = 0;
  std::vector<int64_t> regs;  // consecutive coordinates along `axis`, increasing
};

struct ScanPlan {
  int axis = 0;
  int parent_dim = 0;
  int64_t reps = 1;  // repetitions of the footprint along `axis`
  // Per line (one combination of the other dims' registers): its runs, by repetition.
  std::vector<std::vector<ScanRun>> lines;
  // Registers duplicating an element held by another register of the same thread (the dim
  // is smaller than size_per_thread): (register, register to copy).
  std::vector<std::pair<int64_t, int64_t>> copies;
  int lanes = 1;  // distinct lane coordinates along p
  int lane_stride = 1;
  int warps = 1;  // distinct warp coordinates along p
  int warp_stride = 1;
  int64_t other_numel = 1;  // elements of the tile with the `axis` coordinate fixed
};

ScanPlan plan_scan(const Layout& l, const ir::Shape& shape, int axis);

// Maps coordinates of a destination tile to the coordinates of the source element it copies.
using CoordMap = std::function<std::vector<int64_t>(const std::vector<int64_t>&)>;

// For each register of a tile of `dshape` in layout `dst`, the register of the source tile
// (`sshape`, layout `src`) holding, in the same thread, element to_src(coords): when one
// register index serves every thread, the copy is free. nullopt when some thread would need
// an element it does not hold (the copy then goes through shared memory).
std::optional<std::vector<int64_t>> register_map(const Layout& dst, const ir::Shape& dshape, const Layout& src,
                                                 const ir::Shape& sshape, const CoordMap& to_src);

// Coordinate maps of reshape (row-major, same element count) and 2-D transpose.
CoordMap reshape_map(const ir::Shape& from, const ir::Shape& to);  // result coords -> operand coords
CoordMap transpose_map();
// Elements of padding a transpose through shared memory adds to each row (its column-wise
// writes fall in distinct banks); 0 for a reshape.
int64_t reshape_row_pad(bool trans, ir::DType d);

}  // namespace tessel::lowering
