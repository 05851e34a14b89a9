// Tensor maps a kernel takes for its TMA copies (sm_90a, warp_specialize): what the launch
// must build, from the kernel's own arguments, and pass after them.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tessel::ir {

// An integer polynomial over the kernel's integer parameters: sum of coeff * prod(args[p]).
struct TmaTerm {
  int64_t coeff = 0;
  std::vector<int> params;  // parameter indices (repeats allowed)
  friend bool operator==(const TmaTerm&, const TmaTerm&) = default;
};
using TmaPoly = std::vector<TmaTerm>;
// (The runtime evaluates them at each launch: rt::evaluate over the runtime's copy of the
// recipe, jit/src/tma_encode.cpp.)
std::string to_string(const TmaPoly& p, std::span<const std::string> param_names);

// One 2-D tensor map (cuTensorMapEncodeTiled): global tensor at args[base_param] (16-byte
// aligned), `rows` x `cols` elements with `row_stride` elements between rows (columns
// contiguous), copied in boxes of `box_cols` x `box_rows` elements into shared memory with
// the `swizzle_bytes` pattern (128, 64 or 32); elements outside the tensor read as zero. The
// launch passes it as a 64-byte-aligned 128-byte parameter after the kernel's own parameters.
struct TmaMap {
  enum class Elem { F16, BF16 };
  Elem elem = Elem::F16;
  int base_param = -1;
  TmaPoly rows, cols, row_stride;
  int box_cols = 0, box_rows = 0;
  int swizzle_bytes = 128;
  // A row-permuted view (view_warpgroups > 0): the wgmma A operand of a tile of box_rows rows
  // staged for that many warpgroups (lowering's SmemTile::physical_row). Tile row
  // R * 32 G + g * 32 + w * 8 + r with R = 2 i + h lands in staging row
  // (G i + g) * 64 + w * 16 + h * 8 + r, so the tensor is seen with dimensions (columns, r, h,
  // w, g, i) - g only when G > 1, i only when box_rows > 64 G, at most 5 in all - and one box
  // copies the whole tile in staging order. Only tiles wholly inside the tensor whose first row
  // is a multiple of view_unit() are copied so (the per-dimension bounds cannot clip rows);
  // the others take the plain 8-row boxes.
  int view_warpgroups = 0;
  int elem_bytes() const { return 2; }
  friend bool operator==(const TmaMap&, const TmaMap&) = default;
};

// The dimensions of a view after the columns, innermost first: the distance in rows between
// neighbours along it, and the box's extent. The last one moves with the tile's first row.
struct TmaViewDim {
  int64_t row_step;
  int box;
};
std::vector<TmaViewDim> view_dims(const TmaMap& m);
// The last view dimension's row step: a tile's first row must be a multiple of it.
int64_t view_unit(const TmaMap& m);
// Whether a tile of `rows` rows staged for `warpgroups` warpgroups can be copied as a view.
bool view_fits(int warpgroups, int rows);

}  // namespace tessel::ir
