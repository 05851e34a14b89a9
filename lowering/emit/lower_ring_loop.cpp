// A ring loop (LoopSchedule::Ring, warp specialisation; warp_roles.cpp has the scheme): both
// roles count their trips through the ring in a per-thread counter, trip n using stage n mod S in
// phase n / S. The producer waits until the consumers released a stage, copies the trip's
// operands into it (cp.async arriving on full[s], or TMA boxes announced on full[s]); the
// consumers' dot waits for full[s], issues its wgmma group and releases the stage a finished
// group read. In a loop of several dots the first waits, each reads its operands in the stage
// (or resident, or in registers), and the trip's end releases the stage. Programs sharing a CTA
// take turns at one shared ring (program_groups.cpp).
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "loop_frame.hpp"
#include "pipeline.hpp"
#include "tma_copies.hpp"

namespace tessel::lowering {
namespace {

// This thread's trip through `loop`'s ring, counted across every run of the loop: its stage and
// the parity of its phase.
std::pair<llvm::Value*, llvm::Value*> ring_trip(Lowerer& L, const ir::Op& op, const Lowerer::Ring& rg) {
  llvm::Value* n = take_use(L, L.ring_counter(op));
  return {stage_of_use(L, n, rg.stages), parity_of_use(L, n, rg.stages)};
}

// The compact operands' pointer tiles (PipelinedOperand::strides: ring loops of several dots)
// are carried as their first register's pointer, in either role's layout; the loop's registers
// are derived from it (expand_pointers; `sink`: the producer's lean copies). Call before f.open().
void carry_compact(Lowerer& L, LoopFrame& f, const PipelinePlan& p,
                   const std::vector<std::vector<llvm::Value*>>& strides, bool sink) {
  for (size_t o = 0; o < p.operands.size(); ++o) {
    const PipelinedOperand& po = p.operands[o];
    if (!po.compact() || !f.keep[po.carried]) continue;
    f.carry_first(po.carried, [&L, &f, &po, &stride = strides[o], sink](llvm::Value* p0) {
      return expand_pointers(L, po, *f.lay[po.carried], f.loop.carried(po.carried)->type.shape, stride, p0, sink);
    });
  }
}

}  // namespace

llvm::Value* stage_of_use(Lowerer& L, llvm::Value* n, int stages) { return L.b.CreateURem(n, L.i32(stages)); }

llvm::Value* parity_of_use(Lowerer& L, llvm::Value* n, int stages) {
  return L.b.CreateAnd(L.b.CreateUDiv(n, L.i32(stages)), L.i32(1));
}

llvm::Value* take_use(Lowerer& L, llvm::Value* counter) {
  llvm::Value* n = L.b.CreateLoad(L.b.getInt32Ty(), counter);
  L.b.CreateStore(L.b.CreateAdd(n, L.i32(1)), counter);
  return n;
}

void lower_ring_producer_loop(Lowerer& L, const ir::Op& op, const PipelinePlan& p) {
  auto& b = L.b;
  LoopFrame f(L, op);
  const Lowerer::Ring& rg = L.ring_of(op);
  llvm::Value* base = L.ring_base(rg);
  const RingPlan& plan = *L.plan.ring(op);
  const bool shared = L.shared_ring();
  const std::vector<std::vector<llvm::Value*>> strides = runtime_strides(L, p);
  carry_compact(L, f, p, strides, plan.lean_copies);
  if (shared) L.ring_acquire(op, rg);
  f.open();
  auto [slot, parity] = ring_trip(L, op, rg);
  auto stage_base = [&, slot = slot] {
    return b.CreateGEP(b.getInt8Ty(), base, b.CreateMul(slot, L.i32(p.stage_bytes)));
  };
  // Wait until the consumers released the stage (the first S trips pass at once).
  mbarrier_wait(L, L.ring_empty(rg, slot), b.CreateXor(parity, L.i32(1)));
  if (plan.by_tma()) {
    // One lane of each issuing warp announces its boxes' bytes on full[slot] and issues them
    // (the warp index comes through a shuffle: warp-uniform, so the branch on it is too); the
    // stage completes when every box has landed.
    llvm::Value* warp = L.intrinsic(llvm::Intrinsic::nvvm_shfl_sync_idx_i32, {},
                                    {L.i32(-1), b.CreateLShr(L.tid(), L.i32(5)), L.i32(0), L.i32(31)});
    issue_stage_tma(L, p, plan, stage_base(), L.ring_full(rg, slot), f.iv, warp);
  } else {
    // Copy this trip's operands into the stage and let each thread's copies arrive on full[slot]
    // (pointers computed from the induction variable: issue_stage computes this trip's).
    // (A compact operand's registers were derived from its carried first pointer at the
    // body's start: carry_compact.)
    std::vector<Regs> ptrs;
    for (const PipelinedOperand& po : p.operands) ptrs.push_back(po.from_iv() ? Regs{} : f.vals[po.carried]);
    issue_stage(L, op, p, stage_base(), f.iv, b.CreateICmpSLT(f.iv, f.hi), ptrs, /*commit=*/false, plan.lean_copies);
    copies_arrive(L, L.ring_full(rg, slot));
  }
  f.lower_body(nullptr);
  f.close();
  if (shared) L.ring_release(op, rg);
  f.bind_results(p.wgmma_in_flight);
}

void lower_ring_consumer_loop(Lowerer& L, const ir::Op& op, const PipelinePlan& p) {
  auto& b = L.b;
  LoopFrame f(L, op);
  const Lowerer::Ring& rg = L.ring_of(op);
  llvm::Value* base = L.ring_base(rg);
  const bool tma = L.plan.ring(op)->by_tma();
  const bool shared = L.shared_ring();
  // Several dots (attention): the residents are staged before the loop (Q), the trip's first
  // dot waits for the stage, every dot reads its copies there (pipelined_dot), and the trip's
  // end releases the stage, its wgmma groups settled.
  const bool several = p.dots.size() > 1;
  const std::vector<std::vector<llvm::Value*>> strides = runtime_strides(L, p);
  carry_compact(L, f, p, strides, /*sink=*/false);  // the consumers copy nothing
  std::vector<Lowerer::SmemBuffer> own(p.resident.size());
  const std::vector<llvm::Value*> resident = several ? stage_residents(L, p, own) : std::vector<llvm::Value*>{};
  if (shared) L.ring_acquire(op, rg);
  if (p.warpgroup_turns) L.turns_open(p.warpgroup_turns);
  f.open();
  auto [slot, parity] = ring_trip(L, op, rg);
  const int S = rg.stages;
  PipelineState state;
  state.ring = true;
  state.base = base;
  state.read_slot = slot;
  state.stages = S;
  state.stage_bytes = p.stage_bytes;
  state.wgmma_in_flight = p.wgmma_in_flight >= 0;
  if (several) {
    state.plan = &p;
    state.resident = resident;
  }
  // cp.async writes through the generic proxy, which wgmma's reads must be fenced against; TMA
  // writes through the async proxy itself.
  state.wait_ready = [&L, &rg, slot = slot, parity = parity, tma] {
    mbarrier_wait(L, L.ring_full(rg, slot), parity);
    if (!tma) fence_proxy_async(L);
  };
  // In flight: this trip's wait retired the previous trip's group, whose stage is free.
  state.release = [&L, &b, &rg, slot = slot, iv = f.iv, lo = f.lo, S, in_flight = state.wgmma_in_flight] {
    if (!in_flight) return mbarrier_arrive_warp(L, L.ring_empty(rg, slot));
    llvm::Value* prev = b.CreateSelect(b.CreateICmpEQ(slot, L.i32(0)), L.i32(S - 1), b.CreateSub(slot, L.i32(1)));
    L.if_then(b.CreateICmpNE(iv, lo), [&] { mbarrier_arrive_warp(L, L.ring_empty(rg, prev)); });
  };
  f.lower_body(&state);
  if (several) mbarrier_arrive_warp(L, L.ring_empty(rg, slot));
  f.close();
  if (several) release_residents(L, p, own);
  if (p.warpgroup_turns) L.turns_close();  // after the releases: its barrier frees their buffers
  if (shared) L.ring_release(op, rg);
  f.bind_results(p.wgmma_in_flight);
  if (p.wgmma_in_flight >= 0) {
    // The last trip's group is done: release its stage (when the loop ran at all).
    L.if_then(b.CreateICmpSLT(f.lo, f.hi), [&] {
      llvm::Value* n = b.CreateLoad(b.getInt32Ty(), L.ring_counter(op));
      mbarrier_arrive_warp(L, L.ring_empty(rg, b.CreateURem(b.CreateSub(n, L.i32(1)), L.i32(rg.stages))));
    });
  }
}

}  // namespace tessel::lowering
