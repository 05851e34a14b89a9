// Builtins: program ids, aranges, constant tiles, masked loads and stores, select and casts.
#pragma once
#include "tessel/lang/tile.hpp"

namespace tessel::lang {

// Largest number of elements in one tile (as in Triton).
inline constexpr int64_t kMaxTileElements = int64_t{1} << 20;

// The index of this program instance along grid axis 0, 1 or 2 (an i32 scalar).
Tile program_id(int axis, Loc loc = Loc::current());
// The number of program instances along grid axis 0, 1 or 2 (an i32 scalar).
Tile num_programs(int axis, Loc loc = Loc::current());
// The i32 tile [start, start+1, ..., end-1]; end - start must be a power of two.
Tile arange(int64_t start, int64_t end, Loc loc = Loc::current());

namespace detail {
Tile full_impl(const ir::Shape& shape, const Operand& value, ir::DType dtype, const Loc& loc);
Tile cast_impl(const Operand& x, ir::DType dtype, const Loc& loc);
// CompileError at `loc` unless every dim of `s` is a power of two and the tile fits the limit.
void check_tile_shape(const ir::Shape& s, const char* what, const Loc& loc);
}  // namespace detail

// A tile of `shape` with every element `value`, of element type T.
template <DTypeTag T>
Tile full(const ir::Shape& shape, const Operand& value, Loc loc = Loc::current()) {
  return detail::full_impl(shape, value, ir::DType{T::scalar}, loc);
}
template <DTypeTag T>
Tile zeros(const ir::Shape& shape, Loc loc = Loc::current()) {
  return detail::full_impl(shape, Operand(0, loc), ir::DType{T::scalar}, loc);
}
// Converts element type (float->int truncates toward zero and saturates; NaN gives 0).
template <DTypeTag T>
Tile cast(const Operand& x) {
  return detail::cast_impl(x, ir::DType{T::scalar}, x.loc());
}

// Loads through a pointer tile. Elements whose mask is false are not read and take `other`
// (0 when absent). The mask is broadcast to the pointer tile's shape and must not change it.
// (Pointer, mask and tile parameters are Operands so that a Var passed here is read at the
// user's line; a literal in those places is a CompileError.)
Tile load(const Operand& ptr, Loc loc = Loc::current());
Tile load(const Operand& ptr, const Operand& mask, Loc loc = Loc::current());
Tile load(const Operand& ptr, const Operand& mask, const Operand& other, Loc loc = Loc::current());
// Stores `value` (cast to the pointee type, broadcast to the pointer's shape) where mask is true.
void store(const Operand& ptr, const Operand& value, Loc loc = Loc::current());
void store(const Operand& ptr, const Operand& value, const Operand& mask, Loc loc = Loc::current());

// Atomic read-modify-write through a pointer tile, element by element: *p += value
// (atomic_add) or *p = max(*p, value) (atomic_max). `value` is cast to the pointee type and
// broadcast to the pointer's shape; elements whose mask is false are not touched. Returns the
// old values (0 where masked off), a tile of the pointee type with the pointer's shape. Element
// types: atomic_add on i32, i64, f32, f64; atomic_max on i32, i64, f32. Atomics from different
// programs all apply, in no particular order (float sums then differ in rounding).
//
// Memory order: relaxed by default (the atomic orders nothing else). With Order::acq_rel every
// load, store and atomic of the program before the call happens before the atomic, and every
// one after it happens after it, as seen by every program of the grid: the program that reads
// a counter's last value sees all the memory the others wrote before their increments. That is
// the "last program to arrive" pattern (one kernel sums split-K partial products):
//   store(part + ..., acc);
//   auto arrived = atomic_add(count + tile, 1, Order::acq_rel);
//   for (auto _ : range(0, where(arrived == splits - 1, 1, 0))) { ...load every part, store... }
// On the GPU: a CTA barrier, the atomics at gpu scope with release-acquire semantics, a barrier.
enum class Order { relaxed, acq_rel };
Tile atomic_add(const Operand& ptr, const Operand& value, Loc loc = Loc::current());
Tile atomic_add(const Operand& ptr, const Operand& value, Order order, Loc loc = Loc::current());
Tile atomic_add(const Operand& ptr, const Operand& value, const Operand& mask, Loc loc = Loc::current());
Tile atomic_add(const Operand& ptr, const Operand& value, const Operand& mask, Order order,
                Loc loc = Loc::current());
Tile atomic_max(const Operand& ptr, const Operand& value, Loc loc = Loc::current());
Tile atomic_max(const Operand& ptr, const Operand& value, Order order, Loc loc = Loc::current());
Tile atomic_max(const Operand& ptr, const Operand& value, const Operand& mask, Loc loc = Loc::current());
Tile atomic_max(const Operand& ptr, const Operand& value, const Operand& mask, Order order,
                Loc loc = Loc::current());

// Elementwise cond ? a : b, with a and b promoted and all three broadcast together.
Tile where(const Operand& cond, const Operand& a, const Operand& b);
Tile minimum(const Operand& a, const Operand& b);  // NaN if either is NaN
Tile maximum(const Operand& a, const Operand& b);  // NaN if either is NaN
Tile fma(const Operand& a, const Operand& b, const Operand& c);  // a*b+c rounded once (floats)

// Inserts a dimension of size 1 at `axis` (0..rank).
Tile expand_dims(const Operand& x, int axis, Loc loc = Loc::current());
// Broadcasts to `shape` (numpy rules; dims of size 1 expand).
Tile broadcast_to(const Operand& x, const ir::Shape& shape, Loc loc = Loc::current());

}  // namespace tessel::lang
