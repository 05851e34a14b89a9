// for loops: an LLVM loop with one phi per carried register and a scalar induction variable.
//
//   pre:    br header
//   header: iv = phi [lo, pre], [iv + step, latch]; carried phis; br (iv < hi), body, exit
//   body:   ...; yield -> phi incomings; br header
//   exit:   results = the header's phis
// The bounds are uniform scalars, so every thread runs the same trips (barriers inside the
// body, from layout conversions, are safe).
//
// With num_stages = S >= 2 and a loop that plan_pipeline accepts, the dot's operand copies
// run S - 1 trips ahead (Triton's scheme): the pre-header issues trips 0 .. S-2 into stage
// buffers 0 .. S-2 (one cp.async group each; trips past the end copy nothing and zero-fill);
// trip i waits until at most S - 2 groups are pending, passes a barrier, computes from buffer
// i mod S, then issues trip i + S - 1 into buffer (i - 1) mod S, the one every warp finished
// reading before that barrier. Extra phis carry the pointer tiles of trip i + S - 1 and the
// buffer index; the exit waits for every group (the trailing ones copy nothing). A wgmma dot
// may keep its group in flight into the next trip (PipelinePlan::wgmma_in_flight): trip i
// then issues its copies after waiting for trip i - 1's group (several warpgroups: and after
// a barrier past every warpgroup's wait). With
// several programs per CTA a wgmma K loop runs in its program's turn (program_groups.cpp).
//
// A step <= 0 fails the launch (the interpreter raises; a GPU loop would never end): one
// compare at loop entry, before the prologue, calls __assertfail (see device_assert) with the
// loop's file:line. The pipelined copies then count trips exactly as the interpreter does
// (trip_ahead), so none is issued for a trip past hi or past an overflow of iv + step.
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/MDBuilder.h>

#include "lowerer.hpp"
#include "pipeline.hpp"
#include "tma_plan.hpp"
#include "tessel/ir/accessors.hpp"

namespace tessel::lowering {
namespace {

// A constant string in global memory, as the generic pointer __assertfail takes.
llvm::Value* global_string(Lowerer& L, const std::string& s, const char* name) {
  llvm::Constant* init = llvm::ConstantDataArray::getString(L.ctx, s);
  auto* g = new llvm::GlobalVariable(L.module(), init->getType(), /*isConstant=*/true,
                                     llvm::GlobalValue::PrivateLinkage, init, name, nullptr,
                                     llvm::GlobalValue::NotThreadLocal, /*AddressSpace=*/1);
  g->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  g->setAlignment(llvm::Align(1));
  return L.b.CreateAddrSpaceCast(g, L.b.getPtrTy());
}

// CUDA's device-side assert: where `fail` (uniform) holds, each thread calls __assertfail, the
// PTX system call behind nvcc's assert (ptxas and the driver's JIT resolve it; nothing to link).
// The driver prints "file:line: kernel: block: [..], thread: [..] Assertion `message` failed."
// and the launch fails with CUDA_ERROR_ASSERT, which leaves the context unusable. A trap
// follows in case the call returns. The branch is marked unlikely: the check costs a compare.
void device_assert(Lowerer& L, llvm::Value* fail, const std::string& message, SrcLoc loc) {
  if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(fail); c && c->isZero()) return;
  auto& b = L.b;
  llvm::Type* ptr = b.getPtrTy();
  llvm::FunctionCallee assertfail = L.module().getOrInsertFunction(
      "__assertfail", llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, b.getInt32Ty(), ptr, b.getInt64Ty()}, false));
  llvm::Function* fn = L.function();
  auto* fail_bb = llvm::BasicBlock::Create(L.ctx, "assert.fail", fn);
  auto* cont = llvm::BasicBlock::Create(L.ctx, "assert.ok", fn);
  b.CreateCondBr(fail, fail_bb, cont, llvm::MDBuilder(L.ctx).createBranchWeights(1, 1u << 20));
  b.SetInsertPoint(fail_bb);
  const std::string file = loc.known() && loc.file ? loc.file : "<unknown>";
  b.CreateCall(assertfail, {global_string(L, message, "assert_message"), global_string(L, file, "assert_file"),
                            b.getInt32(loc.line), global_string(L, L.irf.name, "assert_function"), b.getInt64(1)});
  L.intrinsic(llvm::Intrinsic::trap, {}, {});
  b.CreateUnreachable();
  b.SetInsertPoint(cont);
}

// The trip `k` trips after the one at `iv` (iv + k * step; it wraps when that trip does not
// run) and whether the loop runs it, counted as the interpreter counts (iv += step while
// iv < hi, stopping where the sum overflows). With step > 0 (checked at entry) that trip runs
// iff iv < hi and k * step < hi - iv, both exact in unsigned arithmetic of the iv's width:
// hi - iv fits it when iv < hi, and a k * step that overflows it is past hi. (iv + k * step
// computed with signed overflow checks would refuse trips that run: lo = INT_MIN, step 2^30.)
std::pair<llvm::Value*, llvm::Value*> trip_ahead(Lowerer& L, llvm::Value* iv, llvm::Value* step, int64_t k,
                                                 llvm::Value* hi) {
  auto& b = L.b;
  llvm::Value* runs = b.CreateICmpSLT(iv, hi);
  if (k == 0) return {iv, runs};
  llvm::Type* t = iv->getType();
  llvm::Value* prod = L.intrinsic(llvm::Intrinsic::umul_with_overflow, {t}, {step, llvm::ConstantInt::get(t, k)});
  llvm::Value* dist = b.CreateExtractValue(prod, 0);
  llvm::Value* within = b.CreateICmpULT(dist, b.CreateSub(hi, iv));
  runs = b.CreateAnd(runs, b.CreateAnd(b.CreateNot(b.CreateExtractValue(prod, 1)), within));
  return {b.CreateAdd(iv, dist), runs};
}

}  // namespace

void lower_for(Lowerer& L, const ir::Op& op) {
  ir::ForOp loop{op};
  auto& b = L.b;
  llvm::Value* lo = L.scalar(loop.lo());
  llvm::Type* ivt = lo->getType();
  llvm::Value* hi = b.CreateSExtOrTrunc(L.scalar(loop.hi()), ivt);
  llvm::Value* step = b.CreateSExtOrTrunc(L.scalar(loop.step()), ivt);
  // Before anything of the loop runs (the pipelined prologue included): the interpreter's
  // "loop step is 0 ...; it must be positive", whether or not the loop would run a trip.
  device_assert(L, b.CreateICmpSLE(step, llvm::ConstantInt::get(ivt, 0)),
                "range(): the loop step must be positive", op.loc);

  // Producer warps (warp_roles.cpp) carry only the values they need, and pipeline only
  // through rings.
  // The producer takes the consumers' plan of a ring loop (made in their layouts).
  const bool producer = L.role == Lowerer::Role::Producer;
  std::optional<PipelinePlan> pipe;
  if (!producer) {
    pipe = plan_pipeline(L, op);
  } else if (auto it = L.ring_plans.find(&op); it != L.ring_plans.end()) {
    pipe = *it->second;
  }
  const bool ring = pipe && (producer || uses_ring(L, *pipe));
  if (ring && !producer) L.ring_plans[&op] = std::make_shared<const PipelinePlan>(*pipe);
  const std::vector<TmaOperand>* tma = ring ? L.tma_plan(op) : nullptr;
  if (ring && producer && !tma) check_producer_copies(L, op, *pipe);
  const int nc = loop.num_carried();
  std::vector<bool> keep(nc);
  std::vector<const Layout*> lay(nc, nullptr);
  std::vector<Regs> init(nc);
  for (int i = 0; i < nc; ++i) {
    const ir::Value* c = loop.carried(i);
    keep[i] = L.producer_keeps(c);
    if (!keep[i]) continue;
    if (c->type.is_scalar()) {
      init[i] = {L.scalar(loop.init(i))};
    } else {
      lay[i] = &L.layouts.of(c);
      init[i] = L.tile(loop.init(i), *lay[i]);
    }
  }

  // Pipelining: the prologue's copies, before the loop.
  Lowerer::SmemBuffer pipe_buf;
  const Lowerer::Ring* rg = nullptr;
  std::vector<Regs> steps, ahead;  // per operand: the pointer step, the pointers of trip i + ahead
  auto advance = [&](const std::vector<Regs>& ptrs, const std::vector<Regs>& by) {
    std::vector<Regs> out(ptrs.size());
    for (size_t o = 0; o < ptrs.size(); ++o) {
      llvm::Type* et = L.mem_type(pipe->operands[o].load->results[0]->type.dtype);
      for (size_t r = 0; r < ptrs[o].size(); ++r) out[o].push_back(b.CreateGEP(et, ptrs[o][r], by[o].at(r)));
    }
    return out;
  };
  auto step_regs = [&](const PipelinedOperand& po) {
    const Layout& lc = *lay[po.carried];
    if (po.step->type.is_scalar())
      return Regs(static_cast<size_t>(num_regs(lc, loop.carried(po.carried)->type.shape)), L.scalar(po.step));
    return L.tile(po.step, lc);
  };
  auto stage_base = [&](llvm::Value* slot) {
    return b.CreateGEP(b.getInt8Ty(), pipe_buf.base, b.CreateMul(slot, L.i32(pipe->stage_bytes)));
  };
  // Programs sharing a CTA share one ring of all their stages (program_groups.cpp).
  const bool shared = ring && L.shared_ring();
  if (ring) {
    const int stages = pipe->stages * (shared ? L.opts.programs_per_cta : 1);
    rg = &L.ring_of(op, stages, pipe->stage_bytes, pipe->stage_align);
    pipe_buf = rg->buf;
    pipe_buf.base = L.ring_base(*rg);
  } else if (pipe) {
    const int S = pipe->stages;
    pipe_buf = L.smem_pinned(S * pipe->stage_bytes, pipe->stage_align);
    TESSEL_ASSERT(pipe->ahead >= 1 && pipe->ahead < S, "copies run 1 .. S - 1 trips ahead");
    // The steps are invariant; compute them once here (the body computes its own copy).
    L.with_rebound({}, pipe->step_ops, [&] {
      for (const PipelinedOperand& po : pipe->operands) steps.push_back(step_regs(po));
    });
    for (const PipelinedOperand& po : pipe->operands) ahead.push_back(init[po.carried]);
    for (int j = 0; j < pipe->ahead; ++j) {
      auto [iv_j, runs] = trip_ahead(L, lo, step, j, hi);
      issue_stage(L, op, *pipe, stage_base(L.i32(j)), iv_j, runs, ahead);
      ahead = advance(ahead, steps);
    }
  }

  // Programs sharing a CTA take turns at wgmma K loops, the prologue copies already issued.
  const bool turns = !shared && pipe && !producer && L.opts.programs_per_cta > 1 && mma_plan_of(L, *pipe->dot)->wgmma;
  if (turns) L.mainloop_acquire();
  if (shared) L.ring_acquire(op, *rg);

  llvm::Function* fn = L.function();
  llvm::BasicBlock* pre = b.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(L.ctx, "loop.header", fn);
  auto* body = llvm::BasicBlock::Create(L.ctx, "loop.body", fn);
  auto* exit = llvm::BasicBlock::Create(L.ctx, "loop.exit", fn);
  b.CreateBr(header);

  b.SetInsertPoint(header);
  llvm::PHINode* iv = b.CreatePHI(ivt, 2, "iv");
  iv->addIncoming(lo, pre);
  std::vector<std::vector<llvm::PHINode*>> phis(nc);
  for (int i = 0; i < nc; ++i)
    for (llvm::Value* v : init[i]) {
      llvm::PHINode* p = b.CreatePHI(v->getType(), 2);
      p->addIncoming(v, pre);
      phis[i].push_back(p);
    }
  std::vector<std::vector<llvm::PHINode*>> ahead_phis;
  llvm::PHINode* read_slot = nullptr;
  if (pipe && !ring) {
    for (const Regs& r : ahead) {
      ahead_phis.emplace_back();
      for (llvm::Value* v : r) {
        llvm::PHINode* p = b.CreatePHI(v->getType(), 2, "ahead");
        p->addIncoming(v, pre);
        ahead_phis.back().push_back(p);
      }
    }
    read_slot = b.CreatePHI(b.getInt32Ty(), 2, "stage");
    read_slot->addIncoming(L.i32(0), pre);
  }
  b.CreateCondBr(b.CreateICmpSLT(iv, hi), body, exit);

  b.SetInsertPoint(body);
  L.smem_loop_begin();
  PipelineState state;
  if (ring) {
    // Trip n of this ring (counted across runs of the loop): stage n mod S, phase n / S.
    const int S = rg->stages;
    llvm::Value* counter = L.ring_counter(op);
    llvm::Value* n = b.CreateLoad(b.getInt32Ty(), counter);
    b.CreateStore(b.CreateAdd(n, L.i32(1)), counter);
    llvm::Value* slot = b.CreateURem(n, L.i32(S));
    llvm::Value* parity = b.CreateAnd(b.CreateUDiv(n, L.i32(S)), L.i32(1));
    if (producer && tma) {
      // The program's producer warps wait until the consumers released the stage; one lane
      // of each announces its boxes' bytes on full[slot] and issues them (the warp index
      // comes through a shuffle: warp-uniform, so the branch on it is too); the stage
      // completes when every box has landed.
      mbarrier_wait(L, L.ring_empty(*rg, slot), b.CreateXor(parity, L.i32(1)));
      llvm::Value* warp = L.intrinsic(llvm::Intrinsic::nvvm_shfl_sync_idx_i32, {},
                                      {L.i32(-1), b.CreateLShr(L.tid(), L.i32(5)), L.i32(0), L.i32(31)});
      issue_stage_tma(L, *pipe, *tma, stage_base(slot), L.ring_full(*rg, slot), iv, warp);
    } else if (producer) {
      // Wait until the consumers released the stage (the first S trips pass at once), copy
      // this trip's operands into it, and let each thread's copies arrive on full[slot].
      mbarrier_wait(L, L.ring_empty(*rg, slot), b.CreateXor(parity, L.i32(1)));
      std::vector<Regs> ptrs;
      for (const PipelinedOperand& po : pipe->operands)
        ptrs.emplace_back(phis[po.carried].begin(), phis[po.carried].end());
      issue_stage(L, op, *pipe, stage_base(slot), iv, b.CreateICmpSLT(iv, hi), ptrs, /*commit=*/false);
      copies_arrive(L, L.ring_full(*rg, slot));
    } else {
      state.ring = true;
      state.base = pipe_buf.base;
      state.read_slot = slot;
      state.stages = S;
      state.stage_bytes = pipe->stage_bytes;
      state.wgmma_in_flight = pipe->wgmma_in_flight >= 0;
      // cp.async writes through the generic proxy, which wgmma's reads must be fenced
      // against; TMA writes through the async proxy itself.
      state.wait_ready = [&L, rg, slot, parity, tma] {
        mbarrier_wait(L, L.ring_full(*rg, slot), parity);
        if (!tma) fence_proxy_async(L);
      };
      // In flight: this trip's wait retired the previous trip's group, whose stage is free.
      state.release = [&L, &b, rg, slot, iv, lo, S, in_flight = state.wgmma_in_flight] {
        if (!in_flight) return mbarrier_arrive_warp(L, L.ring_empty(*rg, slot));
        llvm::Value* prev = b.CreateSelect(b.CreateICmpEQ(slot, L.i32(0)), L.i32(S - 1), b.CreateSub(slot, L.i32(1)));
        L.if_then(b.CreateICmpNE(iv, lo), [&] { mbarrier_arrive_warp(L, L.ring_empty(*rg, prev)); });
      };
      L.pipelined_dots[pipe->dot] = &state;
    }
  } else if (pipe) {
    const int S = pipe->stages;
    state.base = pipe_buf.base;
    state.read_slot = read_slot;
    state.stages = S;
    state.stage_bytes = pipe->stage_bytes;
    state.wgmma_in_flight = pipe->wgmma_in_flight >= 0;
    state.ahead = pipe->ahead;
    state.issue_next = [&, S] {
      std::vector<Regs> ptrs;
      for (const auto& ps : ahead_phis) ptrs.emplace_back(ps.begin(), ps.end());
      // (i + ahead) mod S, read_slot = i mod S
      const int A = pipe->ahead;
      llvm::Value* sum = b.CreateAdd(read_slot, L.i32(A));
      llvm::Value* slot = b.CreateSelect(b.CreateICmpSGE(sum, L.i32(S)), b.CreateSub(sum, L.i32(S)), sum);
      auto [iv_ahead, runs] = trip_ahead(L, iv, step, A, hi);
      issue_stage(L, op, *pipe, stage_base(slot), iv_ahead, runs, ptrs);
    };
    L.pipelined_dots[pipe->dot] = &state;
  }
  L.bind(loop.induction_var(), {iv});
  for (int i = 0; i < nc; ++i)
    if (keep[i]) L.bind(loop.carried(i), Regs(phis[i].begin(), phis[i].end()));
  L.push_scope();
  L.lower_block(loop.body());
  const ir::Op& yield = loop.yield();
  TESSEL_ASSERT(yield.kind == ir::OpKind::Yield && yield.num_operands() == nc,
                "loop body must end with a yield of every carried value");
  std::vector<Regs> next(nc);
  for (int i = 0; i < nc; ++i)
    if (keep[i]) next[i] = lay[i] ? L.tile(yield.operand(i), *lay[i]) : Regs{L.scalar(yield.operand(i))};
  std::vector<Regs> ahead_next;
  llvm::Value* slot_next = nullptr;
  if (ring) {
    L.pipelined_dots.erase(pipe->dot);
  } else if (pipe) {
    L.pipelined_dots.erase(pipe->dot);
    std::vector<Regs> ptrs, body_steps;
    for (const auto& ps : ahead_phis) ptrs.emplace_back(ps.begin(), ps.end());
    for (const PipelinedOperand& po : pipe->operands) body_steps.push_back(step_regs(po));
    ahead_next = advance(ptrs, body_steps);
    llvm::Value* inc = b.CreateAdd(read_slot, L.i32(1));
    slot_next = b.CreateSelect(b.CreateICmpEQ(inc, L.i32(pipe->stages)), L.i32(0), inc);
  }
  L.smem_loop_latch();
  // iv + step past the type's range ends the loop, as the interpreter's wider iv does: an
  // iv that wrapped around would stay below hi and loop forever (range(n, INT32_MAX, 16)).
  llvm::Value* sum = L.intrinsic(llvm::Intrinsic::sadd_with_overflow, {ivt}, {iv, step});
  llvm::Value* iv_next = b.CreateSelect(b.CreateExtractValue(sum, 1), hi, b.CreateExtractValue(sum, 0), "iv.next");
  llvm::BasicBlock* latch = b.GetInsertBlock();
  iv->addIncoming(iv_next, latch);
  for (int i = 0; i < nc; ++i)
    for (size_t k = 0; k < phis[i].size(); ++k) phis[i][k]->addIncoming(next[i].at(k), latch);
  if (pipe && !ring) {
    for (size_t o = 0; o < ahead_phis.size(); ++o)
      for (size_t k = 0; k < ahead_phis[o].size(); ++k) ahead_phis[o][k]->addIncoming(ahead_next[o].at(k), latch);
    read_slot->addIncoming(slot_next, latch);
  }
  b.CreateBr(header);
  L.pop_scope();

  b.SetInsertPoint(exit);
  L.smem_loop_exit();
  if (pipe && !ring) {
    // The copies of trips past the end (zero-filled) may still be landing in the buffers.
    L.intrinsic(llvm::Intrinsic::nvvm_cp_async_wait_group, {}, {L.i32(0)});
    L.smem_unpin(pipe_buf);
  }
  // The turn passes on as soon as the last trip's group is issued, before this program waits
  // for it: the next program's first group queues behind it at the tensor cores instead of
  // starting after they drained (CUTLASS's ping-pong orders its warpgroups the same way).
  if (turns) L.mainloop_release();
  if (shared) L.ring_release(op, *rg);
  for (int i = 0; i < nc; ++i) {
    if (!keep[i]) continue;
    Regs out(phis[i].begin(), phis[i].end());
    if (pipe && i == pipe->wgmma_in_flight) out = wgmma_wait_all(L, out);  // the last trip's group
    L.bind(op.results[i], out);
  }
  if (ring && !producer && pipe->wgmma_in_flight >= 0) {
    // The last trip's group is done: release its stage (when the loop ran at all).
    L.if_then(b.CreateICmpSLT(lo, hi), [&] {
      llvm::Value* n = b.CreateLoad(b.getInt32Ty(), L.ring_counter(op));
      mbarrier_arrive_warp(L, L.ring_empty(*rg, b.CreateURem(b.CreateSub(n, L.i32(1)), L.i32(rg->stages))));
    });
  }
}

}  // namespace tessel::lowering
