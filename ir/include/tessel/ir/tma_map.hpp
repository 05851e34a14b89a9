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
// `args`: every kernel argument as an integer (pointers and floats are never named by a term).
int64_t evaluate(const TmaPoly& p, std::span<const int64_t> args);
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
  int elem_bytes() const { return 2; }
  friend bool operator==(const TmaMap&, const TmaMap&) = default;
};

}  // namespace tessel::ir
