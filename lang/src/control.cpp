// Runtime loops and Vars: lazily discovered loop-carried values, closed at the loop's end.
#include "tessel/lang/control.hpp"

#include <fmt/format.h>

#include <exception>

#include "tessel/lang/operators.hpp"
#include "tessel/lang/promote.hpp"
#include "tessel/lang/trace_context.hpp"

namespace tessel::lang {
namespace {

// Makes `v` a carried value of every open loop deeper than its declaration, outermost first.
void capture(TraceContext& ctx, Var& v) {
  auto& frames = ctx.frames();
  for (int i = v.depth(); i < static_cast<int>(frames.size()); ++i) {
    LoopFrame& f = frames[i];
    bool found = false;
    for (auto& [var, arg] : f.carried) found = found || var == &v;
    if (found) continue;
    ir::Builder& b = ctx.at(Loc::current());
    ir::Value* arg = b.add_carried(*f.loop, v.current());
    f.carried.emplace_back(&v, arg);
    v.set_current(arg);
  }
}

TraceContext& var_context(const Var& v, const Loc& loc) {
  TraceContext& ctx = TraceContext::current(loc, "Var");
  if (ctx.id() != v.trace_id())
    throw CompileError(to_srcloc(loc), "use of a Var outside the kernel being traced (it was declared while "
                                       "tracing a different kernel)");
  if (ctx.depth() < v.depth())
    throw CompileError(to_srcloc(loc), "use of a Var after the range() loop it was declared in has ended");
  return ctx;
}
}  // namespace

Operand::Operand(const Var& v, Loc loc) : tile_(v.get(loc)), loc_(loc) {}

Var::Var(const Operand& init) {
  TraceContext& ctx = TraceContext::current(init.loc(), "Var");
  ir::DType d = detail::dtype_of(init);
  value_ = detail::coerce(ctx, init, d, detail::shape_of(init), init.loc());
  depth_ = ctx.depth();
  combine_depth_ = ctx.combine_depth();
  trace_id_ = ctx.id();
}

Tile Var::get(Loc loc) const {
  TraceContext& ctx = var_context(*this, loc);
  capture(ctx, const_cast<Var&>(*this));
  return ctx.wrap(value_);
}

void Var::assign(const Operand& v, const Loc& loc) {
  TraceContext& ctx = var_context(*this, loc);
  if (ctx.combine_depth() > combine_depth_)
    throw CompileError(to_srcloc(loc), "assignment inside a reduce() combine function to a Var declared outside it "
                                       "(the combine must only return its result)");
  capture(ctx, *this);
  const ir::Type& t = value_->type;
  if (!v.is_literal() && (v.tile().shape() != t.shape && !v.tile().is_scalar()))
    throw CompileError(to_srcloc(loc), fmt::format("assignment to a Var of type {} from a tile of type {}: a Var "
                                                   "keeps its shape",
                                                   t.str(), v.tile().type().str()));
  if (!v.is_literal() && v.tile().dtype() != t.dtype)
    throw CompileError(to_srcloc(loc), fmt::format("assignment to a Var of type {} from a tile of type {}: a Var "
                                                   "keeps its dtype (cast explicitly)",
                                                   t.str(), v.tile().type().str()));
  value_ = detail::coerce(ctx, v, t.dtype, t.shape, loc);
}

Var& Var::operator=(const Operand& v) {
  assign(v, v.loc());
  return *this;
}
Var& Var::operator+=(const Operand& v) {
  assign(Operand(get(v.loc()) + v, v.loc()), v.loc());
  return *this;
}
Var& Var::operator-=(const Operand& v) {
  assign(Operand(get(v.loc()) - v, v.loc()), v.loc());
  return *this;
}
Var& Var::operator*=(const Operand& v) {
  assign(Operand(get(v.loc()) * v, v.loc()), v.loc());
  return *this;
}
Var& Var::operator/=(const Operand& v) {
  assign(Operand(get(v.loc()) / v, v.loc()), v.loc());
  return *this;
}

RangeLoop::RangeLoop(const Operand& lo, const Operand& hi, const Operand& step)
    : lo_(lo), hi_(hi), step_(step), loc_(hi.loc()) {
  for (const Operand* o : {&lo_, &hi_, &step_}) {
    ir::DType d = detail::dtype_of(*o);
    if (!d.is_int() || d.is_bool() || !detail::shape_of(*o).empty())
      throw CompileError(to_srcloc(loc_), fmt::format("range: bounds and step must be integer scalars, got {}",
                                                      o->is_literal() ? d.str() : o->tile().type().str()));
  }
  if (step_.is_literal() && std::get<int64_t>(step_.literal()) <= 0)
    throw CompileError(to_srcloc(loc_), "range: the step must be positive");
}

RangeIter RangeLoop::begin() {
  TraceContext& ctx = TraceContext::current(loc_, "range");
  ctx.check_not_in_combine(loc_, "range");
  // A second iteration would open a second loop that close() (done once) never ends.
  if (open_)
    throw CompileError(to_srcloc(loc_), "range: this range() object is iterated a second time; each range() "
                                        "loop is traced once (call range() again for another loop)");
  ir::DType d = ir::i32();
  for (const Operand* o : {&lo_, &hi_, &step_})
    if (detail::dtype_of(*o) == ir::i64()) d = ir::i64();
  ir::Value* lo = detail::coerce(ctx, lo_, d, {}, loc_);
  ir::Value* hi = detail::coerce(ctx, hi_, d, {}, loc_);
  ir::Value* st = detail::coerce(ctx, step_, d, {}, loc_);
  ir::Builder& b = ctx.at(loc_);
  ir::Op& loop = b.for_loop(lo, hi, st, {});
  ctx.frames().push_back(LoopFrame{&loop, b.block(), {}, to_srcloc(loc_)});
  frame_index_ = ctx.depth() - 1;
  b.set_block(&loop.body());
  iv_ = ctx.wrap(loop.body().args[0]);
  open_ = true;
  return RangeIter(this);
}

void RangeLoop::close() {
  if (!open_ || closed_) return;
  closed_ = true;
  TraceContext& ctx = TraceContext::current(loc_, "range");
  TESSEL_ASSERT(ctx.depth() == frame_index_ + 1, "loops closed out of order");
  LoopFrame f = std::move(ctx.frames().back());
  ctx.frames().pop_back();
  ir::Builder& b = ctx.at(loc_);
  std::vector<ir::Value*> yields;
  for (auto& [var, arg] : f.carried) yields.push_back(var->current());
  b.create(ir::OpKind::Yield, yields);
  b.set_block(f.outer_block);
  for (size_t i = 0; i < f.carried.size(); ++i) f.carried[i].first->set_current(f.loop->results[i]);
}

RangeLoop::~RangeLoop() {
  if (!open_ || closed_) return;
  TraceContext* ctx = TraceContext::active();
  if (!ctx) return;
  if (std::uncaught_exceptions() == 0)
    ctx->defer_error(to_srcloc(loc_), "the body of a range() loop was left early (break, return or goto); "
                                      "traced loops must run their body to the end");
  // Leave the IR consistent enough to be discarded: pop the frame, restore the block. (A Var or
  // tile of the body used after the loop reports this error there: Tile::use.)
  while (ctx->depth() > frame_index_) {
    LoopFrame f = std::move(ctx->frames().back());
    ctx->frames().pop_back();
    ctx->at(loc_).set_block(f.outer_block);
  }
}

Tile RangeIter::operator*() const { return loop_->induction_var(); }
RangeIter& RangeIter::operator++() {
  loop_->close();
  loop_ = nullptr;
  return *this;
}

RangeLoop range(const Operand& hi) { return RangeLoop(Operand(0, hi.loc()), hi, Operand(1, hi.loc())); }
RangeLoop range(const Operand& lo, const Operand& hi) { return RangeLoop(lo, hi, Operand(1, lo.loc())); }
RangeLoop range(const Operand& lo, const Operand& hi, const Operand& step) { return RangeLoop(lo, hi, step); }

}  // namespace tessel::lang
