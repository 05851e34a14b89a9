// The walker's loops (shared_walker.hpp): sequential, pipelined by cp.async (stages, stage
// mbarriers, residents, prefetches, dots of the trip, groups in flight, warpgroup turns), rings
// (their consumers and producers) and the producer warps' role.
#include <algorithm>
#include <utility>

#include "plan/pipeline_plan.hpp"
#include "plan/shared_walker.hpp"

namespace tessel::lowering {

// Lowerer::lower_roles' second lowering: the producer warps' ops (KernelPlan::producer_ops)
// in their own layouts, nothing converted before known; they never meet at a barrier (the
// emitter refuses one), so their steps are their loops' begin, latch and exit.
void SharedWalker::lower_producer() {
  have_.clear();
  lay_ = &*k_.producer_layouts;
  producer_ = true;
  lower_block(k_.f.body);
}

// The body of a pipelined loop (lower_block with its PipelineState): a prefetched load read
// from its stage (a dense one after a barrier, bound in each layout its users read), a dot
// from the trip's stage (pipelined_dot).
// A ring's consumers (`ring`) wait for the producers' stage; a ring of one dot reads it without
// the loop's plan (lower_dot_mma: only the accumulator).
void SharedWalker::lower_pipelined_block(const ir::Block& blk, const PipelinePlan& p, bool ring) {
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

void SharedWalker::frame_inits(const ir::ForOp& f) {
  for (int i = 0; i < static_cast<int>(f.num_carried()); ++i)
    if (keeps(f.carried(i)) && !f.carried(i)->type.is_scalar()) tile(f.init(i), lay_->of(f.carried(i)));
}

void SharedWalker::yields(const ir::ForOp& f) {
  for (int i = 0; i < static_cast<int>(f.num_carried()); ++i)
    if (keeps(f.carried(i)) && !f.carried(i)->type.is_scalar())
      tile(f.yield().operands.at(static_cast<size_t>(i)), lay_->of(f.carried(i)));
}

void SharedWalker::sequential_loop(const ir::Op& op) {
  ir::ForOp f{op};
  frame_inits(f);
  slots_.loop_begin();
  scopes_.emplace_back();
  lower_block(f.body());
  yields(f);
  latch();
}

// lower_for: the producers run a pipelined loop sequentially and copy a ring loop's stages.
void SharedWalker::loop(const ir::Op& op) {
  switch (k_.schedule(op)) {
    case LoopSchedule::Sequential: return sequential_loop(op);
    case LoopSchedule::Pipelined: return producer_ ? sequential_loop(op) : pipelined_loop(op, *k_.pipeline(op));
    case LoopSchedule::Ring: return producer_ ? ring_producer_loop(op, *k_.pipeline(op)) : ring_consumer_loop(op, *k_.pipeline(op));
  }
}

// Lowerer::ring_of: a ring's stages and mbarriers pinned for the kernel by the first of the
// loops that continue it (never touched: its stages change hands through the mbarriers).
void SharedWalker::ring_of(const ir::Op& loop) {
  const RingPlan& r = *k_.ring(loop);
  const bool shared = k_.shared_ring();  // with two trip words after the mbarriers
  if (rings_.insert(r.shares ? r.shares : &loop).second)
    pin(r.stages * r.stage_bytes + 16 * r.stages + (shared ? 16 : 0), r.align, /*touch=*/false, shared);
}

// lower_ring_consumer_loop: the ring, the resident operands of a ring of several dots (a
// barrier), the body reading the producers' stages, the latch; the residents released and a
// warpgroup turns' closing barrier after it.
void SharedWalker::ring_consumer_loop(const ir::Op& op, const PipelinePlan& p) {
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
void SharedWalker::ring_producer_loop(const ir::Op& op, const PipelinePlan& p) {
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
void SharedWalker::latch() {
  latches_.push_back(slots_.latch_needs_barrier());
  if (latches_.back()) barrier();
  slots_.latch_done();
  pop_scope();
  slots_.loop_exit();
}

// A carried value's pointer step in the carried layout (step_registers).
void SharedWalker::step_tile(const ir::ForOp& f, const PipelinedOperand& po) {
  if (po.from_iv() || po.step->type.is_scalar()) return;
  tile(po.step, lay_->of(f.carried(po.carried)));
}

// issue_stage: the copies' masks, and the pointers computed from the induction variable, in
// each copy's layout, with the mask ops lowered again for the trip's induction variable.
void SharedWalker::issue_stage(const ir::ForOp& f, const PipelinePlan& p) {
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
void SharedWalker::pipelined_loop(const ir::Op& op, const PipelinePlan& p) {
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
std::vector<int> SharedWalker::stage_residents(const PipelinePlan& p) {
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
void SharedWalker::release_residents(const PipelinePlan& p, const std::vector<int>& own) {
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
void SharedWalker::pipelined_dot(const ir::Op& op, const PipelinePlan& plan, bool ring) {
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
void SharedWalker::settle(const ir::Value* v) {
  if (std::find(pending_.begin(), pending_.end(), v) == pending_.end()) return;
  turn_pass();
  auto it = std::find(pending_.begin(), pending_.end(), v);
  if (it != pending_.end()) pending_.erase(pending_.begin(), it + 1);
}

void SharedWalker::settle_all() {
  if (!pending_.empty()) settle(pending_.back());
}

// Lowerer::turn_pass: the held turn handed on, then what waited for it (the trip's copies).
void SharedWalker::turn_pass() {
  if (!turn_held_) return;
  turn_held_ = false;
  if (turn_after_) std::exchange(turn_after_, nullptr)();
}

}  // namespace tessel::lowering
