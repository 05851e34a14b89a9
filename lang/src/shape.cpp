// Shape builtins: reshape, trans, and the Tile::col()/row() shorthands for x[:, None] / x[None, :].
#include "tessel/lang/shape.hpp"

#include <fmt/format.h>

#include "tessel/lang/builtins.hpp"
#include "tessel/lang/promote.hpp"

namespace tessel::lang {
namespace {
ir::Value* tile_operand(const Operand& x, const char* what) {
  if (x.is_literal())
    throw CompileError(to_srcloc(x.loc()), fmt::format("{}: expects a tile, got a literal", what));
  ir::Value* v = x.tile().use(x.loc());
  if (v->type.is_scalar())
    throw CompileError(to_srcloc(x.loc()), fmt::format("{}: expects a tile, got the scalar {}", what, v->type.str()));
  return v;
}
}  // namespace

Tile reshape(const Operand& x, const ir::Shape& shape) {
  const Loc& loc = x.loc();
  TraceContext& ctx = TraceContext::current(loc, "reshape");
  ir::Value* v = tile_operand(x, "reshape");
  detail::check_tile_shape(shape, "reshape", loc);
  if (shape.empty())
    throw CompileError(to_srcloc(loc), "reshape: the new shape must have at least one dimension");
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  if (n != v->type.numel())
    throw CompileError(to_srcloc(loc), fmt::format("reshape: cannot reshape {} ({} elements) to {} ({} elements)",
                                                   v->type.str(), v->type.numel(), ir::shape_str(shape), n));
  if (shape == v->type.shape) return ctx.wrap(v);
  return ctx.wrap(ctx.at(loc).reshape(v, shape));
}

Tile trans(const Operand& x) {
  const Loc& loc = x.loc();
  TraceContext& ctx = TraceContext::current(loc, "trans");
  ir::Value* v = tile_operand(x, "trans");
  if (v->type.rank() != 2)
    throw CompileError(to_srcloc(loc), fmt::format("trans: expects a 2-D tile, got {}", v->type.str()));
  return ctx.wrap(ctx.at(loc).trans(v));
}

Tile Tile::col(Loc loc) const {
  check_live(loc);
  if (is_scalar())
    throw CompileError(to_srcloc(loc), fmt::format("col(): expects a tile, got the scalar {}", type().str()));
  return expand_dims(*this, static_cast<int>(shape().size()), loc);
}

Tile Tile::row(Loc loc) const {
  check_live(loc);
  if (is_scalar())
    throw CompileError(to_srcloc(loc), fmt::format("row(): expects a tile, got the scalar {}", type().str()));
  return expand_dims(*this, 0, loc);
}

}  // namespace tessel::lang
