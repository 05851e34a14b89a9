// The thread-local trace context and the checks every use of a Tile goes through.
#include "tessel/lang/trace_context.hpp"

#include <atomic>

namespace tessel::lang {
namespace {
thread_local TraceContext* t_active = nullptr;
std::atomic<uint64_t> g_next_id{1};
}  // namespace

SrcLoc to_srcloc(const Loc& l) { return SrcLoc{l.file_name(), l.line()}; }

TraceContext::TraceContext(std::string kernel_name)
    : id_(g_next_id++),
      fn_(std::make_unique<ir::Function>(std::move(kernel_name))),
      builder_(*fn_),
      previous_(t_active) {
  t_active = this;
}

TraceContext::~TraceContext() { t_active = previous_; }

TraceContext* TraceContext::active() { return t_active; }

TraceContext& TraceContext::current(const Loc& loc, const char* what) {
  if (!t_active)
    throw CompileError(to_srcloc(loc), std::string(what) +
                                           " used outside a kernel being traced (call it from a "
                                           "kernel function that tessel traces)");
  return *t_active;
}

ir::Builder& TraceContext::at(const Loc& loc) {
  builder_.loc = to_srcloc(loc);
  return builder_;
}

void TraceContext::check_not_in_combine(const Loc& loc, const char* what) const {
  if (combine_depth_ > 0)
    throw CompileError(to_srcloc(loc), std::string(what) +
                                           " cannot be used inside a reduce() combine function (the combine "
                                           "maps two scalars to one and may not touch memory or loop)");
}

void TraceContext::defer_error(SrcLoc loc, std::string message) {
  if (has_deferred_) return;
  has_deferred_ = true;
  deferred_loc_ = loc;
  deferred_msg_ = std::move(message);
}

void TraceContext::rethrow_deferred() {
  if (has_deferred_) throw CompileError(deferred_loc_, deferred_msg_);
}

const ir::Type& Tile::type(Loc loc) const {
  check_live(loc);
  return value_->type;
}

void Tile::check_live(const Loc& loc) const {
  if (!value_)
    throw CompileError(to_srcloc(loc), "use of an empty Tile (default-constructed, never assigned)");
  // Only ids are compared: the value itself may belong to a finished trace's freed IR.
  TraceContext* ctx = TraceContext::active();
  if (!ctx)
    throw CompileError(to_srcloc(loc),
                       "use of a value outside the kernel being traced: this tile was kept after its "
                       "kernel's trace ended (tiles must not be kept across traces, e.g. in a global)");
  if (ctx->id() != trace_id_)
    throw CompileError(to_srcloc(loc),
                       "use of a value outside the kernel being traced: this tile was created while "
                       "tracing a different kernel (tiles must not be kept across traces)");
}

ir::Value* Tile::use(const Loc& loc) const {
  check_live(loc);
  ir::Block* here = TraceContext::active()->at(loc).block();
  if (!here->is_within(value_->block) && value_->block->parent_op &&
      value_->block->parent_op->kind == ir::OpKind::Reduce)
    throw CompileError(to_srcloc(loc),
                       "a value computed inside a reduce() combine function is used outside it; the "
                       "combine may only return its result");
  // A loop body left early (break) is the cause of any value stranded in it: say that.
  if (!here->is_within(value_->block)) TraceContext::active()->rethrow_deferred();
  if (!here->is_within(value_->block))
    throw CompileError(to_srcloc(loc),
                       "a value computed inside a range() loop body is used after the loop; "
                       "declare a Var before the loop and assign to it inside");
  return value_;
}

}  // namespace tessel::lang
