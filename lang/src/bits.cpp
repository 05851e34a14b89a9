// Bit-level builtins: bitcast and unpack (their IR ops' rules, checked here with the user's line).
#include "tessel/lang/bits.hpp"

#include <fmt/format.h>

#include "tessel/lang/builtins.hpp"
#include "tessel/lang/promote.hpp"
#include "tessel/lang/trace_context.hpp"

namespace tessel::lang::detail {
namespace {
ir::Value* value_of(const Operand& x, const char* what, const Loc& loc) {
  if (x.is_literal())
    throw CompileError(to_srcloc(loc), fmt::format("{}: expects a tile or a scalar value, got a literal", what));
  return x.tile().use(loc);
}
}  // namespace

Tile bitcast_impl(const Operand& x, ir::DType to, const Loc& loc) {
  TraceContext& ctx = TraceContext::current(loc, "bitcast");
  ir::Value* v = value_of(x, "bitcast", loc);
  const ir::DType from = v->type.dtype;
  if (from.ptr || from.is_bool() || to.is_bool())
    throw CompileError(to_srcloc(loc), fmt::format("bitcast: takes and gives integers or floats (not pointers or "
                                                   "i1), got {} to {}",
                                                   v->type.str(), to.str()));
  if (ir::bit_width(from.scalar) != ir::bit_width(to.scalar))
    throw CompileError(to_srcloc(loc), fmt::format("bitcast: {} is {} bits but {} is {}; bitcast keeps the width",
                                                   from.str(), ir::bit_width(from.scalar), to.str(),
                                                   ir::bit_width(to.scalar)));
  if (from == to) return ctx.wrap(v);
  return ctx.wrap(ctx.at(loc).value(ir::OpKind::Bitcast, {v}, {v->type.with_dtype(to)}));
}

Tile unpack_impl(const Operand& words, ir::DType to, int axis, int bits, int zero, const Loc& loc) {
  TraceContext& ctx = TraceContext::current(loc, "unpack");
  ir::Value* v = value_of(words, "unpack", loc);
  const ir::Type& t = v->type;
  const ir::Scalar w = t.dtype.scalar;
  if (t.is_scalar())
    throw CompileError(to_srcloc(loc), fmt::format("unpack: expects a tile of words, got the scalar {}", t.str()));
  if (t.dtype.ptr || !(w == ir::Scalar::u8 || w == ir::Scalar::u16 || w == ir::Scalar::u32))
    throw CompileError(to_srcloc(loc), fmt::format("unpack: expects u8, u16 or u32 words, got {} (bitcast<u32> "
                                                   "signed words first)",
                                                   t.str()));
  if (axis < 0 || axis >= t.rank())
    throw CompileError(to_srcloc(loc), fmt::format("unpack: axis must be in 0..{} for {}, got {}", t.rank() - 1,
                                                   t.str(), axis));
  const int width = ir::bit_width(w);
  if (!(bits == 1 || bits == 2 || bits == 4 || bits == 8 || bits == 16) || bits >= width)
    throw CompileError(to_srcloc(loc), fmt::format("unpack: bits must be 1, 2, 4, 8 or 16 and below the {}-bit "
                                                   "word, got {}",
                                                   width, bits));
  if (to.ptr || to.is_bool() || to.is_fp8())
    throw CompileError(to_srcloc(loc), fmt::format("unpack: the element type must be an integer or a float (not "
                                                   "i1 or fp8), got {}",
                                                   to.str()));
  if (zero < 0 || zero >= (1 << bits))
    throw CompileError(to_srcloc(loc), fmt::format("unpack: zero must be a {}-bit field value, 0..{}, got {}", bits,
                                                   (1 << bits) - 1, zero));
  if (zero != 0 && to.is_unsigned())
    throw CompileError(to_srcloc(loc), fmt::format("unpack: with zero {} the fields minus it may be negative: the "
                                                   "element type must be signed or a float, got {}",
                                                   zero, to.str()));
  ir::Shape s = t.shape;
  s[axis] *= width / bits;
  check_tile_shape(s, "unpack", loc);
  std::vector<ir::Attr> attrs{{"axis", int64_t{axis}}, {"bits", int64_t{bits}}};  // sorted by name
  if (zero != 0) attrs.push_back({"zero", int64_t{zero}});
  return ctx.wrap(ctx.at(loc).value(ir::OpKind::Unpack, {v}, {ir::Type{to, s}}, std::move(attrs)));
}

}  // namespace tessel::lang::detail
