// Elementwise math builtins and random numbers.
#include "tessel/lang/math.hpp"

#include <fmt/format.h>

#include "tessel/ir/accessors.hpp"
#include "tessel/lang/promote.hpp"

namespace tessel::lang {
namespace {
using ir::OpKind;

Tile unary_float(OpKind k, const Operand& x, Precision p = Precision::fast) {
  const char* what = ir::name_of(k).data();
  TraceContext& ctx = TraceContext::current(x.loc(), what);
  ir::DType d = x.is_literal() ? ir::f32() : x.tile().dtype();
  if (!d.is_float())
    throw CompileError(to_srcloc(x.loc()), fmt::format("{} expects a floating-point tile, got {}; cast it first "
                                                       "(cast<f32>(x))",
                                                       what, x.tile().type().str()));
  ir::Value* v = detail::coerce(ctx, x, d, detail::shape_of(x), x.loc());
  // Only the accurate form carries the attribute: kernels that do not ask print as before.
  std::vector<ir::Attr> attrs;
  if (p == Precision::ieee) attrs.push_back({std::string(ir::kPreciseAttr), int64_t{1}});
  return ctx.wrap(ctx.at(x.loc()).value(k, {v}, {}, std::move(attrs)));
}
}  // namespace

Tile exp(const Operand& x, Precision p) { return unary_float(OpKind::Exp, x, p); }
Tile exp2(const Operand& x, Precision p) { return unary_float(OpKind::Exp2, x, p); }
Tile log(const Operand& x, Precision p) { return unary_float(OpKind::Log, x, p); }
Tile log2(const Operand& x, Precision p) { return unary_float(OpKind::Log2, x, p); }
Tile sqrt(const Operand& x) { return unary_float(OpKind::Sqrt, x); }
Tile rsqrt(const Operand& x, Precision p) { return unary_float(OpKind::Rsqrt, x, p); }
Tile sin(const Operand& x, Precision p) { return unary_float(OpKind::Sin, x, p); }
Tile cos(const Operand& x, Precision p) { return unary_float(OpKind::Cos, x, p); }
Tile tanh(const Operand& x, Precision p) { return unary_float(OpKind::Tanh, x, p); }
Tile sigmoid(const Operand& x, Precision p) { return unary_float(OpKind::Sigmoid, x, p); }
Tile erf(const Operand& x, Precision p) { return unary_float(OpKind::Erf, x, p); }
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
