// Warp specialisation (Options::warp_specialize): producer warps fill the K loops' stages.
//
// Without it every warp of a program both copies its K loop's operands (cp.async) and computes
// on them, so a trip's copies, its cp.async wait and its CTA barrier sit between wgmma groups.
// With it the CTA gets one more warpgroup after the programs' warps: the producers, 4 / P
// warps for each of its P programs (one warpgroup keeps the CTA at 384 threads for two
// programs of 4 warps or one of 8, so ptxas may give every thread 168 registers: enough for a
// 64x256 f32 accumulator per warpgroup). The kernel body is lowered twice:
//
//   consumer (the program's own warps): everything, except that a ring loop
//     (LoopSchedule::Ring, plan/kernel_plan.hpp) waits for its trip's stage on full[s], issues its wgmma group and, once a
//     group is known to be done, arrives on empty[s] of the stage that group read. Its
//     barriers are the program's named barrier (1 + group) over its own warps only.
//   producer: only the ops its loops need (plan/roles.cpp): loop bounds, the pipelined
//     loads' pointer tiles, steps and masks, and whatever those are computed from, in layouts
//     assigned for its own warp count. Its copy of each ring loop waits on empty[s], issues
//     the trip's copies into stage s and makes each thread's copies arrive on full[s] when
//     they land (cp.async.mbarrier.arrive.noinc). With Options::tma, ring loops whose loads
//     qualify (plan/tma_plan.hpp) are copied by TMA instead: the trip's boxes are dealt to as many
//     producer warps as there are boxes (at most all of them), and each issuing warp's elected
//     lane announces its boxes' bytes on full[s] and issues them. (A warp announcing 0 bytes
//     hung the kernel on the H200, so warps without a box do not arrive at all.)
//
// The ring is S = num_stages buffers and 2 S mbarriers in the program's shared memory, pinned
// for the whole kernel (the producer fills it while the consumers run their epilogue). With
// two programs per CTA the ring is the CTA's: P x S stages that each program's ring loop
// uses in turn (program_groups.cpp: consumers and producers each take turns, the trip count
// is handed from one program's run to the next), so a program's main loop may use all the
// stages while the other program runs its epilogue. Both
// roles count their trips through a ring in a per-thread counter: trip n uses stage n mod S in
// phase n / S, so the consumer waits full[s] for parity (n / S) & 1 and the producer empty[s]
// for the opposite parity (the first S waits pass at once). Both roles run the same trips
// (the producer computes the same bounds), so the counters agree across persistent loops.
//
// Options::consumer_registers hands the producers' registers to the consumers (KernelPlan::
// registers: setmaxnreg.inc in the programs' warps, .dec in the producers', at their roles'
// start, under a .maxnreg of the CTA's share). Not by default: for the matmul rings it was
// measured on the H200 (bench/RESULTS.md, run 23) with no change with cp.async producers at
// 128x256x64 w8 (ptxas fits the consumers in 154-168 registers), the cp.async producers of two
// programs spilled their pointer tiles at 40 registers (0.374 -> 0.396 ms), and the TMA
// producer kernel was 25% slower (0.259 against 0.2015 ms without it). Rings of several dots
// (attention: a 64-row S and O accumulator per warpgroup) need it.
#include <fmt/format.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "lowerer.hpp"
#include "pipeline.hpp"
#include "tessel/ir/accessors.hpp"

namespace tessel::lowering {

namespace {

llvm::Value* shared_address(Lowerer& L, llvm::Value* p) {
  return L.b.CreateTrunc(L.b.CreatePtrToInt(p, L.b.getInt64Ty()), L.b.getInt32Ty());
}

// setmaxnreg.inc / .dec (KernelPlan::registers): every warp of the warpgroup runs it, at the
// start of its role.
void set_max_registers(Lowerer& L, bool inc, int regs) {
  auto* fty = llvm::FunctionType::get(L.b.getVoidTy(), false);
  const std::string text = fmt::format("setmaxnreg.{}.sync.aligned.u32 {};", inc ? "inc" : "dec", regs);
  llvm::CallInst* c = L.b.CreateCall(llvm::InlineAsm::get(fty, text, "~{memory}", true), {});
  c->addFnAttr(llvm::Attribute::Convergent);
}

}  // namespace

const Lowerer::Ring& Lowerer::ring_of(const ir::Op& op) {
  const ir::Op& loop = ring_owner(op);
  auto it = rings_.find(&loop);
  if (it != rings_.end()) return it->second;
  TESSEL_ASSERT(role == Role::Consumer, "the consumer lowering makes the rings");
  const RingPlan& rp = *plan.ring(loop);
  const int stages = rp.stages;
  const int64_t stage_bytes = rp.stage_bytes, align = rp.align;
  Ring r;
  // Never unpinned: the producer may fill it for the next run of the loop at any time.
  // Its stages change hands through its mbarriers, so no barrier protects it.
  // Shared rings (programs_per_cta > 1) are the CTA's, with two trip words after the mbarriers.
  r.buf = smem_pinned(stages * stage_bytes + 16 * stages + (shared_ring() ? 16 : 0), align);
  r.stages = stages;
  r.stage_bytes = stage_bytes;
  return rings_[&loop] = r;
}

llvm::Value* Lowerer::ring_full(const Ring& r, llvm::Value* slot) {
  llvm::Value* at = b.CreateAdd(i32(r.stages * r.stage_bytes), b.CreateMul(slot, i32(8)));
  return b.CreateGEP(b.getInt8Ty(), ring_base(r), at);
}

llvm::Value* Lowerer::ring_empty(const Ring& r, llvm::Value* slot) {
  return ring_full(r, b.CreateAdd(slot, i32(r.stages)));
}

llvm::Value* Lowerer::ring_trips_word(const Ring& r, Role role) {
  const int64_t at = r.stages * r.stage_bytes + 16 * r.stages + (role == Role::Producer ? 4 : 0);
  return b.CreateGEP(b.getInt8Ty(), ring_base(r), i32(at));
}

const ir::Op& Lowerer::ring_owner(const ir::Op& loop) const {
  const RingPlan* r = plan.ring(loop);
  return r && r->shares ? *r->shares : loop;
}

llvm::Value* Lowerer::ring_counter(const ir::Op& op) {
  const ir::Op& loop = ring_owner(op);  // loops continuing one ring count its trips together
  auto key = std::make_pair(&loop, role);
  auto it = ring_counters_.find(key);
  if (it != ring_counters_.end()) return it->second;
  llvm::AllocaInst* a = pb_.CreateAlloca(b.getInt32Ty(), nullptr, "ring.trips");
  pb_.CreateStore(pb_.getInt32(0), a);
  return ring_counters_[key] = a;
}

void Lowerer::lower_roles() {
  std::vector<Regs> params = values_;  // the kernel parameters' bindings, for the second lowering
  auto* consumer = llvm::BasicBlock::Create(ctx, "consumer", fn_);
  auto* producer = llvm::BasicBlock::Create(ctx, "producer", fn_);
  b.CreateCondBr(b.CreateICmpULT(cta_tid(), i32(consumer_threads())), consumer, producer);

  b.SetInsertPoint(consumer);
  role = Role::Consumer;
  if (plan.registers.consumers) set_max_registers(*this, true, plan.registers.consumers);
  lower_block(irf.body);
  retire();
  if (plan.cluster_pair) cluster_sync();  // neither CTA of a pair leaves while the other may use its barriers
  b.CreateRetVoid();

  values_ = params;
  other_layouts_.clear();
  b.SetInsertPoint(producer);
  role = Role::Producer;
  if (plan.registers.producers) set_max_registers(*this, false, plan.registers.producers);
  // The producer's tiles are spread over its own warps.
  layouts_ = &*plan.producer_layouts;
  lower_block(irf.body);
  layouts_ = &plan.layouts;
  // Leave no copy in flight at exit (the consumers wait for every stage anyway).
  intrinsic(llvm::Intrinsic::nvvm_cp_async_wait_all, {}, {});
  retire();
  if (plan.cluster_pair) cluster_sync();
  b.CreateRetVoid();
  role = Role::Both;
}

// Waits until the phase of parity `parity` of the mbarrier at `bar` has completed.
void mbarrier_wait(Lowerer& L, llvm::Value* bar, llvm::Value* parity) {
  auto& b = L.b;
  const char* text =
      "{\n"
      ".reg .pred p;\n"
      "tessel_wait_${:uid}:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [$0], $1;\n"
      "@!p bra tessel_wait_${:uid};\n"
      "}";
  auto* fty = llvm::FunctionType::get(b.getVoidTy(), {b.getInt32Ty(), b.getInt32Ty()}, false);
  b.CreateCall(llvm::InlineAsm::get(fty, text, "r,r,~{memory}", true), {shared_address(L, bar), parity});
}

void mbarrier_arrive_warp(Lowerer& L, llvm::Value* bar) {
  // One arrival per warp, not per thread: 8 shared-memory atomics per stage instead of 256
  // for 8 warps (no measurable change on the H200, run 23; the empty mbarriers expect one
  // arrival per consumer warp). The warp's lanes are converged here: its wgmma wait is
  // warpgroup-wide, so every lane's reads of the stage are done.
  auto* fty = llvm::FunctionType::get(L.b.getVoidTy(), {L.b.getInt32Ty()}, false);
  if (!L.cluster_pair()) {
    L.b.CreateCall(llvm::InlineAsm::get(fty,
                                        "{\n.reg .pred p;\nelect.sync _|p, 0xffffffff;\n"
                                        "@p mbarrier.arrive.shared::cta.b64 _, [$0];\n}",
                                        "r,~{memory}", true),
                   {shared_address(L, bar)});
    return;
  }
  // In a CTA pair the other CTA's producers also write this stage (multicast), so the stage is
  // free once both CTAs' consumers are done with it: arrive here and on the other CTA's
  // barrier at the same offset. The reads are complete (the wgmma wait), so the default
  // (CTA-scope) release suffices, as in CUTLASS; .release.cluster made every release a
  // cluster-wide memory barrier (MEMBAR stalls took half the kernel's time on the H100).
  auto* pair_fty = llvm::FunctionType::get(L.b.getVoidTy(), {L.b.getInt32Ty(), L.b.getInt32Ty()}, false);
  llvm::Value* peer = L.b.CreateXor(L.cluster_rank(), L.i32(1));
  L.b.CreateCall(llvm::InlineAsm::get(pair_fty,
                                      "{\n.reg .pred p;\n.reg .b32 remote;\n"
                                      "elect.sync _|p, 0xffffffff;\n"
                                      "mapa.shared::cluster.u32 remote, $0, $1;\n"
                                      "@p mbarrier.arrive.shared::cta.b64 _, [$0];\n"
                                      "@p mbarrier.arrive.shared::cluster.b64 _, [remote];\n}",
                                      "r,r,~{memory}", true),
                 {shared_address(L, bar), peer});
}

llvm::Value* Lowerer::cluster_rank() {
  return prologue_value("cluster rank", [&](llvm::IRBuilder<>& p) {
    auto* fty = llvm::FunctionType::get(p.getInt32Ty(), {}, false);
    return p.CreateCall(llvm::InlineAsm::get(fty, "mov.u32 $0, %cluster_ctarank;", "=r", false), {}, "cluster.rank");
  });
}

void Lowerer::cluster_sync() {
  auto* fty = llvm::FunctionType::get(b.getVoidTy(), {}, false);
  b.CreateCall(llvm::InlineAsm::get(fty, "barrier.cluster.arrive;\nbarrier.cluster.wait;", "~{memory}", true), {});
}

void copies_arrive(Lowerer& L, llvm::Value* bar) {
  L.intrinsic(llvm::Intrinsic::nvvm_cp_async_mbarrier_arrive_noinc_shared, {}, {bar});
}

llvm::BasicBlock* Lowerer::init_barriers(llvm::BasicBlock* body) {
  auto* init = llvm::BasicBlock::Create(ctx, "barriers.init", fn_, body);
  auto* then = llvm::BasicBlock::Create(ctx, "barriers.init.one", fn_, body);
  auto* join = llvm::BasicBlock::Create(ctx, "barriers.init.done", fn_, body);
  b.SetInsertPoint(init);
  // Thread 0 of each program (not of a producer) sets up that program's barriers.
  llvm::Value* first = b.CreateICmpEQ(tid(), i32(0));
  if (opts.warp_specialize) first = b.CreateAnd(first, b.CreateICmpULT(cta_tid(), i32(consumer_threads())));
  b.CreateCondBr(first, then, join);
  b.SetInsertPoint(then);
  if (turn_var_) {
    llvm::Value* g = group();
    intrinsic(llvm::Intrinsic::nvvm_mbarrier_init_shared, {}, {turn_barrier(g), i32(program_threads())});
    intrinsic(llvm::Intrinsic::nvvm_mbarrier_init_shared, {}, {retired_barrier(Role::Consumer, g), i32(1)});
    if (shared_ring()) {
      intrinsic(llvm::Intrinsic::nvvm_mbarrier_init_shared, {}, {turn_barrier(g, Role::Producer), i32(producer_threads())});
      intrinsic(llvm::Intrinsic::nvvm_mbarrier_init_shared, {}, {retired_barrier(Role::Producer, g), i32(1)});
    }
  }
  // A shared ring is set up once, by program 0.
  if_then(shared_ring() ? b.CreateICmpEQ(group(), i32(0)) : b.getTrue(), [&] {
    for (const auto& [loop, r] : rings_) {
      for (int s = 0; s < r.stages; ++s) {
        // full: every producer thread's copies arrive (cp.async), or each issuing producer warp's expect_tx (TMA, tma_plan.hpp).
        intrinsic(llvm::Intrinsic::nvvm_mbarrier_init_shared, {}, {ring_full(r, i32(s)), i32(plan.ring(*loop)->full_arrivals)});
        // empty: each consumer warp's release (of both CTAs of a pair, cluster_pair()).
        const int pairs = plan.cluster_pair ? 2 : 1;
        intrinsic(llvm::Intrinsic::nvvm_mbarrier_init_shared, {},
                  {ring_empty(r, i32(s)), i32(pairs * program_threads() / kWarpSize)});
      }
      if (shared_ring()) {
        b.CreateStore(i32(0), ring_trips_word(r, Role::Consumer));
        b.CreateStore(i32(0), ring_trips_word(r, Role::Producer));
      }
    }
  });
  for (const auto& [loop, sb] : stage_barriers_)
    for (int s = 0; s < sb.stages; ++s) {
      intrinsic(llvm::Intrinsic::nvvm_mbarrier_init_shared, {}, {stage_full(sb, i32(s)), i32(program_threads())});
      intrinsic(llvm::Intrinsic::nvvm_mbarrier_init_shared, {},
                {stage_empty(sb, i32(s)), i32(program_threads() / kWarpSize)});
    }
  if (plan.cluster_pair) {
    // The other CTA arrives on and writes into these barriers' phases: publish their set-up to it.
    auto* fty = llvm::FunctionType::get(b.getVoidTy(), {}, false);
    b.CreateCall(llvm::InlineAsm::get(fty, "fence.mbarrier_init.release.cluster;", "~{memory}", true), {});
  }
  b.CreateBr(join);
  b.SetInsertPoint(join);
  if (plan.cluster_pair) cluster_sync();  // both CTAs' barriers are set up (and this CTA's threads meet)
  else intrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
  b.CreateBr(body);
  return init;
}

}  // namespace tessel::lowering
