// Tensor maps at launch: recipes over a kernel's own arguments, encoded by the driver
// (cuTensorMapEncodeTiled) and passed after those arguments. Kernels whose producer warps copy
// by TMA (warp_specialize with tma, sm_90a) take one per TMA-copied operand; the JIT and the
// bundle runtime both build them with the functions here.
#pragma once
#include <cuda.h>

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "tessel/runtime/tensor_map_cache.hpp"

namespace tessel::rt {

// coeff * prod(ints[p] for p in params): a term of an integer polynomial over the kernel's
// integer arguments (parameter indices; repeats allowed).
struct TensorMapTerm {
  int64_t coeff = 0;
  std::vector<int> params;
  friend bool operator==(const TensorMapTerm&, const TensorMapTerm&) = default;
};
using TensorMapPoly = std::vector<TensorMapTerm>;
int64_t evaluate(const TensorMapPoly& p, std::span<const int64_t> ints);

// One dimension of a row-permuted view after the columns: the distance in rows between
// neighbours along it and the box's extent along it.
struct TensorMapViewDim {
  int64_t row_step = 1;
  int box = 1;
  friend bool operator==(const TensorMapViewDim&, const TensorMapViewDim&) = default;
};

// The global tensor at argument base_param (16-byte aligned): rows x cols elements, row_stride
// elements between rows, columns contiguous. Copied in boxes of box_cols x box_rows with the
// swizzle_bytes pattern (32, 64 or 128); elements outside the tensor read as zero. With a view
// (the wgmma A operand's row permutation), the rows are seen as the view's dimensions instead:
// every one but the last exactly one box long, the last as long as the rows need.
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

// `ints`: every kernel argument as an integer (0 for pointers and floats); `base`: the address
// argument base_param holds. Throws std::invalid_argument naming `kernel` when the arguments
// break TMA's rules (base address or row stride not a multiple of 16 bytes).
TensorMapShape tensor_map_shape(const TensorMapRecipe& r, std::span<const int64_t> ints, uint64_t base,
                                std::string_view kernel);
// tensor_map_shape, then the driver (or this thread's TensorMapCache, when the same map was
// encoded before); rt::CudaError when the driver refuses.
void encode_tensor_map(CUtensorMap& out, const TensorMapRecipe& r, std::span<const int64_t> ints, uint64_t base,
                       std::string_view kernel);

}  // namespace tessel::rt
