// The walker behind walk_shared (shared_walk.hpp), for its two files (shared_walk.cpp: the
// ops and the requests; shared_walk_loops.cpp: loops, pipelined dots, rings, turns, roles).
// The walk mirrors the emitter's order: the body's ops in block order (lower_block), a
// sequential loop as LoopFrame lowers it (walk's `loop`); for each op,
// its operands converted first in operand order (Lowerer::convert_operands), a tile wanted in
// another layout recomputed there (lowering its producer again, recursively) or converted
// through shared memory once per layout (Lowerer::tile); then the op's own requests: a
// reduction's exchange across warps and its result's conversion (lower_reduce.cpp), a store's
// operands in the wider layout it may write from (lower_memory.cpp). Each request is made as
// Lowerer::smem_begin makes it (choose, the barrier it asks for, take), each exchange as
// exchange_through_smem (take, barrier, reads: touch), each 2-D conversion as convert_layout.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "plan/kernel_plan.hpp"
#include "plan/shared_slots.hpp"
#include "tessel/ir/accessors.hpp"
#include "tessel/lowering/target.hpp"

namespace tessel::lowering {

class SharedWalker {
 public:
  // The requests and barriers of the plan's kernel, walked by lower_block (and lower_producer
  // under warp specialisation); result() is the SharedPlan.
  explicit SharedWalker(const KernelPlan& k)
      : k_(k),
        slots_(k.opts.programs_per_cta, target_info(k.opts.target).max_shared_per_block,
               target_info(k.opts.target).shared_per_sm) {}
  SharedPlan result() const;

  // Lowerer::lower_roles' second lowering: the producer warps' ops (KernelPlan::producer_ops)
  // in their own layouts, nothing converted before known; they never meet at a barrier (the
  // emitter refuses one), so their steps are their loops' begin, latch and exit.
  void lower_producer();
  void lower_op(const ir::Op& op, const Layout* l);
  // Lowerer::lower_block: a sequential loop where the op is one, a dot's operands converted
  // before it, a load that a dot stages (by cp.async) left to the dot, else the op.
  void lower_block(const ir::Block& blk);
  // The body of a pipelined loop (lower_block with its PipelineState): a prefetched load read
  // from its stage (a dense one after a barrier, bound in each layout its users read), a dot
  // from the trip's stage (pipelined_dot).
  // A ring's consumers (`ring`) wait for the producers' stage; a ring of one dot reads it without
  // the loop's plan (lower_dot_mma: only the accumulator).
  void lower_pipelined_block(const ir::Block& blk, const PipelinePlan& p, bool ring = false);
 private:
  // Shared memory a conversion may use without costing occupancy (recorded: SharedPlan::budgets).
  int64_t budget();
  // Lowerer::turn_bytes_laid_out: several programs a CTA take turns through mbarriers laid out
  // after the slots once the first turn is waited for.
  int64_t turn_bytes() const;
  // Lowerer::barrier: a held turn is handed on and the deferred groups waited for first.
  void barrier();
  int request(int64_t bytes, int64_t align = 16);
  // Lowerer::smem_pinned (`cta`: a ring the programs of a CTA share).
  int pin(int64_t bytes, int64_t align, bool touch, bool cta = false);
  void bind_in(const ir::Value* v, const Layout& l);
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
  void pop_scope();
  void exchange(int64_t bytes);
  void convert(const ir::Value* v, const Layout& from, const Layout& to);
  // Lowerer::tile: a deferred wgmma group whose result is read is waited for first.
  void tile(const ir::Value* v, const Layout& l);
  // LoopFrame: the carried tiles the role keeps, their initial values and the yielded ones in
  // the carried layouts.
  bool keeps(const ir::Value* c) const { return !producer_ || k_.producer_values.count(c) > 0; }
  bool lowers(const ir::Op& op) const { return !producer_ || k_.producer_ops.count(&op) > 0; }
  void frame_inits(const ir::ForOp& f);
  void yields(const ir::ForOp& f);
  // lower_sequential_loop (LoopFrame): the carried tiles' initial values in the carried
  // layouts, the body in a scope of its own (what it converts is forgotten after the loop),
  // the yielded tiles in the carried layouts, the latch's barrier where the next trip would
  // race this one's readers.
  void sequential_loop(const ir::Op& op);
  // lower_for: the producers run a pipelined loop sequentially and copy a ring loop's stages.
  void loop(const ir::Op& op);
  // Lowerer::ring_of: a ring's stages and mbarriers pinned for the kernel by the first of the
  // loops that continue it (never touched: its stages change hands through the mbarriers).
  void ring_of(const ir::Op& loop);
  // lower_ring_consumer_loop: the ring, the resident operands of a ring of several dots (a
  // barrier), the body reading the producers' stages, the latch; the residents released and a
  // warpgroup turns' closing barrier after it.
  void ring_consumer_loop(const ir::Op& op, const PipelinePlan& p);
  // lower_ring_producer_loop: the trip's copies (masks and pointers in the producers' layouts),
  // then the body's ops the producers need.
  void ring_producer_loop(const ir::Op& op, const PipelinePlan& p);
  // LoopFrame::close: the latch's barrier where the next trip would race this one's readers,
  // what the body converted forgotten, the exit.
  void latch();
  // A carried value's pointer step in the carried layout (step_registers).
  void step_tile(const ir::ForOp& f, const PipelinedOperand& po);
  // issue_stage: the copies' masks, and the pointers computed from the induction variable, in
  // each copy's layout, with the mask ops lowered again for the trip's induction variable.
  void issue_stage(const ir::ForOp& f, const PipelinePlan& p);
  // lower_pipelined_loop: the stage buffers pinned, the steps, the stage mbarriers (once a
  // loop), the prologue's copies, the resident operands staged (a barrier), the body, the
  // steps again, the latch; after it the buffers unpinned (stage_residents, release_residents).
  void pipelined_loop(const ir::Op& op, const PipelinePlan& p);
  // stage_residents: each resident operand not kept by an earlier loop pinned, one barrier
  // after their staging.
  std::vector<int> stage_residents(const PipelinePlan& p);
  // release_residents: the buffers no later loop reads unpinned, the kept ones handed on.
  void release_residents(const PipelinePlan& p, const std::vector<int>& own);
  // pipelined_dot: operands from the trip's stage, the resident buffers or a stage slot read
  // without a request; one staged here from registers takes a scratch buffer. The loop's first
  // dot waits (a barrier unless mbarriers signal the stages) and issues the copies of trip
  // i + ahead: before its products, or after them when a wgmma group stays in flight (a second
  // barrier first with several warpgroups).
  //
  // With warpgroup turns the trip's copies wait for the turn's hand-over (turn_take), which
  // comes after the trip's products are issued, at a barrier, or where a deferred group is
  // waited for (turn_pass).
  void pipelined_dot(const ir::Op& op, const PipelinePlan& plan, bool ring);
  // Lowerer::settle_wgmma: waiting for a deferred group hands the warpgroup's turn on first.
  void settle(const ir::Value* v);
  void settle_all();
  // Lowerer::turn_pass: the held turn handed on, then what waited for it (the trip's copies).
  void turn_pass();
  void convert_operands(const ir::Op& op, const Layout* l);
  // A dot outside a pipelined loop (lower_dot.cpp, lower_dot_mma.cpp): the accumulator in the
  // result's layout, then one buffer for both operands: f32 copies of a and b for the FMA
  // path; the tensor-core staging otherwise, a staged load's pointers (and mask) in the load's
  // layout, copied in by cp.async; a barrier; the products read it.
  void dot(const ir::Op& op, const Layout* l);
  void reduce(const ir::Op& op, const Layout* l);
  void store(const ir::Op& op, const Layout* l);
  // lower_atomic.cpp: a barrier before an acq_rel atomic; copies of an element (threads or
  // registers that do not own it) learn its old value from the owner through an exchange, whose
  // barrier also orders the acquire; without one a barrier after an acq_rel atomic.
  void atomic(const ir::Op& op, const Layout* l);
  // lower_reshape.cpp: a renaming of registers where each thread holds what its result needs,
  // else one exchange in the result's row-major order (a transpose's rows padded).
  void reshape(const ir::Op& op, const Layout* l);
  // lower_scan.cpp: the warps' totals exchanged when the scanned dim spans several warps.
  void scan(const ir::Op& op, const Layout* l);

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

}  // namespace tessel::lowering
