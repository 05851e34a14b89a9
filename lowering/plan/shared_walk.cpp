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
#include <functional>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "plan/layout_assignment.hpp"
#include "plan/pipeline_plan.hpp"
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

  SharedPlan result() const {
    return {slots_.events(), requests_, latches_, budgets_, slots_.slots(), slots_.place(turn_bytes()), turn_bytes()};
  }

  // Lowerer::lower_roles' second lowering: the producer warps' ops (KernelPlan::producer_ops)
  // in their own layouts, nothing converted before known; they never meet at a barrier (the
  // emitter refuses one), so their steps are their loops' begin, latch and exit.
  void lower_producer() {
    have_.clear();
    lay_ = &*k_.producer_layouts;
    producer_ = true;
    lower_block(k_.f.body);
  }

  void lower_op(const ir::Op& op, const Layout* l) {
    convert_operands(op, l);
    if (is_reduction(op)) reduce(op, l);
    else if (op.kind == ir::OpKind::Store) store(op, l);
    else if (op.kind == ir::OpKind::AtomicAdd || op.kind == ir::OpKind::AtomicMax) atomic(op, l);
    else if (op.kind == ir::OpKind::Reshape || op.kind == ir::OpKind::Trans) reshape(op, l);
    else if (op.kind == ir::OpKind::CumSum) scan(op, l);
  }

  // Lowerer::lower_block: a sequential loop where the op is one, a dot's operands converted
  // before it, a load that a dot stages (by cp.async) left to the dot, else the op.
  void lower_block(const ir::Block& blk) {
    for (const auto& op : blk.ops) {
      if (op->kind == ir::OpKind::Yield || !lowers(*op)) continue;
      if (op->kind == ir::OpKind::For) loop(*op);
      else if (op->kind == ir::OpKind::Load && k_.stages_load(*op)) continue;
      else if (op->kind == ir::OpKind::Dot) dot(*op, lay_->of_op(*op));
      else lower_op(*op, lay_->of_op(*op));
    }
  }

  // The body of a pipelined loop (lower_block with its PipelineState): a prefetched load read
  // from its stage (a dense one after a barrier, bound in each layout its users read), a dot
  // from the trip's stage (pipelined_dot).
  // A ring's consumers (`ring`) wait for the producers' stage; a ring of one dot reads it without
  // the loop's plan (lower_dot_mma: only the accumulator).
  void lower_pipelined_block(const ir::Block& blk, const PipelinePlan& p, bool ring = false) {
    const bool planned = !ring || p.dots.size() > 1;
    for (const auto& op : blk.ops) {
      if (op->kind == ir::OpKind::Yield) continue;
      if (op->kind == ir::OpKind::For) {
        loop(*op);
      } else if (op->kind == ir::OpKind::Load && k_.stages_load(*op)) {
        continue;
      } else if (op->kind == ir::OpKind::Dot && !planned) {
        convert_operands(*op, lay_->of_op(*op));
        tile(op->operands[2], *lay_->of_op(*op));
      } else if (const PipelinedOperand* po = op->kind == ir::OpKind::Load ? p.prefetch_of(op.get()) : nullptr) {
        if (!po->dense) continue;
        if (po->barrier_before_read) barrier();
        for (const Layout& r : po->reads) bind_in(op->results[0], r);
      } else if (op->kind == ir::OpKind::Dot) {
        convert_operands(*op, lay_->of_op(*op));
        pipelined_dot(*op, p, ring);
        if (p.defers(op.get())) pending_.push_back(op->results[0]);
      } else {
        lower_op(*op, lay_->of_op(*op));
      }
    }
    settle_all();  // a trip's deferred groups end with it
    turn_pass();
  }

 private:
  // Shared memory a conversion may use without costing occupancy (no turn words here).
  int64_t budget() {
    budgets_.push_back(std::max(slots_.reusable(), slots_.growable(turn_bytes())));
    return budgets_.back();
  }

  // Lowerer::turn_bytes_laid_out: several programs a CTA take turns through mbarriers laid out
  // after the slots once the first turn is waited for.
  int64_t turn_bytes() const {
    return turns_laid_out_ ? (k_.shared_ring() ? 32 : 16) * k_.opts.programs_per_cta : 0;
  }

  // Lowerer::barrier: a held turn is handed on and the deferred groups waited for first.
  void barrier() {
    turn_pass();
    settle_all();
    slots_.barrier();
  }

  int request(int64_t bytes, int64_t align = 16) {
    settle_all();
    const SharedSlots::Choice c = slots_.choose(bytes);
    requests_.push_back(c);
    if (c.barrier_first) barrier();
    slots_.take(c, bytes, align);
    return c.slot;
  }

  // Lowerer::smem_pinned (`cta`: a ring the programs of a CTA share).
  int pin(int64_t bytes, int64_t align, bool touch, bool cta = false) {
    settle_all();
    const SharedSlots::Choice c = slots_.choose_pinned(bytes, align, touch, cta, turn_bytes());
    requests_.push_back(c);
    if (c.barrier_first) barrier();
    slots_.take_pinned(c, bytes, align, touch, cta);
    return c.slot;
  }

  void bind_in(const ir::Value* v, const Layout& l) {
    auto key = std::make_pair(v->id, l.str());
    if (!scopes_.empty()) scopes_.back().push_back(key);
    have_.insert(std::move(key));
  }

  // Lowerer::with_rebound: what is known of the rebound values (`ids`: substituted values and
  // the ops' results) is forgotten, the ops lowered again in a scope of their own, `use` run,
  // and afterwards what was known before restored.
  template <class F>
  void rebound(std::vector<uint32_t> ids, const std::vector<const ir::Op*>& ops, F use) {
    for (const ir::Op* op : ops) {
      for (const ir::Value* v : op->operands) settle(v);
      for (const ir::Value* v : op->results) settle(v);
      for (const ir::Value* v : op->results) ids.push_back(v->id);
    }
    std::vector<std::pair<uint32_t, std::string>> saved;
    auto forget = [&](bool save) {
      for (auto it = have_.begin(); it != have_.end();) {
        if (std::find(ids.begin(), ids.end(), it->first) == ids.end()) {
          ++it;
          continue;
        }
        if (save) saved.push_back(*it);
        it = have_.erase(it);
      }
    };
    forget(true);
    scopes_.emplace_back();
    for (const ir::Op* op : ops) lower_op(*op, lay_->of_op(*op));
    use();
    pop_scope();
    forget(false);
    for (auto& key : saved) have_.insert(std::move(key));
  }

  void pop_scope() {
    for (const auto& key : scopes_.back()) have_.erase(key);
    scopes_.pop_back();
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

  // Lowerer::tile: a deferred wgmma group whose result is read is waited for first.
  void tile(const ir::Value* v, const Layout& l) {
    if (!pending_.empty()) settle(v);
    if (lay_->of(v) == l) return;
    auto key = std::make_pair(v->id, l.str());
    if (have_.count(key)) return;
    if (k_.recomputed(v)) lower_op(*v->def, &l);
    else convert(v, lay_->of(v), l);
    if (!scopes_.empty()) scopes_.back().push_back(key);
    have_.insert(std::move(key));
  }

  // lower_sequential_loop (LoopFrame): the carried tiles' initial values in the carried
  // layouts, the body in a scope of its own (what it converts is forgotten after the loop),
  // the yielded tiles in the carried layouts, the latch's barrier where the next trip would
  // race this one's readers.
  // LoopFrame: the carried tiles the role keeps, their initial values and the yielded ones in
  // the carried layouts.
  bool keeps(const ir::Value* c) const { return !producer_ || k_.producer_values.count(c) > 0; }
  bool lowers(const ir::Op& op) const { return !producer_ || k_.producer_ops.count(&op) > 0; }
  void frame_inits(const ir::ForOp& f) {
    for (int i = 0; i < static_cast<int>(f.num_carried()); ++i)
      if (keeps(f.carried(i)) && !f.carried(i)->type.is_scalar()) tile(f.init(i), lay_->of(f.carried(i)));
  }
  void yields(const ir::ForOp& f) {
    for (int i = 0; i < static_cast<int>(f.num_carried()); ++i)
      if (keeps(f.carried(i)) && !f.carried(i)->type.is_scalar())
        tile(f.yield().operands.at(static_cast<size_t>(i)), lay_->of(f.carried(i)));
  }

  void sequential_loop(const ir::Op& op) {
    ir::ForOp f{op};
    frame_inits(f);
    slots_.loop_begin();
    scopes_.emplace_back();
    lower_block(f.body());
    yields(f);
    latch();
  }

  // lower_for: the producers run a pipelined loop sequentially and copy a ring loop's stages.
  void loop(const ir::Op& op) {
    switch (k_.schedule(op)) {
      case LoopSchedule::Sequential: return sequential_loop(op);
      case LoopSchedule::Pipelined: return producer_ ? sequential_loop(op) : pipelined_loop(op, *k_.pipeline(op));
      case LoopSchedule::Ring: return producer_ ? ring_producer_loop(op, *k_.pipeline(op)) : ring_consumer_loop(op, *k_.pipeline(op));
    }
  }

  // Lowerer::ring_of: a ring's stages and mbarriers pinned for the kernel by the first of the
  // loops that continue it (never touched: its stages change hands through the mbarriers).
  void ring_of(const ir::Op& loop) {
    const RingPlan& r = *k_.ring(loop);
    const bool shared = k_.shared_ring();  // with two trip words after the mbarriers
    if (rings_.insert(r.shares ? r.shares : &loop).second)
      pin(r.stages * r.stage_bytes + 16 * r.stages + (shared ? 16 : 0), r.align, /*touch=*/false, shared);
  }

  // lower_ring_consumer_loop: the ring, the resident operands of a ring of several dots (a
  // barrier), the body reading the producers' stages, the latch; the residents released and a
  // warpgroup turns' closing barrier after it.
  void ring_consumer_loop(const ir::Op& op, const PipelinePlan& p) {
    ir::ForOp f{op};
    frame_inits(f);
    ring_of(op);
    const bool several = p.dots.size() > 1;
    std::vector<int> own;
    if (several) own = stage_residents(p);
    turns_laid_out_ |= k_.shared_ring();  // ring_acquire
    slots_.loop_begin();
    scopes_.emplace_back();
    const ir::ForOp* outer = std::exchange(current_, &f);
    lower_pipelined_block(f.body(), p, /*ring=*/true);
    current_ = outer;
    yields(f);
    latch();
    if (several) release_residents(p, own);
    if (p.warpgroup_turns) barrier();
  }

  // lower_ring_producer_loop: the trip's copies (masks and pointers in the producers' layouts),
  // then the body's ops the producers need.
  void ring_producer_loop(const ir::Op& op, const PipelinePlan& p) {
    ir::ForOp f{op};
    frame_inits(f);
    slots_.loop_begin();
    scopes_.emplace_back();
    if (!k_.ring(op)->by_tma()) issue_stage(f, p);
    lower_block(f.body());
    yields(f);
    latch();
  }

  // LoopFrame::close: the latch's barrier where the next trip would race this one's readers,
  // what the body converted forgotten, the exit.
  void latch() {
    latches_.push_back(slots_.latch_needs_barrier());
    if (latches_.back()) barrier();
    slots_.latch_done();
    pop_scope();
    slots_.loop_exit();
  }

  // A carried value's pointer step in the carried layout (step_registers).
  void step_tile(const ir::ForOp& f, const PipelinedOperand& po) {
    if (po.from_iv() || po.step->type.is_scalar()) return;
    tile(po.step, lay_->of(f.carried(po.carried)));
  }

  // issue_stage: the copies' masks, and the pointers computed from the induction variable, in
  // each copy's layout, with the mask ops lowered again for the trip's induction variable.
  void issue_stage(const ir::ForOp& f, const PipelinePlan& p) {
    rebound({f.induction_var()->id}, p.mask_ops, [&] {
      for (const PipelinedOperand& po : p.operands) {
        const Layout& l = po.dense ? *po.dense : lay_->of(po.load->results[0]);
        ir::LoadOp ld{*po.load};
        if (ld.mask()) tile(ld.mask(), l);
        if (po.from_iv()) tile(ld.ptr(), l);
      }
    });
  }

  // lower_pipelined_loop: the stage buffers pinned, the steps, the stage mbarriers (once a
  // loop), the prologue's copies, the resident operands staged (a barrier), the body, the
  // steps again, the latch; after it the buffers unpinned (stage_residents, release_residents).
  void pipelined_loop(const ir::Op& op, const PipelinePlan& p) {
    ir::ForOp f{op};
    frame_inits(f);
    const int buf = pin(p.stages * p.stage_bytes, p.stage_align, true);
    rebound({}, p.step_ops, [&] {
      for (const PipelinedOperand& po : p.operands) step_tile(f, po);
    });
    if (p.mbarriers && stage_barriers_.insert(&op).second) pin(16 * p.stages, 16, false);
    for (int j = 0; j < p.ahead; ++j) issue_stage(f, p);
    const std::vector<int> own = stage_residents(p);
    turns_laid_out_ |= p.turns;  // mainloop_acquire
    slots_.loop_begin();
    scopes_.emplace_back();
    const ir::ForOp* outer = std::exchange(current_, &f);
    lower_pipelined_block(f.body(), p);
    current_ = outer;
    yields(f);
    for (const PipelinedOperand& po : p.operands) step_tile(f, po);
    latch();
    slots_.unpin(buf);
    release_residents(p, own);
    if (p.warpgroup_turns) barrier();  // turns_close: every warpgroup past warpgroup 0's last hand-over
  }

  // stage_residents: each resident operand not kept by an earlier loop pinned, one barrier
  // after their staging.
  std::vector<int> stage_residents(const PipelinePlan& p) {
    std::vector<int> own(p.resident.size(), -1);
    bool staged = false;
    for (size_t i = 0; i < p.resident.size(); ++i) {
      if (p.resident[i].reused) continue;
      own[i] = pin(p.resident[i].tile.bytes(), p.stage_align, true);
      staged = true;
    }
    if (staged) barrier();
    return own;
  }

  // release_residents: the buffers no later loop reads unpinned, the kept ones handed on.
  void release_residents(const PipelinePlan& p, const std::vector<int>& own) {
    for (size_t i = 0; i < p.resident.size(); ++i) {
      const ResidentOperand& r = p.resident[i];
      if (r.kept) continue;
      if (!r.reused) {
        slots_.unpin(own[i]);
        continue;
      }
      auto it = kept_.find(r.value());
      slots_.unpin(it->second);
      kept_.erase(it);
    }
    for (size_t i = 0; i < p.resident.size(); ++i)
      if (p.resident[i].kept && !p.resident[i].reused) kept_[p.resident[i].value()] = own[i];
  }

  // pipelined_dot: operands from the trip's stage, the resident buffers or a stage slot read
  // without a request; one staged here from registers takes a scratch buffer. The loop's first
  // dot waits (a barrier unless mbarriers signal the stages) and issues the copies of trip
  // i + ahead: before its products, or after them when a wgmma group stays in flight (a second
  // barrier first with several warpgroups).
  //
  // With warpgroup turns the trip's copies wait for the turn's hand-over (turn_take), which
  // comes after the trip's products are issued, at a barrier, or where a deferred group is
  // waited for (turn_pass).
  void pipelined_dot(const ir::Op& op, const PipelinePlan& plan, bool ring) {
    const MmaPlan& p = *k_.mma(op);
    const auto own = [&](int i) { tile(op.operands[static_cast<size_t>(i)], lay_->of(op.operands[static_cast<size_t>(i)])); };
    tile(op.operands[2], *lay_->of_op(op));
    bool from_registers = false;
    for (int i = 0; i < 2; ++i) {
      if (p.in_registers(i) || plan.copy_of(&op, i) || plan.resident_of(&op, i)) continue;
      if (plan.staged_of(&op, i)) own(i);
      else from_registers = true;
    }
    int scratch = -1;
    if (from_registers) {
      scratch = request(p.smem_bytes(), p.wgmma ? 1024 : 16);
      for (int i = 0; i < 2; ++i)
        if (!p.in_registers(i) && !plan.copy_of(&op, i) && !plan.resident_of(&op, i) && !plan.staged_of(&op, i)) own(i);
    }
    const bool waits = &op == plan.dot;
    if (!(waits && (plan.mbarriers || ring)) && (waits || from_registers)) barrier();
    const bool issue_late = waits && plan.wgmma_in_flight >= 0;
    const ir::ForOp& f = *current_;
    if (waits && plan.warpgroup_turns) {
      turn_held_ = true;
      if (!issue_late && !ring) turn_after_ = [this, &f, &plan] { issue_stage(f, plan); };
    } else if (waits && !issue_late && !ring) {
      issue_stage(f, plan);
    }
    if (p.wgmma && p.a_in_registers) own(0);
    else if (!p.wgmma && p.b_in_registers) own(1);
    if (plan.warpgroup_turns && (&op == plan.dots.back() || !plan.defers(&op))) turn_pass();
    if (issue_late && p.warpgroups() > 1) barrier();
    if (issue_late && !ring) issue_stage(f, plan);
    if (from_registers) slots_.touch(scratch);
  }

  // Lowerer::settle_wgmma: waiting for a deferred group hands the warpgroup's turn on first.
  void settle(const ir::Value* v) {
    if (std::find(pending_.begin(), pending_.end(), v) == pending_.end()) return;
    turn_pass();
    auto it = std::find(pending_.begin(), pending_.end(), v);
    if (it != pending_.end()) pending_.erase(pending_.begin(), it + 1);
  }
  void settle_all() {
    if (!pending_.empty()) settle(pending_.back());
  }
  // Lowerer::turn_pass: the held turn handed on, then what waited for it (the trip's copies).
  void turn_pass() {
    if (!turn_held_) return;
    turn_held_ = false;
    if (turn_after_) std::exchange(turn_after_, nullptr)();
  }

  void convert_operands(const ir::Op& op, const Layout* l) {
    for (const auto& [i, want] : operands_converted_first(op, l)) tile(op.operands[static_cast<size_t>(i)], want);
  }

  // A dot outside a pipelined loop (lower_dot.cpp, lower_dot_mma.cpp): the accumulator in the
  // result's layout, then one buffer for both operands: f32 copies of a and b for the FMA
  // path; the tensor-core staging otherwise, a staged load's pointers (and mask) in the load's
  // layout, copied in by cp.async; a barrier; the products read it.
  void dot(const ir::Op& op, const Layout* l) {
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

  void reduce(const ir::Op& op, const Layout* l) {
    const ir::Value* x = op.operands[0];
    const int axis = static_cast<int>(op.int_attr("axis"));
    const Layout src = reduce_source_layout(lay_->of(x), l, axis);
    tile(x, src);
    const ReducePlan plan = plan_reduce(src, x->type.shape, axis);
    if (plan.warps > 1) exchange(exchange_shape(reduction_channels(op), plan.warps * plan.result_numel).bytes);
    if (!plan.scalar_result && l && !(plan.result == *l)) convert(op.results[0], plan.result, *l);
  }

  void store(const ir::Op& op, const Layout* l) {
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
    if (register_map(*l, rs, lay_->of(x), xs, trans ? transpose_map() : reshape_map(xs, rs))) return;
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
  const LayoutAssignment* lay_ = &k_.layouts;  // the role's layouts
  bool producer_ = false;                       // lowering the producer warps' role
  bool turns_laid_out_ = false;                 // programs' turn words placed (turn_bytes)
  SharedSlots slots_;
  std::vector<SharedSlots::Choice> requests_;  // SharedPlan's decisions, in the order asked
  std::vector<bool> latches_;
  std::vector<int64_t> budgets_;
  std::set<std::pair<uint32_t, std::string>> have_;  // (value, layout) recomputed or converted
  std::vector<std::vector<std::pair<uint32_t, std::string>>> scopes_;  // loop bodies': forgotten after
  std::set<const ir::Op*> rings_;                      // ring owners whose stages are laid out
  std::set<const ir::Op*> stage_barriers_;             // pipelined loops whose mbarriers are laid out
  std::map<const ir::Value*, int> kept_;               // resident operands kept for a later loop: slot
  const ir::ForOp* current_ = nullptr;                 // the pipelined loop being walked
  std::vector<const ir::Value*> pending_;              // deferred wgmma groups' results, oldest first
  bool turn_held_ = false;                             // this warpgroup holds its turn at the wgmma
  std::function<void()> turn_after_;                   // what waits for the hand-over (the copies)
};

}  // namespace

SharedPlan walk_shared(const KernelPlan& k) {
  Walker w(k);
  w.lower_block(k.f.body);
  if (k.opts.warp_specialize) w.lower_producer();
  return w.result();
}

}  // namespace tessel::lowering
