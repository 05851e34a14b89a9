// Elementwise math builtins and random numbers.
#include "tessel/lang/math.hpp"

#include <fmt/format.h>

#include "tessel/lang/promote.hpp"

namespace tessel::lang {
namespace {
using ir::OpKind;

Tile unary_float(OpKind k, const Operand& x) {
  const char* what = ir::name_of(k).data();
  TraceContext& ctx = TraceContext::current(x.loc(), what);
  ir::DType d = x.is_literal() ? ir::f32() : x.tile().dtype();
  if (!d.is_float())
    throw CompileError(to_srcloc(x.loc()), fmt::format("{} expects a floating-point tile, got {}; cast it first "
                                                       "(cast<f32>(x))",
                                                       what, x.tile().type().str()));
  ir::Value* v = detail::coerce(ctx, x, d, detail::shape_of(x), x.loc());
  return ctx.wrap(ctx.at(x.loc()).value(k, {v}));
}
}  // namespace

Tile exp(const Operand& x) { return unary_float(OpKind::Exp, x); }
Tile exp2(const Operand& x) { return unary_float(OpKind::Exp2, x); }
Tile log(const Operand& x) { return unary_float(OpKind::Log, x); }
Tile log2(const Operand& x) { return unary_float(OpKind::Log2, x); }
Tile sqrt(const Operand& x) { return unary_float(OpKind::Sqrt, x); }
Tile rsqrt(const Operand& x) { return unary_float(OpKind::Rsqrt, x); }
Tile sin(const Operand& x) { return unary_float(OpKind::Sin, x); }
Tile cos(const Operand& x) { return unary_float(OpKind::Cos, x); }
Tile tanh(const Operand& x) { return unary_float(OpKind::Tanh, x); }
Tile sigmoid(const Operand& x) { return unary_float(OpKind::Sigmoid, x); }
Tile erf(const Operand& x) { return unary_float(OpKind::Erf, x); }
Tile floor(const Operand& x) { return unary_float(OpKind::Floor, x); }
Tile ceil(const Operand& x) { return unary_float(OpKind::Ceil, x); }

Tile abs(const Operand& x) {
  TraceContext& ctx = TraceContext::current(x.loc(), "abs");
  ir::DType d = detail::dtype_of(x);
  if (d.ptr || d.is_bool())
    throw CompileError(to_srcloc(x.loc()), fmt::format("abs expects a numeric tile, got {}", d.str()));
  ir::Value* v = detail::coerce(ctx, x, d, detail::shape_of(x), x.loc());
  return ctx.wrap(ctx.at(x.loc()).value(OpKind::Abs, {v}));
}

static Tile random(OpKind k, const Operand& seed, const Operand& offsets, const char* what) {
  const Loc& loc = offsets.loc();
  TraceContext& ctx = TraceContext::current(loc, what);
  ir::DType sd = detail::dtype_of(seed);
  if (!sd.is_int() || sd.is_bool() || !detail::shape_of(seed).empty())
    throw CompileError(to_srcloc(loc), fmt::format("{}: the seed must be an integer scalar, got {}", what,
                                                   seed.is_literal() ? sd.str() : seed.tile().type().str()));
  ir::DType od = detail::dtype_of(offsets);
  if (!od.is_int() || od.is_bool())
    throw CompileError(to_srcloc(loc), fmt::format("{}: offsets must be integers, got {}", what, od.str()));
  ir::Value* vs = detail::coerce(ctx, seed, sd, {}, loc);
  ir::Value* vo = detail::coerce(ctx, offsets, ir::i32(), detail::shape_of(offsets), loc);
  return ctx.wrap(ctx.at(loc).value(k, {vs, vo}));
}

Tile rand(const Operand& seed, const Operand& offsets) { return random(OpKind::Rand, seed, offsets, "rand"); }
Tile randn(const Operand& seed, const Operand& offsets) { return random(OpKind::RandN, seed, offsets, "randn"); }

}  // namespace tessel::lang
