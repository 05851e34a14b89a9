// Reductions along an axis (sum, max, min, argmax, argmin, reduce with a combine function) and cumsum.
#pragma once
#include <functional>
#include <type_traits>

#include "tessel/lang/tile.hpp"

namespace tessel::lang {

// Each reduces a tile (rank >= 1) along `axis` (0..rank-1). The result drops that dimension
// (a rank-1 tile gives a scalar) unless keep_dims, which keeps it with size 1. The order in
// which elements are combined is unspecified (the interpreter and the GPU differ), so float
// results agree only up to rounding.
//
// sum accumulates in a wider type, as Triton's tl.sum does: f16 and bf16 are cast to f32 first,
// and i1, i8 and i16 to i32; other types keep theirs. Integer sums wrap.
Tile sum(const Operand& x, int axis, bool keep_dims = false);
// The largest / smallest element, same dtype (ints, i1 included, or floats). NaN wins.
// With `using namespace tessel::lang` next to `using namespace std`, qualify or use the
// reduce_max / reduce_min aliases below.
Tile max(const Operand& x, int axis, bool keep_dims = false);
Tile min(const Operand& x, int axis, bool keep_dims = false);
inline Tile reduce_max(const Operand& x, int axis, bool keep_dims = false) { return max(x, axis, keep_dims); }
inline Tile reduce_min(const Operand& x, int axis, bool keep_dims = false) { return min(x, axis, keep_dims); }
// The i32 index of the largest / smallest element along the axis. Ties give the smallest
// index; NaN counts as larger than every number for argmax and smaller for argmin, so the
// first NaN wins.
Tile argmax(const Operand& x, int axis, bool keep_dims = false);
Tile argmin(const Operand& x, int axis, bool keep_dims = false);
// Inclusive prefix sum along `axis`, same shape. Accumulates like sum (f16/bf16 -> f32,
// i1/i8/i16 -> i32).
Tile cumsum(const Operand& x, int axis);

namespace detail {
// Opens a generic reduce op and switches the trace into its combine body; restores the
// insertion point when destroyed (also when the combine function throws).
class CombineScope {
 public:
  CombineScope(const Operand& x, int axis);
  ~CombineScope();
  CombineScope(const CombineScope&) = delete;
  CombineScope& operator=(const CombineScope&) = delete;

  Tile acc() const { return acc_; }
  Tile elem() const { return elem_; }
  // Ends the body with `yield combined` and returns the reduce's result.
  Tile finish(const Tile& combined, bool keep_dims);

 private:
  Loc loc_;
  ir::Op* op_ = nullptr;
  ir::Block* outer_ = nullptr;
  Tile acc_, elem_;
  bool open_ = false;
};
}  // namespace detail

// A reduction with a user combine function, e.g.
//   auto m = reduce(x, 1, [](Tile a, Tile b) { return maximum(a, b); });
// `combine(acc, elem)` is called once, at trace time, with two scalar tiles of x's dtype, and
// must return a scalar of that dtype; what it records becomes the reduction's body. It may use
// arithmetic, comparisons, where, math and tiles/scalars from outside, but not load, store,
// atomics, range loops or assignments to outer Vars. It should be associative and commutative:
// the combine order is unspecified (acc is the lower-index side in the interpreter's tree).
template <class F>
Tile reduce(const Operand& x, int axis, F&& combine, bool keep_dims = false) {
  static_assert(std::is_invocable_v<F&, Tile, Tile>,
                "reduce: the combine function must be callable as combine(Tile acc, Tile elem)");
  static_assert(std::is_convertible_v<std::invoke_result_t<F&, Tile, Tile>, Tile>,
                "reduce: the combine function must return a Tile (a scalar of the element type)");
  detail::CombineScope scope(x, axis);
  Tile combined = std::invoke(combine, scope.acc(), scope.elem());
  return scope.finish(combined, keep_dims);
}

}  // namespace tessel::lang
