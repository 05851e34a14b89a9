// Distributed tile layouts: which (register, lane, warp) of a CTA holds which tile element.
//
// Pure integer math with no LLVM in it, so it is unit-tested exhaustively on the CPU; the
// lowering emits exactly these formulas as LLVM IR.
//
// A Layout is a blocked distribution over a "parent" index space of rank P: along parent
// dim p a thread holds size_per_thread[p] consecutive elements, threads_per_warp[p] lanes and
// warps_per_cta[p] warps tile the dim, giving a footprint F[p] = spt * tpw * wpc. Lanes,
// warps and registers are numbered with order[0] the fastest-varying dim. Parent dims named
// in `sliced` are absent from tiles of this layout (Triton's slice layout): tiles have rank
// P - |sliced| and every thread position along a sliced dim holds the same elements.
//
// Along tile dim d (parent dim p, size S, a power of two) a thread holds
// R = spt * max(1, S / F) registers; register r = rep * spt + within holds coordinate
//   (rep * F + (warp_p * tpw + lane_p) * spt + within) mod S.
// When S < F the mod wraps and several threads (or registers) hold the same element
// (replication); exactly one of them is its owner: the one whose unreduced coordinate is < S
// along every present dim and whose thread coordinate is 0 along every sliced dim.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessel/ir/types.hpp"
#include "tessel/lowering/target.hpp"

namespace tessel::lowering {

struct Layout {
  std::vector<int> size_per_thread;   // per parent dim
  std::vector<int> threads_per_warp;  // per parent dim, product 32
  std::vector<int> warps_per_cta;     // per parent dim, product num_warps
  std::vector<int> order;             // parent dims, fastest first
  std::vector<int> sliced;            // sorted parent dims absent from the tile

  int parent_rank() const { return static_cast<int>(order.size()); }
  int rank() const { return parent_rank() - static_cast<int>(sliced.size()); }
  bool is_sliced(int parent_dim) const;
  int parent_dim(int tile_dim) const;  // the parent dim of a tile dim
  int num_warps() const;
  int64_t footprint(int parent_dim) const;
  std::string str() const;  // "blocked{spt=[1,4], tpw=[2,16], wpc=[4,1], order=[1,0]}[ sliced=[1]]"
  friend bool operator==(const Layout&, const Layout&) = default;
};

// The layout tessel gives a tile of `shape` (rank >= 1) when nothing asks for another:
// the last dim is contiguous; size_per_thread along it is 16 bytes / elem_bytes, capped by
// the dim and by numel / threads; lanes then warps fill the last dim first. Leftover lanes
// and warps (tiles smaller than the CTA) replicate along dim 0.
// With `reduced_dim` (a dim the kernel reduces tiles of this shape along), warps fill the
// other dims first, so that where the shape allows each warp reduces whole rows without
// shared memory; lanes stay as they are (coalescing).
Layout default_layout(const ir::Shape& shape, int elem_bytes, int num_warps, int reduced_dim = -1);
// The same with tile dim `fast_dim` contiguous instead of the last (order = fast_dim, then the
// others from the last down): the layout of a tile read through pointers that are contiguous
// along `fast_dim` (Triton's K^T idiom: contiguous along dim 0), so that each thread's run of
// 16 bytes along that dim is one vector access.
Layout layout_along(const ir::Shape& shape, int elem_bytes, int num_warps, int fast_dim);
// A layout to copy a tile of `shape` with: default_layout's, but with runs of 16 bytes along
// the last dim however few elements each thread then gets (threads left over replicate), so a
// small tile (a row of scales) still moves in 16-byte vectors.
Layout copy_layout(const ir::Shape& shape, int elem_bytes, int num_warps);
// The layout of expand_dims' operand when its result has layout `l`: tile dim `tile_dim`
// of `l` becomes a sliced dim.
Layout slice_layout(const Layout& l, int tile_dim);
// The layout of unpack's result whose operand has layout `words`: each thread's run along
// tile dim `tile_dim` holds `count` times as many elements (a word's fields stay in its thread).
Layout unpack_result_layout(const Layout& words, int tile_dim, int count);
// unpack's operand layout for result layout `l` of a tile `extent` elements long along
// `tile_dim`:
//  - when each thread's run along `tile_dim` is a multiple of `count` elements, the same
//    layout with runs `count` times shorter (every word in one thread);
//  - when the lanes along `tile_dim` split each word instead (is_lane_split_unpack: runs of
//    s elements, t lanes, s * t == count, one warp along the dim), a layout in which every one
//    of those t lanes holds every word of its column: spt extent / count along the dim, so the
//    footprint wraps (replication). Lane c of the t then takes fields c*s .. c*s + s - 1.
//  - else nullopt.
std::optional<Layout> unpack_operand_layout(const Layout& l, int tile_dim, int count, int64_t extent);
// Whether result layout `l` splits each word's `count` fields among the lanes along
// `tile_dim` (the second case above).
bool is_lane_split_unpack(const Layout& l, int tile_dim, int count);

struct ThreadPos {
  int64_t reg = 0;
  int lane = 0;
  int warp = 0;
  friend bool operator==(const ThreadPos&, const ThreadPos&) = default;
};

// All functions below take a tile shape of rank l.rank() whose dims are powers of two.
// Registers per thread along tile dim d, and in all.
int64_t regs_along(const Layout& l, const ir::Shape& shape, int tile_dim);
int64_t num_regs(const Layout& l, const ir::Shape& shape);
// Register numbering: per-tile-dim register indices <-> flat register index (order[0] fastest).
std::vector<int64_t> reg_dims(const Layout& l, const ir::Shape& shape, int64_t reg);
int64_t reg_index(const Layout& l, const ir::Shape& shape, const std::vector<int64_t>& rdims);
int64_t reg_stride(const Layout& l, const ir::Shape& shape, int tile_dim);
// Lane / warp / thread coordinate along a parent dim.
int lane_coord(const Layout& l, int lane, int parent_dim);
int warp_coord(const Layout& l, int warp, int parent_dim);
int thread_coord(const Layout& l, int lane, int warp, int parent_dim);
// How far apart, in lane id / warp id, neighbouring lane / warp coordinates along a parent dim are.
int lane_stride(const Layout& l, int parent_dim);
int warp_stride(const Layout& l, int parent_dim);
// The register's constant part of the coordinate along tile dim d before the mod:
// rep * F + within (the thread's part is thread_coord * spt).
int64_t reg_offset(const Layout& l, const ir::Shape& shape, int tile_dim, int64_t r_d);
// Coordinates of the element held by a (register, lane, warp).
std::vector<int64_t> element_of(const Layout& l, const ir::Shape& shape, ThreadPos p);
// Ownership split into its compile-time part (per register) and run-time part (per thread).
bool reg_is_owner(const Layout& l, const ir::Shape& shape, int64_t reg);
// A thread owns its registers' elements iff thread_coord(p) < owner_thread_limit(p) for
// every parent dim p (1 for sliced dims; tpw*wpc, i.e. no condition, when S >= F).
int64_t owner_thread_limit(const Layout& l, const ir::Shape& shape, int parent_dim);
bool thread_is_owner(const Layout& l, const ir::Shape& shape, int lane, int warp);
// Every thread owns its registers' elements (no parent dim limits the owners): no run-time test.
bool every_thread_owns(const Layout& l, const ir::Shape& shape);
bool is_owner(const Layout& l, const ir::Shape& shape, ThreadPos p);
// The owner of an element.
ThreadPos owner_of(const Layout& l, const ir::Shape& shape, const std::vector<int64_t>& coords);
// The tile dim whose elements a thread holds consecutively: the tile dim of the first parent
// dim in `order` that is not sliced (the last tile dim for every layout but layout_along's).
int fastest_tile_dim(const Layout& l);
// Consecutive elements along fastest_tile_dim held in one thread's registers: the widest
// vector a load or store can use.
int64_t contiguous_per_thread(const Layout& l, const ir::Shape& shape);

}  // namespace tessel::lowering
