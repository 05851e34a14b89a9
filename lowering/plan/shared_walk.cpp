// The walk mirrors the emitter's order: the body's ops in block order (lower_block), a
// sequential loop as LoopFrame lowers it (walk's `loop`); for each op,
// its operands converted first in operand order (Lowerer::convert_operands), a tile wanted in
// another layout recomputed there (lowering its producer again, recursively) or converted
// through shared memory once per layout (Lowerer::tile); then the op's own requests: a
// reduction's exchange across warps and its result's conversion (lower_reduce.cpp), a store's
// operands in the wider layout it may write from (lower_memory.cpp). Each request is made as
// Lowerer::smem_begin makes it (choose, the barrier it asks for, take), each exchange as
// exchange_through_smem (take, barrier, reads: touch), each 2-D conversion as convert_layout.
#include "plan/shared_walk.hpp"

#include <algorithm>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "plan/layout_assignment.hpp"
#include "plan/reduction_layout.hpp"
#include "plan/shared_exchange.hpp"
#include "tessel/ir/accessors.hpp"
#include "tessel/lowering/target.hpp"

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

class Walker {
 public:
  explicit Walker(const KernelPlan& k)
      : k_(k),
        slots_(k.opts.programs_per_cta, target_info(k.opts.target).max_shared_per_block,
               target_info(k.opts.target).shared_per_sm) {}

  const std::vector<SharedSlots::Event>& events() const { return slots_.events(); }

  void lower_op(const ir::Op& op, const Layout* l) {
    convert_operands(op, l);
    if (is_reduction(op)) reduce(op, l);
    else if (op.kind == ir::OpKind::Store) store(op, l);
    else if (op.kind == ir::OpKind::AtomicAdd || op.kind == ir::OpKind::AtomicMax) atomic(op, l);
    else if (op.kind == ir::OpKind::Reshape || op.kind == ir::OpKind::Trans) reshape(op, l);
    else if (op.kind == ir::OpKind::CumSum) scan(op, l);
  }

  // Lowerer::lower_block: a sequential loop where the op is one, else the op.
  void lower_block(const ir::Block& blk) {
    for (const auto& op : blk.ops) {
      if (op->kind == ir::OpKind::Yield) continue;
      if (op->kind == ir::OpKind::For) loop(*op);
      else lower_op(*op, k_.layouts.of_op(*op));
    }
  }

 private:
  // Shared memory a conversion may use without costing occupancy (no turn words here).
  int64_t budget() const { return std::max(slots_.reusable(), slots_.growable(0)); }

  int request(int64_t bytes) {
    const SharedSlots::Choice c = slots_.choose(bytes);
    if (c.barrier_first) slots_.barrier();
    slots_.take(c, bytes, 16);
    return c.slot;
  }

  void exchange(int64_t bytes) {
    const int slot = request(bytes);
    slots_.barrier();
    slots_.touch(slot);
  }

  void convert(const ir::Value* v, const Layout& from, const Layout& to) {
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

  void tile(const ir::Value* v, const Layout& l) {
    if (k_.layouts.of(v) == l) return;
    auto key = std::make_pair(v->id, l.str());
    if (have_.count(key)) return;
    if (k_.recomputed(v)) lower_op(*v->def, &l);
    else convert(v, k_.layouts.of(v), l);
    if (!scopes_.empty()) scopes_.back().push_back(key);
    have_.insert(std::move(key));
  }

  // lower_sequential_loop (LoopFrame): the carried tiles' initial values in the carried
  // layouts, the body in a scope of its own (what it converts is forgotten after the loop),
  // the yielded tiles in the carried layouts, the latch's barrier where the next trip would
  // race this one's readers.
  void loop(const ir::Op& op) {
    ir::ForOp f{op};
    const int nc = static_cast<int>(f.num_carried());
    for (int i = 0; i < nc; ++i)
      if (!f.carried(i)->type.is_scalar()) tile(f.init(i), k_.layouts.of(f.carried(i)));
    slots_.loop_begin();
    scopes_.emplace_back();
    lower_block(f.body());
    for (int i = 0; i < nc; ++i)
      if (!f.carried(i)->type.is_scalar()) tile(f.yield().operands.at(static_cast<size_t>(i)), k_.layouts.of(f.carried(i)));
    if (slots_.latch_needs_barrier()) slots_.barrier();
    slots_.latch_done();
    for (const auto& key : scopes_.back()) have_.erase(key);
    scopes_.pop_back();
    slots_.loop_exit();
  }

  void convert_operands(const ir::Op& op, const Layout* l) {
    for (const auto& [i, want] : operands_converted_first(op, l)) tile(op.operands[static_cast<size_t>(i)], want);
  }

  void reduce(const ir::Op& op, const Layout* l) {
    const ir::Value* x = op.operands[0];
    const int axis = static_cast<int>(op.int_attr("axis"));
    const Layout src = reduce_source_layout(k_.layouts.of(x), l, axis);
    tile(x, src);
    const ReducePlan plan = plan_reduce(src, x->type.shape, axis);
    if (plan.warps > 1) exchange(exchange_shape(reduction_channels(op), plan.warps * plan.result_numel).bytes);
    if (!plan.scalar_result && l && !(plan.result == *l)) convert(op.results[0], plan.result, *l);
  }

  void store(const ir::Op& op, const Layout* l) {
    if (!l) return;
    const std::optional<Layout> wide = wider_store_layout(k_.layouts, k_.axis, op, *l, budget());
    const Layout& at = wide ? *wide : *l;
    for (size_t i = 0; i < op.operands.size(); ++i) {
      const ir::Value* v = op.operands[i];
      if (!v->type.is_scalar()) tile(v, *operand_layout(op, static_cast<int>(i), at));
    }
  }

  // lower_atomic.cpp: a barrier before an acq_rel atomic; copies of an element (threads or
  // registers that do not own it) learn its old value from the owner through an exchange, whose
  // barrier also orders the acquire; without one a barrier after an acq_rel atomic.
  void atomic(const ir::Op& op, const Layout* l) {
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
  void reshape(const ir::Op& op, const Layout* l) {
    if (!l) return;
    const ir::Value* x = op.operands[0];
    const ir::Shape& xs = x->type.shape;
    const ir::Shape& rs = op.results[0]->type.shape;
    const bool trans = op.kind == ir::OpKind::Trans;
    if (register_map(*l, rs, k_.layouts.of(x), xs, trans ? transpose_map() : reshape_map(xs, rs))) return;
    const int64_t last = rs.back();
    const int64_t pad = reshape_row_pad(trans, x->type.dtype);
    const int64_t rows = op.results[0]->type.numel() / last;
    exchange(exchange_shape({exchange_bytes_of(x->type.dtype)}, rows * (last + pad)).bytes);
  }

  // lower_scan.cpp: the warps' totals exchanged when the scanned dim spans several warps.
  void scan(const ir::Op& op, const Layout* l) {
    if (!l) return;
    const ir::Value* x = op.operands[0];
    const ScanPlan plan = plan_scan(*l, x->type.shape, static_cast<int>(op.int_attr("axis")));
    if (plan.warps > 1)
      exchange(exchange_shape({exchange_bytes_of(x->type.dtype)}, plan.reps * plan.warps * plan.other_numel).bytes);
  }

  const KernelPlan& k_;
  SharedSlots slots_;
  std::set<std::pair<uint32_t, std::string>> have_;  // (value, layout) recomputed or converted
  std::vector<std::vector<std::pair<uint32_t, std::string>>> scopes_;  // loop bodies': forgotten after
};

// Why the walk does not cover `op` yet (empty: it does).
std::string not_walked(const KernelPlan& k, const ir::Op& op) {
  using K = ir::OpKind;
  if (op.kind == K::For && k.schedule(op) != LoopSchedule::Sequential) return "a pipelined loop";
  if (op.kind == K::Dot) return "a dot";
  return "";
}

}  // namespace

SharedWalk walk_shared(const KernelPlan& k) {
  if (k.opts.warp_specialize || k.opts.programs_per_cta > 1)
    return {{}, "producer warps or several programs a CTA"};
  std::string why;
  ir::walk(k.f.body, [&](const ir::Op& op) {
    if (why.empty()) why = not_walked(k, op);
  });
  if (!why.empty()) return {{}, why};
  Walker w(k);
  w.lower_block(k.f.body);
  return {w.events(), ""};
}

}  // namespace tessel::lowering
