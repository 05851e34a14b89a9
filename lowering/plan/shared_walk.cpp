// walk_shared and the walker's ops: each op's operands converted first, recomputed or converted
// tiles, reductions, stores, atomics, reshapes, scans, dots outside pipelined loops, and the
// requests themselves (shared_walker.hpp).
#include "plan/shared_walk.hpp"

#include <algorithm>

#include "plan/layout_assignment.hpp"
#include "plan/reduction_layout.hpp"
#include "plan/shared_exchange.hpp"
#include "plan/shared_walker.hpp"

namespace tessel::lowering {

namespace {

// A register's bytes in an exchange: integers narrower than 32 bits travel as 32 (i1 and fp8
// registers included), pointers as 8, floats as themselves (exchange_through_smem).
int64_t exchange_bytes_of(ir::DType d) {
  if (d.ptr) return 8;
  if (d.is_float() && !d.is_fp8()) return d.bytes();
  return std::max<int64_t>(4, d.bytes());
}

// The channels of a reduction's exchange (lower_reduce.cpp's reduction_for): the value, and
// for arg-reductions the value as computed (f16/bf16 in f32) and its i32 index.
std::vector<int64_t> reduction_channels(const ir::Op& op) {
  const ir::DType d = op.operands[0]->type.dtype;
  if (op.kind == ir::OpKind::ArgMax || op.kind == ir::OpKind::ArgMin) {
    const bool half = !d.ptr && (d.scalar == ir::Scalar::f16 || d.scalar == ir::Scalar::bf16);
    return {half ? 4 : exchange_bytes_of(d), 4};
  }
  return {exchange_bytes_of(d)};
}

}  // namespace

SharedPlan SharedWalker::result() const {
  return {slots_.events(), requests_, latches_, budgets_, slots_.slots(), slots_.place(turn_bytes()), turn_bytes()};
}

void SharedWalker::lower_op(const ir::Op& op, const Layout* l) {
  convert_operands(op, l);
  if (is_reduction(op)) reduce(op, l);
  else if (op.kind == ir::OpKind::Store) store(op, l);
  else if (op.kind == ir::OpKind::AtomicAdd || op.kind == ir::OpKind::AtomicMax) atomic(op, l);
  else if (op.kind == ir::OpKind::Reshape || op.kind == ir::OpKind::Trans) reshape(op, l);
  else if (op.kind == ir::OpKind::CumSum) scan(op, l);
}

// Lowerer::lower_block: a sequential loop where the op is one, a dot's operands converted
// before it, a load that a dot stages (by cp.async) left to the dot, else the op.
void SharedWalker::lower_block(const ir::Block& blk) {
  for (const auto& op : blk.ops) {
    if (op->kind == ir::OpKind::Yield || !lowers(*op)) continue;
    if (op->kind == ir::OpKind::For) loop(*op);
    else if (op->kind == ir::OpKind::Load && k_.stages_load(*op)) continue;
    else if (op->kind == ir::OpKind::Dot) dot(*op, lay_->of_op(*op));
    else lower_op(*op, lay_->of_op(*op));
  }
}

// Shared memory a conversion may use without costing occupancy (no turn words here).
int64_t SharedWalker::budget() {
  budgets_.push_back(std::max(slots_.reusable(), slots_.growable(turn_bytes())));
  return budgets_.back();
}

// Lowerer::turn_bytes_laid_out: several programs a CTA take turns through mbarriers laid out
// after the slots once the first turn is waited for.
int64_t SharedWalker::turn_bytes() const {
  return turns_laid_out_ ? (k_.shared_ring() ? 32 : 16) * k_.opts.programs_per_cta : 0;
}

// Lowerer::barrier: a held turn is handed on and the deferred groups waited for first.
void SharedWalker::barrier() {
  turn_pass();
  settle_all();
  slots_.barrier();
}

int SharedWalker::request(int64_t bytes, int64_t align) {
  settle_all();
  const SharedSlots::Choice c = slots_.choose(bytes);
  requests_.push_back(c);
  if (c.barrier_first) barrier();
  slots_.take(c, bytes, align);
  return c.slot;
}

// Lowerer::smem_pinned (`cta`: a ring the programs of a CTA share).
int SharedWalker::pin(int64_t bytes, int64_t align, bool touch, bool cta) {
  settle_all();
  const SharedSlots::Choice c = slots_.choose_pinned(bytes, align, touch, cta, turn_bytes());
  requests_.push_back(c);
  if (c.barrier_first) barrier();
  slots_.take_pinned(c, bytes, align, touch, cta);
  return c.slot;
}

void SharedWalker::bind_in(const ir::Value* v, const Layout& l) {
  auto key = std::make_pair(v->id, l.str());
  if (!scopes_.empty()) scopes_.back().push_back(key);
  have_.insert(std::move(key));
}

void SharedWalker::pop_scope() {
  for (const auto& key : scopes_.back()) have_.erase(key);
  scopes_.pop_back();
}

void SharedWalker::exchange(int64_t bytes) {
  const int slot = request(bytes);
  slots_.barrier();
  slots_.touch(slot);
}

void SharedWalker::convert(const ir::Value* v, const Layout& from, const Layout& to) {
  if (vector_convertible(v->type) && from.sliced.empty() && to.sliced.empty()) {
    const ir::Shape& s = v->type.shape;
    const int64_t eb = v->type.dtype.bytes();
    const int64_t C = chunk_columns(s, eb, from, to, budget());
    const int slot = request(s[0] * (C + 16 / eb) * eb);
    for (int64_t chunk = 0; chunk < s[1] / C; ++chunk) {
      if (chunk > 0) slots_.barrier();
      slots_.barrier();
    }
    slots_.touch(slot);
    return;
  }
  exchange(exchange_shape({exchange_bytes_of(v->type.dtype)}, v->type.numel()).bytes);
}

// Lowerer::tile: a deferred wgmma group whose result is read is waited for first.
void SharedWalker::tile(const ir::Value* v, const Layout& l) {
  if (!pending_.empty()) settle(v);
  if (lay_->of(v) == l) return;
  auto key = std::make_pair(v->id, l.str());
  if (have_.count(key)) return;
  if (k_.recomputed(v)) lower_op(*v->def, &l);
  else convert(v, lay_->of(v), l);
  if (!scopes_.empty()) scopes_.back().push_back(key);
  have_.insert(std::move(key));
}

void SharedWalker::convert_operands(const ir::Op& op, const Layout* l) {
  for (const auto& [i, want] : operands_converted_first(op, l)) tile(op.operands[static_cast<size_t>(i)], want);
}

// A dot outside a pipelined loop (lower_dot.cpp, lower_dot_mma.cpp): the accumulator in the
// result's layout, then one buffer for both operands: f32 copies of a and b for the FMA
// path; the tensor-core staging otherwise, a staged load's pointers (and mask) in the load's
// layout, copied in by cp.async; a barrier; the products read it.
void SharedWalker::dot(const ir::Op& op, const Layout* l) {
  convert_operands(op, l);
  const MmaPlan* p = k_.mma(op);
  if (!p) {
    const int64_t M = op.operands[0]->type.shape[0], K = op.operands[0]->type.shape[1];
    const int64_t N = op.operands[1]->type.shape[1];
    const int slot = request((M * K + K * N) * 4);
    slots_.barrier();
    slots_.touch(slot);
    return;
  }
  const int slot = request(p->smem_bytes(), p->wgmma ? 1024 : 16);
  for (int i = 0; i < 2; ++i) {
    const ir::Value* v = op.operands[static_cast<size_t>(i)];
    if (p->in_registers(i) || !v->def || v->def->kind != ir::OpKind::Load || !k_.stages_load(*v->def)) continue;
    const ir::Op& load = *v->def;
    const Layout& ll = lay_->of(v);
    for (int o = 0; o < (ir::LoadOp{load}.mask() ? 2 : 1); ++o)
      if (const ir::Value* x = load.operands[static_cast<size_t>(o)]; !x->type.is_scalar())
        tile(x, *operand_layout(load, o, ll));
  }
  slots_.barrier();
  slots_.touch(slot);
}

void SharedWalker::reduce(const ir::Op& op, const Layout* l) {
  const ir::Value* x = op.operands[0];
  const int axis = static_cast<int>(op.int_attr("axis"));
  const Layout src = reduce_source_layout(lay_->of(x), l, axis);
  tile(x, src);
  const ReducePlan plan = plan_reduce(src, x->type.shape, axis);
  if (plan.warps > 1) exchange(exchange_shape(reduction_channels(op), plan.warps * plan.result_numel).bytes);
  if (!plan.scalar_result && l && !(plan.result == *l)) convert(op.results[0], plan.result, *l);
}

void SharedWalker::store(const ir::Op& op, const Layout* l) {
  if (!l) return;
  const std::optional<Layout> wide = wider_store_layout(*lay_, k_.axis, op, *l, budget());
  const Layout& at = wide ? *wide : *l;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const ir::Value* v = op.operands[i];
    if (!v->type.is_scalar()) tile(v, *operand_layout(op, static_cast<int>(i), at));
  }
}

// lower_atomic.cpp: a barrier before an acq_rel atomic; copies of an element (threads or
// registers that do not own it) learn its old value from the owner through an exchange, whose
// barrier also orders the acquire; without one a barrier after an acq_rel atomic.
void SharedWalker::atomic(const ir::Op& op, const Layout* l) {
  const ir::Value* ptr = op.operands[0];
  const ir::Shape& shape = ptr->type.shape;
  const bool acq_rel = op.has_attr("acq_rel") && op.int_attr("acq_rel") == 1;
  if (acq_rel) slots_.barrier();
  bool replicated = !l || !every_thread_owns(*l, shape);  // a scalar atomic: thread 0 owns it
  if (l)
    for (int64_t r = 0, n = num_regs(*l, shape); r < n; ++r) replicated |= !reg_is_owner(*l, shape, r);
  if (k_.use_count(op.results[0]) == 0 || !replicated) {
    if (acq_rel) slots_.barrier();
    return;
  }
  exchange(exchange_shape({exchange_bytes_of(ptr->type.dtype.pointee())}, l ? ptr->type.numel() : 1).bytes);
}

// lower_reshape.cpp: a renaming of registers where each thread holds what its result needs,
// else one exchange in the result's row-major order (a transpose's rows padded).
void SharedWalker::reshape(const ir::Op& op, const Layout* l) {
  if (!l) return;
  const ir::Value* x = op.operands[0];
  const ir::Shape& xs = x->type.shape;
  const ir::Shape& rs = op.results[0]->type.shape;
  const bool trans = op.kind == ir::OpKind::Trans;
  if (register_map(*l, rs, lay_->of(x), xs, trans ? transpose_map() : reshape_map(xs, rs))) return;
  const int64_t last = rs.back();
  const int64_t pad = reshape_row_pad(trans, x->type.dtype);
  const int64_t rows = op.results[0]->type.numel() / last;
  exchange(exchange_shape({exchange_bytes_of(x->type.dtype)}, rows * (last + pad)).bytes);
}

// lower_scan.cpp: the warps' totals exchanged when the scanned dim spans several warps.
void SharedWalker::scan(const ir::Op& op, const Layout* l) {
  if (!l) return;
  const ir::Value* x = op.operands[0];
  const ScanPlan plan = plan_scan(*l, x->type.shape, static_cast<int>(op.int_attr("axis")));
  if (plan.warps > 1)
    exchange(exchange_shape({exchange_bytes_of(x->type.dtype)}, plan.reps * plan.warps * plan.other_numel).bytes);
}

SharedPlan walk_shared(const KernelPlan& k) {
  SharedWalker w(k);
  w.lower_block(k.f.body);
  if (k.opts.warp_specialize) w.lower_producer();
  return w.result();
}

}  // namespace tessel::lowering
