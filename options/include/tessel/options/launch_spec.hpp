// The launch record: everything a launch of one compiled kernel needs besides the grid and the
// arguments. The lowering's plan produces it (its shared bytes known once emitted), the JIT
// launches from it, the disk cache stores it as-is in meta.json and bundles in bundle.json, both
// through one codec (launch_json.hpp). Tensor-map recipes are part of it: one type from the plan
// to the driver call.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tessel/options/launch.hpp"

namespace tessel {

// coeff * prod(args[p] for p in params): a term of an integer polynomial over the kernel's
// integer arguments (parameter indices; repeats allowed).
struct TensorMapTerm {
  int64_t coeff = 0;
  std::vector<int> params;
  friend bool operator==(const TensorMapTerm&, const TensorMapTerm&) = default;
};
using TensorMapPoly = std::vector<TensorMapTerm>;
// The polynomial's value on `ints` (every kernel argument as an integer; 0 for others).
int64_t evaluate(const TensorMapPoly& p, std::span<const int64_t> ints);
// "M*K + 4" with the parameters' names; "0" when empty.
std::string to_string(const TensorMapPoly& p, std::span<const std::string> param_names);

// One dimension of a row-permuted view after the columns: the distance in rows between
// neighbours along it and the box's extent along it.
struct TensorMapViewDim {
  int64_t row_step = 1;
  int box = 1;
  friend bool operator==(const TensorMapViewDim&, const TensorMapViewDim&) = default;
};

// One 2-D tensor map (cuTensorMapEncodeTiled), built at each launch from the kernel's own
// arguments: the global tensor at argument base_param (16-byte aligned), rows x cols elements,
// row_stride elements between rows, columns contiguous, copied into shared memory in boxes of
// box_cols x box_rows with the swizzle_bytes pattern (32, 64 or 128); elements outside the
// tensor read as zero. The launch passes it as a 64-byte-aligned 128-byte parameter after the
// kernel's own. With a view (the wgmma A operand's row permutation, row_permuted_view) the rows
// are seen as the view's dimensions instead: every one but the last exactly one box long, the
// last as long as the rows need; one box then copies a whole staged tile in staging order.
struct TensorMapRecipe {
  enum class Elem : uint8_t { F16, BF16 };
  Elem elem = Elem::F16;
  int base_param = -1;
  TensorMapPoly rows, cols, row_stride;
  int box_cols = 0, box_rows = 0;
  int swizzle_bytes = 128;
  std::vector<TensorMapViewDim> view;  // innermost first; empty: a plain 2-D map (rank <= 5 in all)
  static constexpr int kElemBytes = 2;
  friend bool operator==(const TensorMapRecipe&, const TensorMapRecipe&) = default;
};

// The row-permuted view of a wgmma A tile of `rows` rows staged for `warpgroups` warpgroups
// (the lowering's SmemTile::physical_row): tile row R * 32 G + g * 32 + w * 8 + r with
// R = 2 i + h lands in staging row (G i + g) * 64 + w * 16 + h * 8 + r, so the tensor is seen
// with dimensions (columns, r, h, w, g, i) - g only when G > 1, i only when rows > 64 G.
// Only tiles wholly inside the tensor whose first row is a multiple of view_unit() can be
// copied so (the per-dimension bounds cannot clip rows). Empty when it does not fit
// (view_fits false).
std::vector<TensorMapViewDim> row_permuted_view(int warpgroups, int rows);
bool view_fits(int warpgroups, int rows);
// The view's last row step: a tile's first row must be a multiple of it (0 without a view).
int64_t view_unit(const TensorMapRecipe& r);
// The warpgroups a row-permuted view was made for (0 without a view).
int view_warpgroups(const TensorMapRecipe& r);

// How to launch one compiled kernel (entry point, block, shared memory, cluster, the grid's
// contract, the parameters after the kernel's own).
struct LaunchSpec {
  std::string symbol;          // the PTX .entry name (what cuModuleGetFunction is asked for)
  int threads = 0;             // per CTA (options/launch.hpp's formula), producer warpgroup included
  int programs_per_cta = 1;    // the grid's x counts programs; CTAs along x = grid.x / this
  bool producer_warps = false; // the last kProducerWarps warps of the CTA are producers
  int cluster_ctas = 1;        // CTAs per cluster along x: grid.x must be a multiple of programs_per_cta * this
  int shared_bytes = 0;        // dynamic shared memory per CTA (over 48 KiB the function opts in)
  int params = 0;              // the kernel's own parameters; tensor maps follow them
  std::vector<TensorMapRecipe> tensor_maps;  // built from the arguments at each launch
  static constexpr size_t kMaxTensorMaps = 8;
  // The program count along x a grid must be a multiple of.
  int grid_x_multiple() const { return programs_per_cta * cluster_ctas; }
  friend bool operator==(const LaunchSpec&, const LaunchSpec&) = default;
};

// The launch's threads for these options (the formula of options/launch.hpp).
inline LaunchSpec launch_spec(std::string symbol, int num_warps, int programs_per_cta, bool producer_warps,
                              int params) {
  LaunchSpec s;
  s.symbol = std::move(symbol);
  s.threads = threads_per_cta(num_warps, programs_per_cta, producer_warps);
  s.programs_per_cta = programs_per_cta;
  s.producer_warps = producer_warps;
  s.params = params;
  return s;
}

// What is wrong with `s` ("" when nothing): threads 32..1024, a whole number of warps,
// programs_per_cta 1 or 2, cluster_ctas 1 or 2 (2 only with tensor maps), shared bytes
// 0..227 KiB, at most kMaxTensorMaps maps whose base parameters are the kernel's, boxes of
// 1..256 elements, swizzle 32/64/128, views of at most 4 dimensions that are a staged tile's
// row permutation (row_permuted_view).
std::string check(const LaunchSpec& s);

}  // namespace tessel
