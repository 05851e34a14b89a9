// Reductions, cumsum and the generic reduce with a traced combine body.
#include "tessel/lang/reduce.hpp"

#include <fmt/format.h>

#include "tessel/lang/promote.hpp"

namespace tessel::lang {
namespace {
using ir::OpKind;

// The operand as an IR tile of rank >= 1 with `axis` in range; CompileError otherwise.
ir::Value* reduce_operand(TraceContext& ctx, const Operand& x, int axis, const char* what) {
  const Loc& loc = x.loc();
  if (x.is_literal())
    throw CompileError(to_srcloc(loc), fmt::format("{}: expects a tile, got a literal", what));
  ir::Value* v = x.tile().use(loc);
  if (v->type.is_scalar())
    throw CompileError(to_srcloc(loc), fmt::format("{}: expects a tile, got the scalar {}", what, v->type.str()));
  if (v->type.dtype.ptr)
    throw CompileError(to_srcloc(loc), fmt::format("{}: expects a numeric tile, got {}", what, v->type.str()));
  if (axis < 0 || axis >= v->type.rank())
    throw CompileError(to_srcloc(loc), fmt::format("{}: axis {} out of range for a tile of rank {} ({})", what, axis,
                                                   v->type.rank(), v->type.str()));
  return v;
}

// The accumulation type of sum and cumsum (Triton's): f16/bf16 -> f32, i1/i8/i16 -> i32.
ir::DType accumulation_type(ir::DType d) {
  switch (d.scalar) {
    case ir::Scalar::f16:
    case ir::Scalar::bf16: return ir::f32();
    case ir::Scalar::i1:
    case ir::Scalar::i8:
    case ir::Scalar::i16: return ir::i32();
    default: return d;
  }
}

Tile keep(TraceContext& ctx, ir::Value* r, int axis, bool keep_dims, const Loc& loc) {
  if (keep_dims) r = ctx.at(loc).expand_dims(r, axis);
  return ctx.wrap(r);
}

Tile reduction(OpKind k, const Operand& x, int axis, bool keep_dims, const char* what) {
  const Loc& loc = x.loc();
  TraceContext& ctx = TraceContext::current(loc, what);
  ir::Value* v = reduce_operand(ctx, x, axis, what);
  if (k == OpKind::ReduceSum) {
    ir::DType acc = accumulation_type(v->type.dtype);
    if (acc != v->type.dtype) v = ctx.at(loc).cast(v, acc);
  }
  return keep(ctx, ctx.at(loc).reduce(k, v, axis), axis, keep_dims, loc);
}
}  // namespace

Tile sum(const Operand& x, int axis, bool keep_dims) { return reduction(OpKind::ReduceSum, x, axis, keep_dims, "sum"); }
Tile max(const Operand& x, int axis, bool keep_dims) { return reduction(OpKind::ReduceMax, x, axis, keep_dims, "max"); }
Tile min(const Operand& x, int axis, bool keep_dims) { return reduction(OpKind::ReduceMin, x, axis, keep_dims, "min"); }
Tile argmax(const Operand& x, int axis, bool keep_dims) {
  return reduction(OpKind::ArgMax, x, axis, keep_dims, "argmax");
}
Tile argmin(const Operand& x, int axis, bool keep_dims) {
  return reduction(OpKind::ArgMin, x, axis, keep_dims, "argmin");
}

Tile cumsum(const Operand& x, int axis) {
  const Loc& loc = x.loc();
  TraceContext& ctx = TraceContext::current(loc, "cumsum");
  ir::Value* v = reduce_operand(ctx, x, axis, "cumsum");
  ir::DType acc = accumulation_type(v->type.dtype);
  if (acc != v->type.dtype) v = ctx.at(loc).cast(v, acc);
  return ctx.wrap(ctx.at(loc).reduce(OpKind::CumSum, v, axis));
}

namespace detail {

CombineScope::CombineScope(const Operand& x, int axis) : loc_(x.loc()) {
  TraceContext& ctx = TraceContext::current(loc_, "reduce");
  ir::Value* v = reduce_operand(ctx, x, axis, "reduce");
  ir::Builder& b = ctx.at(loc_);
  outer_ = b.block();
  op_ = &b.reduce_region(v, axis);
  b.set_block(op_->regions[0].get());
  ctx.enter_combine();
  open_ = true;
  acc_ = ctx.wrap(op_->regions[0]->args[0]);
  elem_ = ctx.wrap(op_->regions[0]->args[1]);
}

CombineScope::~CombineScope() {
  if (!open_) return;
  // The combine threw: leave the (abandoned) trace with its insertion point restored.
  if (TraceContext* ctx = TraceContext::active()) {
    ctx->leave_combine();
    ctx->at(loc_).set_block(outer_);
  }
}

Tile CombineScope::finish(const Tile& combined, bool keep_dims) {
  TraceContext& ctx = TraceContext::current(loc_, "reduce");
  const ir::Type elem = acc_.type();
  if (!combined.valid())
    throw CompileError(to_srcloc(loc_), "reduce: the combine function returned an empty Tile");
  ir::Value* c = combined.use(loc_);
  if (c->type != elem)
    throw CompileError(to_srcloc(loc_), fmt::format("reduce: the combine function must return a scalar of the "
                                                    "element type {}, got {}",
                                                    elem.str(), c->type.str()));
  ir::Builder& b = ctx.at(loc_);
  b.create(OpKind::Yield, {c});
  b.set_block(outer_);
  ctx.leave_combine();
  open_ = false;
  int axis = static_cast<int>(op_->int_attr("axis"));
  return keep(ctx, op_->results[0], axis, keep_dims, loc_);
}

}  // namespace detail
}  // namespace tessel::lang
