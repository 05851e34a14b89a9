// A software-pipelined K loop (LoopSchedule::Pipelined, plan/pipeline_plan.hpp), Triton's scheme:
// the pre-header issues trips 0 .. S-2 into stage buffers 0 .. S-2 (one cp.async group each;
// trips past the end copy nothing and zero-fill); trip i waits until at most S - 2 groups are
// pending, passes a barrier, computes from buffer i mod S, then issues trip i + S - 1 into buffer
// (i - 1) mod S, the one every warp finished reading before that barrier. Extra phis carry the
// pointer tiles of trip i + S - 1 and the buffer index; the exit waits for every group (the
// trailing ones copy nothing). Operands computed before the loop are staged once, before the
// first trip, into a resident buffer the loop keeps. With several dots the first waits for the
// trip's group and issues the next; the others read the same stage. A single wgmma dot may keep
// its group in flight into the next trip (PipelinePlan::wgmma_in_flight): trip i then issues
// its copies after waiting for trip i - 1's group (several warpgroups: and after a barrier past
// every warpgroup's wait). With several programs per CTA a wgmma K loop runs in its program's
// turn (program_groups.cpp).
//
// The copies count trips exactly as the interpreter does (trip_ahead), so none is issued for a
// trip past hi or past an overflow of iv + step.
//
// With PipelinePlan::mbarriers the stages are signalled instead of barrier-synchronised: use n
// of the loop's stages (counted across its runs, Lowerer::ring_counter) is stage n mod S in
// phase n / S. Issuing use n waits on empty[s] for use n - S's release, copies, and has each
// thread's copies arrive on full[s]; the trip's first dot waits on full[s] and issues use
// n + ahead (S - 2 from 3 stages: into the stage of two trips back, so a warp waits only for
// every warp to be done with that trip); the trip's end releases its stage (one arrival per
// warp, its wgmma groups done).
// Uses issued for trips past the end (zero-filled) are consumed and released at the exit, so
// the next run starts at a whole phase.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <fmt/format.h>
#include <llvm/IR/InlineAsm.h>

#include <optional>

#include "demand_order.hpp"
#include "loop_frame.hpp"
#include "pipeline.hpp"
#include "tma_copies.hpp"

namespace tessel::lowering {

// Each resident operand (computed before the loop) staged into a buffer of its own (`own`), or,
// when an earlier loop of this block staged and kept it, read there; their bases in plan order.
// One barrier after the staging (a proxy fence first for wgmma).
std::vector<llvm::Value*> stage_residents(Lowerer& L, const PipelinePlan& p, std::vector<Lowerer::SmemBuffer>& own) {
  std::vector<llvm::Value*> resident;
  bool staged = false, wgmma = false;
  for (size_t i = 0; i < p.resident.size(); ++i) {
    const ResidentOperand& r = p.resident[i];
    if (r.reused) {
      auto kept = L.kept_residents.find(r.value());
      TESSEL_ASSERT(kept != L.kept_residents.end(), "a reused resident operand was staged by an earlier loop");
      resident.push_back(kept->second.base);
      continue;
    }
    const MmaPlan& mma = *L.plan.mma(*r.dot);
    own[i] = L.smem_pinned(r.tile.bytes(), p.stage_align);
    stage_resident(L, *r.dot, mma, r.operand, own[i].base);
    resident.push_back(own[i].base);
    wgmma |= mma.wgmma;
    staged = true;
  }
  if (staged) {
    if (wgmma) fence_proxy_async(L);
    L.barrier();
  }
  return resident;
}

// After the loop: resident buffers no later loop reads are released; a kept one is handed on by
// value (at most one per value: share_residents pairs each with the next loop's only).
void release_residents(Lowerer& L, const PipelinePlan& p, const std::vector<Lowerer::SmemBuffer>& own) {
  for (size_t i = 0; i < p.resident.size(); ++i) {
    const ResidentOperand& r = p.resident[i];
    if (r.kept) continue;
    if (!r.reused) {
      L.smem_unpin(own[i]);
      continue;
    }
    auto it = L.kept_residents.find(r.value());
    L.smem_unpin(it->second);
    L.kept_residents.erase(it);
  }
  for (size_t i = 0; i < p.resident.size(); ++i)
    if (p.resident[i].kept && !p.resident[i].reused) L.kept_residents[p.resident[i].value()] = own[i];
}

// A compact operand's pointers (PipelinedOperand::strides) from its first register's `ptr0`:
// register r lies sum_d (c_d(r) - c_d(0)) * strides[d] elements further. Constant strides fold
// into one offset; each runtime stride is one mad.wide.s32 on the 64-bit address, whose
// dependence on ptr0 keeps it in the trip (a product computed apart would be hoisted out of
// the loop and held, a 64-bit register per copy again). `stride` holds the runtime strides
// (i32 elements, null for constant ones).
Regs expand_pointers(Lowerer& L, const PipelinedOperand& po, const Layout& l, const ir::Shape& shape,
                     const std::vector<llvm::Value*>& stride, llvm::Value* ptr0, bool sink) {
  auto& b = L.b;
  const int rank = static_cast<int>(shape.size());
  const int64_t eb = std::max(1, ir::bit_width(po.load->results[0]->type.dtype.scalar) / 8);
  const std::vector<int64_t> first = reg_dims(l, shape, 0);
  auto* fty = llvm::FunctionType::get(b.getInt64Ty(), {b.getInt32Ty(), b.getInt64Ty()}, false);
  Regs out;
  for (int64_t r = 0; r < num_regs(l, shape); ++r) {
    const std::vector<int64_t> dims = reg_dims(l, shape, r);
    int64_t bytes = 0;
    llvm::Value* addr = nullptr;
    for (int d = 0; d < rank; ++d) {
      const int64_t c = reg_offset(l, shape, d, dims[d]) - reg_offset(l, shape, d, first[d]);
      if (c == 0) continue;
      if (!stride[d]) {
        bytes += c * (po.strides[d].empty() ? 0 : po.strides[d].begin()->second) * eb;
        continue;
      }
      if (!addr) addr = b.CreatePtrToInt(ptr0, b.getInt64Ty());
      const std::string text = fmt::format("mad.wide.s32 $0, $1, {}, $2;", c * eb);
      auto* mad = b.CreateCall(llvm::InlineAsm::get(fty, text, "=l,r,l", false), {stride[d], addr});
      // Touches no memory; unused ones (the carried tile's other registers, which only the
      // yield reads) are dropped by instruction selection. (Also marking it nounwind and
      // willreturn lets LLVM delete them earlier, which reorders the loop and moves ptxas's
      // register counts by -12..+7 at the matmul tiles: not yet measured on a GPU.)
      mad->setDoesNotAccessMemory();
      // RingPlan::lean_copies: each address is computed just before its copy (demand_order.cpp).
      if (sink) mad->setMetadata(kSinkToUse, llvm::MDNode::get(L.ctx, {}));
      addr = mad;
    }
    llvm::Value* p = addr ? b.CreateIntToPtr(addr, ptr0->getType()) : ptr0;
    out.push_back(bytes ? b.CreateConstGEP1_64(b.getInt8Ty(), p, bytes) : p);
  }
  return out;
}

// Each compact operand's runtime strides (i32 elements, null for constant ones), computed once
// before the loop; empty for the other operands.
std::vector<std::vector<llvm::Value*>> runtime_strides(Lowerer& L, const PipelinePlan& p) {
  std::vector<std::vector<llvm::Value*>> strides(p.operands.size());
  for (size_t o = 0; o < p.operands.size(); ++o)
    for (const Poly& s : p.operands[o].strides) {
      const bool constant = s.empty() || (s.size() == 1 && s.begin()->first.atoms.empty());
      strides[o].push_back(constant ? nullptr : emit_poly(L, s, nullptr, nullptr));
    }
  return strides;
}

namespace {

// Per operand: its pointers advanced by their step (in the carried layout). (from_iv() operands
// carry no pointers: issue_stage computes them from the trip's iv.)
std::vector<Regs> advanced(Lowerer& L, const PipelinePlan& p, const std::vector<Regs>& ptrs,
                           const std::vector<Regs>& by) {
  std::vector<Regs> out(ptrs.size());
  for (size_t o = 0; o < ptrs.size(); ++o) {
    llvm::Type* et = L.mem_type(p.operands[o].load->results[0]->type.dtype);
    for (size_t r = 0; r < ptrs[o].size(); ++r) out[o].push_back(L.b.CreateGEP(et, ptrs[o][r], by[o].at(r)));
  }
  return out;
}

// An operand's pointer step in the registers of its carried tile.
Regs step_registers(Lowerer& L, const LoopFrame& f, const PipelinedOperand& po) {
  if (po.from_iv()) return Regs{};
  const Layout& lc = *f.lay[po.carried];
  if (po.step->type.is_scalar())
    return Regs(static_cast<size_t>(num_regs(lc, f.loop.carried(po.carried)->type.shape)), L.scalar(po.step));
  return L.tile(po.step, lc);
}

// The mbarriers of a loop whose stages they signal (PipelinePlan::mbarriers), with this thread's
// count of the stages' uses across every run of the loop (Lowerer::ring_counter).
struct Signals {
  Lowerer& L;
  Lowerer::StageBarriers bars;  // a copy: Lowerer::stage_barriers_ may grow while the body is emitted
  llvm::Value* stages;          // the stage buffers
  int64_t stage_bytes;
  llvm::Value* counter;

  llvm::Value* slot(llvm::Value* n) const { return stage_of_use(L, n, bars.stages); }
  llvm::Value* parity(llvm::Value* n) const { return parity_of_use(L, n, bars.stages); }
  llvm::Value* count() const { return L.b.CreateLoad(L.b.getInt32Ty(), counter); }
  llvm::Value* take() const { return take_use(L, counter); }  // this trip's use, at its start
  // Issues use n: waits until use n - S was released (the first S pass at once), then `copy`
  // (the copies into the stage at its argument) and this thread's arrival on full[s] when they
  // land.
  void issue(llvm::Value* n, const std::function<void(llvm::Value*)>& copy) const {
    auto& b = L.b;
    llvm::Value* s = slot(n);
    mbarrier_wait(L, L.stage_empty(bars, s), b.CreateXor(parity(n), L.i32(1)));
    copy(b.CreateGEP(b.getInt8Ty(), stages, b.CreateMul(s, L.i32(stage_bytes))));
    copies_arrive(L, L.stage_full(bars, s));
  }
  // Waits until every thread's copies of use n have landed, for wgmma to read.
  void wait(llvm::Value* n) const {
    mbarrier_wait(L, L.stage_full(bars, slot(n)), parity(n));
    fence_proxy_async(L);
  }
  // This warp reads use n's stage no more (its lanes converged, its wgmma groups done).
  void release(llvm::Value* n) const { mbarrier_arrive_warp(L, L.stage_empty(bars, slot(n))); }
  // At the loop's exit: the `ahead` uses issued for trips past the end (zero-filled) are waited
  // for and released, so the next run starts at a whole phase.
  void drain(int ahead) const {
    llvm::Value* next = count();
    for (int j = 0; j < ahead; ++j) {
      llvm::Value* n = L.b.CreateAdd(next, L.i32(j));
      wait(n);
      release(n);
    }
    L.b.CreateStore(L.b.CreateAdd(next, L.i32(ahead)), counter);
  }
};

}  // namespace

const Lowerer::StageBarriers& Lowerer::stage_barriers(const ir::Op& loop) {
  for (const auto& [l, sb] : stage_barriers_)
    if (l == &loop) return sb;
  StageBarriers sb;
  const int S = plan.pipeline(loop)->stages;
  // Never unpinned, never touched: its phases are counted across the loop's runs.
  sb.buf = smem_pinned(16 * S, 16);
  sb.stages = S;
  stage_barriers_.emplace_back(&loop, sb);
  return stage_barriers_.back().second;
}

llvm::Value* Lowerer::stage_full(const StageBarriers& s, llvm::Value* slot) {
  return b.CreateGEP(b.getInt8Ty(), slot_base(s.buf.slot), b.CreateMul(slot, i32(8)));
}

llvm::Value* Lowerer::stage_empty(const StageBarriers& s, llvm::Value* slot) {
  return b.CreateGEP(b.getInt8Ty(), slot_base(s.buf.slot), b.CreateAdd(i32(8 * s.stages), b.CreateMul(slot, i32(8))));
}

// After the loop: the copies drained, its buffers released, its turns closed, the results bound.
static void end_loop(Lowerer& L, LoopFrame& f, const PipelinePlan& p, const Lowerer::SmemBuffer& buf,
                     const std::vector<Lowerer::SmemBuffer>& own, Signals* sig) {
  // The copies of trips past the end (zero-filled) may still be landing in the buffers.
  L.intrinsic(llvm::Intrinsic::nvvm_cp_async_wait_group, {}, {L.i32(0)});
  if (sig) sig->drain(p.ahead);
  L.smem_unpin(buf);
  release_residents(L, p, own);
  if (p.warpgroup_turns) L.turns_close();  // after the releases: its barrier frees their buffers
  // The turn passes on as soon as the last trip's group is issued, before this program waits
  // for it: the next program's first group queues behind it at the tensor cores instead of
  // starting after they drained (CUTLASS's ping-pong orders its warpgroups the same way).
  if (p.turns) L.mainloop_release();
  f.bind_results(p.wgmma_in_flight);
}

void lower_pipelined_loop(Lowerer& L, const ir::Op& op, const PipelinePlan& p) {
  auto& b = L.b;
  LoopFrame f(L, op);
  const int S = p.stages;
  const Lowerer::SmemBuffer buf = L.smem_pinned(S * p.stage_bytes, p.stage_align);
  TESSEL_ASSERT(p.ahead >= 1 && p.ahead < S, "copies run 1 .. S - 1 trips ahead");
  auto stage_base = [&](llvm::Value* k) {
    return b.CreateGEP(b.getInt8Ty(), buf.base, b.CreateMul(k, L.i32(p.stage_bytes)));
  };

  // The prologue's copies: trips 0 .. ahead - 1. The steps are invariant; computed once here
  // (the body computes its own copy).
  std::vector<Regs> steps, ahead;  // per operand: the pointer step, the pointers of trip i + ahead
  L.with_rebound({}, p.step_ops, [&] {
    for (const PipelinedOperand& po : p.operands) steps.push_back(step_registers(L, f, po));
  });
  for (const PipelinedOperand& po : p.operands) ahead.push_back(po.from_iv() ? Regs{} : f.init[po.carried]);
  std::optional<Signals> sig;
  if (p.mbarriers) sig.emplace(Signals{L, L.stage_barriers(op), buf.base, p.stage_bytes, L.ring_counter(op)});
  llvm::Value* first_use = sig ? sig->count() : nullptr;  // stage uses of earlier runs
  for (int j = 0; j < p.ahead; ++j) {
    auto [iv_j, runs] = trip_ahead(L, f.lo, f.step, j, f.hi);
    if (sig)
      sig->issue(b.CreateAdd(first_use, L.i32(j)),
                 [&](llvm::Value* at) { issue_stage(L, op, p, at, iv_j, runs, ahead, /*commit=*/false); });
    else
      issue_stage(L, op, p, stage_base(L.i32(j)), iv_j, runs, ahead);
    ahead = advanced(L, p, ahead, steps);
  }

  // Operands computed before the loop are staged once (into `own`), while the prologue's copies fly.
  std::vector<Lowerer::SmemBuffer> own(p.resident.size());
  const std::vector<llvm::Value*> resident = stage_residents(L, p, own);

  // Programs sharing a CTA take turns at wgmma K loops, the prologue copies already issued.
  if (p.turns) L.mainloop_acquire();

  // Compact operands carry their first register's pointer only (expand_pointers).
  const std::vector<std::vector<llvm::Value*>> strides = runtime_strides(L, p);
  for (size_t o = 0; o < p.operands.size(); ++o)
    if (p.operands[o].compact()) ahead[o].resize(1);
  auto pointers = [&](size_t o, const Regs& carried) {
    const PipelinedOperand& po = p.operands[o];
    if (!po.compact()) return carried;
    return expand_pointers(L, po, *f.lay[po.carried], f.loop.carried(po.carried)->type.shape, strides[o], carried[0]);
  };
  // The loop's own pointer tile too (its value after the loop may be read: attention's next loop).
  for (size_t o = 0; o < p.operands.size(); ++o)
    if (p.operands[o].compact())
      f.carry_first(p.operands[o].carried, [&, o](llvm::Value* p0) { return pointers(o, Regs{p0}); });

  std::vector<std::vector<llvm::PHINode*>> ahead_phis;
  llvm::PHINode* read_slot = nullptr;
  if (p.warpgroup_turns) L.turns_open(p.warpgroup_turns);
  if (p.exit_through_wait) f.leave_through_wait(p.wgmma_in_flight);
  f.open([&] {
    for (const Regs& r : ahead) {
      ahead_phis.emplace_back();
      for (llvm::Value* v : r) {
        llvm::PHINode* ph = b.CreatePHI(v->getType(), 2, "ahead");
        ph->addIncoming(v, f.pre);
        ahead_phis.back().push_back(ph);
      }
    }
    read_slot = b.CreatePHI(b.getInt32Ty(), 2, "stage");
    read_slot->addIncoming(L.i32(0), f.pre);
  });

  llvm::Value* use = sig ? sig->take() : nullptr;  // signalled stages: this trip's use of them
  PipelineState state;
  state.plan = &p;
  state.base = buf.base;
  state.resident = resident;
  state.read_slot = sig ? sig->slot(use) : read_slot;
  if (sig) state.wait_ready = [&sig, use] { sig->wait(use); };
  state.stages = S;
  state.stage_bytes = p.stage_bytes;
  state.wgmma_in_flight = p.wgmma_in_flight >= 0;
  state.ahead = p.ahead;
  state.issue_next = [&] {
    std::vector<Regs> ptrs;
    for (size_t o = 0; o < ahead_phis.size(); ++o)
      ptrs.push_back(pointers(o, Regs(ahead_phis[o].begin(), ahead_phis[o].end())));
    auto [iv_ahead, runs] = trip_ahead(L, f.iv, f.step, p.ahead, f.hi);
    if (sig) {
      sig->issue(b.CreateAdd(use, L.i32(p.ahead)),
                 [&](llvm::Value* at) { issue_stage(L, op, p, at, iv_ahead, runs, ptrs, /*commit=*/false); });
      return;
    }
    // (i + ahead) mod S, read_slot = i mod S
    llvm::Value* sum = b.CreateAdd(read_slot, L.i32(p.ahead));
    llvm::Value* slot = b.CreateSelect(b.CreateICmpSGE(sum, L.i32(S)), b.CreateSub(sum, L.i32(S)), sum);
    issue_stage(L, op, p, stage_base(slot), iv_ahead, runs, ptrs);
  };
  f.lower_body(&state);
  if (sig) sig->release(use);  // this warp's wgmma groups of the trip are done (lower_block settled them)

  // The next trip's copy pointers and buffer.
  std::vector<Regs> ptrs, body_steps;
  for (const auto& ps : ahead_phis) ptrs.emplace_back(ps.begin(), ps.end());
  for (const PipelinedOperand& po : p.operands) body_steps.push_back(step_registers(L, f, po));
  const std::vector<Regs> ahead_next = advanced(L, p, ptrs, body_steps);
  llvm::Value* inc = b.CreateAdd(read_slot, L.i32(1));
  llvm::Value* slot_next = b.CreateSelect(b.CreateICmpEQ(inc, L.i32(S)), L.i32(0), inc);
  f.close([&](llvm::BasicBlock* latch) {
    for (size_t o = 0; o < ahead_phis.size(); ++o)
      for (size_t k = 0; k < ahead_phis[o].size(); ++k) ahead_phis[o][k]->addIncoming(ahead_next[o].at(k), latch);
    read_slot->addIncoming(slot_next, latch);
  });
  end_loop(L, f, p, buf, own, sig ? &*sig : nullptr);
}

}  // namespace tessel::lowering
