// Bit-level builtins: bitcast (the same bits as another type) and unpack (packed fields, such
// as int4 weights, as elements).
#pragma once
#include "tessel/lang/dtype.hpp"
#include "tessel/lang/tile.hpp"

namespace tessel::lang {

namespace detail {
Tile bitcast_impl(const Operand& x, ir::DType to, const Loc& loc);
Tile unpack_impl(const Operand& words, ir::DType to, int axis, int bits, int zero, const Loc& loc);
}  // namespace detail

// x's bits read as element type T of the same width: bitcast<u16>(h) gives an f16 tile's
// patterns, bitcast<f32>(u) the float whose pattern u is. Integers and floats (fp8 included)
// of equal width; not pointers or i1.
template <DTypeTag T>
Tile bitcast(const Operand& x) {
  return detail::bitcast_impl(x, ir::DType{T::scalar}, x.loc());
}

// The `bits`-wide fields of u8/u16/u32 words as elements of T, along `axis`: a tile of shape
// [..., n, ...] (n at `axis`) gives [..., n * width / bits, ...], field j of word w (bits
// j*bits .. j*bits+bits-1, least significant first) at index w * (width / bits) + j, as its
// unsigned value 0 .. 2^bits - 1, minus `zero` when given (a zero point in 0 .. 2^bits - 1;
// then T must be signed or a float). Packed int4 weights, eight per u32 along K:
//   Tile q = unpack<f16>(load(w_ptrs), /*axis=*/0, /*bits=*/4, /*zero=*/8);  // values -8..7
//   Tile w = q * scale;                                                         // symmetric int4
// Two's-complement int4 fields are unpack(words ^ 0x88888888u, axis, 4, 8). From u32 words to
// f16 (fields of up to 8 bits) and bf16 (up to 4 bits) this lowers to a few bit operations per
// pair of elements and no integer conversions; the zero point costs nothing there (it joins the
// exact subtraction that ends the conversion, where `unpack(...) - 8.0f` would be one more
// instruction per pair). Other cases shift, mask (subtract) and convert each field.
template <DTypeTag T>
Tile unpack(const Operand& words, int axis, int bits, int zero = 0, Loc loc = Loc::current()) {
  return detail::unpack_impl(words, ir::DType{T::scalar}, axis, bits, zero, loc);
}

}  // namespace tessel::lang
