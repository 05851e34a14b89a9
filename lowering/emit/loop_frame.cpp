// LoopFrame (loop_frame.hpp): what every loop's emission shares.
#include "loop_frame.hpp"

#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/MDBuilder.h>

#include "pipeline.hpp"

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
// follows in case the call returns. Where the plan says so (KernelPlan::checks_trap: a kernel
// that issues wgmma) the trap comes alone and the launch fails with CUDA_ERROR_LAUNCH_FAILED;
// the host names the check from the kernel's IR either way (jit/src/device/device_checks.hpp).
// The branch is marked unlikely: the check costs a compare.
void device_assert(Lowerer& L, llvm::Value* fail, const std::string& message, SrcLoc loc) {
  if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(fail); c && c->isZero()) return;
  auto& b = L.b;
  llvm::Function* fn = L.function();
  auto* fail_bb = llvm::BasicBlock::Create(L.ctx, "assert.fail", fn);
  auto* cont = llvm::BasicBlock::Create(L.ctx, "assert.ok", fn);
  b.CreateCondBr(fail, fail_bb, cont, llvm::MDBuilder(L.ctx).createBranchWeights(1, 1u << 20));
  b.SetInsertPoint(fail_bb);
  if (!L.plan.checks_trap) {
    llvm::Type* ptr = b.getPtrTy();
    llvm::FunctionCallee assertfail = L.module().getOrInsertFunction(
        "__assertfail",
        llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, b.getInt32Ty(), ptr, b.getInt64Ty()}, false));
    const std::string file = loc.known() && loc.file ? loc.file : "<unknown>";
    b.CreateCall(assertfail, {global_string(L, message, "assert_message"), global_string(L, file, "assert_file"),
                              b.getInt32(loc.line), global_string(L, L.irf.name, "assert_function"), b.getInt64(1)});
  }
  L.intrinsic(llvm::Intrinsic::trap, {}, {});
  b.CreateUnreachable();
  b.SetInsertPoint(cont);
}

}  // namespace

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


LoopFrame::LoopFrame(Lowerer& l, const ir::Op& o) : L(l), op(o), loop(o), nc(loop.num_carried()) {
  auto& b = L.b;
  lo = L.scalar(loop.lo());
  ivt = lo->getType();
  hi = b.CreateSExtOrTrunc(L.scalar(loop.hi()), ivt);
  step = b.CreateSExtOrTrunc(L.scalar(loop.step()), ivt);
  // Before anything of the loop runs (the pipelined prologue included): the interpreter's
  // "loop step is 0 ...; it must be positive", whether or not the loop would run a trip.
  device_assert(L, b.CreateICmpSLE(step, llvm::ConstantInt::get(ivt, 0)),
                "range(): the loop step must be positive", op.loc);
  keep.resize(nc);
  lay.assign(nc, nullptr);
  derive_.resize(nc);
  init.resize(nc);
  for (int i = 0; i < nc; ++i) {
    const ir::Value* c = loop.carried(i);
    keep[i] = L.producer_keeps(c);
    if (!keep[i]) continue;
    if (c->type.is_scalar()) {
      init[i] = {L.scalar(loop.init(i))};
    } else {
      lay[i] = &L.layouts().of(c);
      init[i] = L.tile(loop.init(i), *lay[i]);
    }
  }
}

void LoopFrame::carry_first(int i, std::function<Regs(llvm::Value*)> derive) {
  TESSEL_ASSERT(keep[i] && lay[i], "carry_first: a tile this role keeps");
  derive_[i] = std::move(derive);
}

bool LoopFrame::packed(int i) const {
  if (derive_[i]) return false;
  if (!keep[i] || !lay[i] || init[i].empty() || init[i].size() % 2 != 0) return false;
  llvm::Type* t = init[i].front()->getType();
  return t->isHalfTy() || t->isBFloatTy();
}

Regs LoopFrame::unpack(int i, const Regs& r) {
  if (!packed(i)) return r;
  Regs out;
  for (llvm::Value* p : r) {
    out.push_back(L.b.CreateExtractElement(p, uint64_t{0}));
    out.push_back(L.b.CreateExtractElement(p, uint64_t{1}));
  }
  return out;
}

Regs LoopFrame::pack(const Regs& r) {
  auto& b = L.b;
  Regs out;
  auto* vt = llvm::FixedVectorType::get(r.front()->getType(), 2);
  for (size_t k = 0; k + 1 < r.size(); k += 2) {
    llvm::Value* v = b.CreateInsertElement(llvm::PoisonValue::get(vt), r[k], uint64_t{0});
    out.push_back(b.CreateInsertElement(v, r[k + 1], uint64_t{1}));
  }
  return out;
}

void LoopFrame::open(const std::function<void()>& extra_phis) {
  auto& b = L.b;
  llvm::Function* fn = L.function();
  pre = b.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(L.ctx, "loop.header", fn);
  auto* body = llvm::BasicBlock::Create(L.ctx, "loop.body", fn);
  exit = llvm::BasicBlock::Create(L.ctx, "loop.exit", fn);
  std::vector<Regs> entry(nc);
  for (int i = 0; i < nc; ++i) entry[i] = derive_[i] ? Regs{init[i].at(0)} : packed(i) ? pack(init[i]) : init[i];
  if (leave_waiting_ >= 0) {
    // Tested once on entry (the loop is entered only to run a trip); the latch tests the rest.
    entry_ = entry;
    b.CreateCondBr(b.CreateICmpSLT(lo, hi), header, exit);
  } else {
    b.CreateBr(header);
  }

  b.SetInsertPoint(header);
  iv = b.CreatePHI(ivt, 2, "iv");
  iv->addIncoming(lo, pre);
  phis.assign(nc, {});
  for (int i = 0; i < nc; ++i)
    for (llvm::Value* v : entry[i]) {
      llvm::PHINode* p = b.CreatePHI(v->getType(), 2);
      p->addIncoming(v, pre);
      phis[i].push_back(p);
    }
  if (extra_phis) extra_phis();
  vals.assign(nc, {});
  for (int i = 0; i < nc; ++i) vals[i] = unpack(i, Regs(phis[i].begin(), phis[i].end()));
  if (leave_waiting_ >= 0) b.CreateBr(body);
  else b.CreateCondBr(b.CreateICmpSLT(iv, hi), body, exit);

  b.SetInsertPoint(body);
  for (int i = 0; i < nc; ++i)
    if (derive_[i]) vals[i] = derive_[i](phis[i].at(0));
  L.smem_loop_begin();
}

void LoopFrame::lower_body(const PipelineState* pipe) {
  L.bind(loop.induction_var(), {iv});
  for (int i = 0; i < nc; ++i)
    if (keep[i]) L.bind(loop.carried(i), vals[i]);
  L.push_scope();
  L.lower_block(loop.body(), pipe);
  const ir::Op& yield = loop.yield();
  TESSEL_ASSERT(yield.kind == ir::OpKind::Yield && yield.num_operands() == nc,
                "loop body must end with a yield of every carried value");
  next_.assign(nc, {});
  for (int i = 0; i < nc; ++i)
    if (keep[i]) next_[i] = lay[i] ? L.tile(yield.operand(i), *lay[i]) : Regs{L.scalar(yield.operand(i))};
}

void LoopFrame::close(const std::function<void(llvm::BasicBlock*)>& extra_incomings) {
  auto& b = L.b;
  L.smem_loop_latch();
  // iv + step past the type's range ends the loop, as the interpreter's wider iv does: an
  // iv that wrapped around would stay below hi and loop forever (range(n, INT32_MAX, 16)).
  llvm::Value* sum = L.intrinsic(llvm::Intrinsic::sadd_with_overflow, {ivt}, {iv, step});
  llvm::Value* iv_next = b.CreateSelect(b.CreateExtractValue(sum, 1), hi, b.CreateExtractValue(sum, 0), "iv.next");
  llvm::BasicBlock* latch = b.GetInsertBlock();
  iv->addIncoming(iv_next, latch);
  for (int i = 0; i < nc; ++i) {
    const Regs next = packed(i) ? pack(next_[i]) : next_[i];
    for (size_t k = 0; k < phis[i].size(); ++k) phis[i][k]->addIncoming(next.at(k), latch);
  }
  if (extra_incomings) extra_incomings(latch);
  if (leave_waiting_ < 0) {
    b.CreateBr(iv->getParent());
  } else {
    // After the last trip the loop leaves from here, through the wait for that trip's wgmma
    // group; the test before the loop skips it when no trip runs (open). A wait on the
    // header's way out would also be reached from the path that runs no trip, where (LLVM
    // rotates the loop) copies of the initial values land in the accumulator registers, and
    // ptxas, finding non-wgmma definitions of them inside the group's pipeline stage,
    // serialises every wgmma of the kernel (advisory C7515); a header test left in the loop
    // would let a read of the accumulators skip the wait.
    last_trip_ = llvm::BasicBlock::Create(L.ctx, "loop.last.trip", L.function());
    b.CreateCondBr(b.CreateICmpSLT(iv_next, hi), iv->getParent(), last_trip_);
    b.SetInsertPoint(last_trip_);
    last_vals_.assign(nc, {});
    for (int i = 0; i < nc; ++i) {
      if (!keep[i]) continue;
      Regs next = i == leave_waiting_ ? wgmma_wait_all(L, next_[i]) : packed(i) ? pack(next_[i]) : next_[i];
      last_vals_[i].assign(next.begin(), next.begin() + static_cast<std::ptrdiff_t>(phis[i].size()));
    }
    last_trip_ = b.GetInsertBlock();
    b.CreateBr(exit);
  }
  L.pop_scope();

  b.SetInsertPoint(exit);
  if (last_trip_) {
    // Two ways out: before the loop (no trip runs: the initial values) and after the last trip.
    // Results nothing reads are not merged (their registers would stay live across the loop).
    for (int i = 0; i < nc; ++i) {
      if (!keep[i]) continue;
      if (L.plan.use_count(op.results[i]) == 0) {
        for (llvm::Value*& v : last_vals_[i]) v = llvm::PoisonValue::get(v->getType());
        continue;
      }
      for (size_t k = 0; k < phis[i].size(); ++k) {
        llvm::PHINode* p = b.CreatePHI(phis[i][k]->getType(), 2);
        p->addIncoming(entry_[i][k], pre);
        p->addIncoming(last_vals_[i][k], last_trip_);
        last_vals_[i][k] = p;  // from here on: the merged values
      }
    }
  }
  L.smem_loop_exit();
}

void LoopFrame::leave_through_wait(int in_flight) {
  // Only for a carried value held whole (not packed, not derived) and when no wgmma group
  // deferred before the loop is pending (its wait, emitted in the body, must also be on the
  // path that runs no trip: bind_results' wait after the loop covers it).
  if (in_flight < 0 || !keep[in_flight] || derive_[in_flight] || packed(in_flight) || L.wgmma_deferred()) return;
  leave_waiting_ = in_flight;
}

void LoopFrame::bind_results(int in_flight) {
  if (last_trip_) {
    // The values merged at the exit (close): the initial ones or the last trip's, waited for.
    TESSEL_ASSERT(in_flight == leave_waiting_, "bind_results: another in-flight value than leave_through_wait's");
    for (int i = 0; i < nc; ++i) {
      if (!keep[i]) continue;
      L.bind(op.results[i], derive_[i] ? derive_[i](last_vals_[i].at(0)) : unpack(i, last_vals_[i]));
    }
    return;
  }
  for (int i = 0; i < nc; ++i) {
    if (!keep[i]) continue;
    Regs out = derive_[i] ? derive_[i](phis[i].at(0)) : vals[i];
    if (i == in_flight) out = wgmma_wait_all(L, out);  // the last trip's group
    L.bind(op.results[i], out);
  }
}

}  // namespace tessel::lowering
