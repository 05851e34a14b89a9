// for loops: an LLVM loop with one phi per carried register and a scalar induction variable.
//
//   pre:    br header
//   header: iv = phi [lo, pre], [iv + step, latch]; carried phis; br (iv < hi), body, exit
//   body:   ...; yield -> phi incomings; br header
//   exit:   results = the header's phis
// The bounds are uniform scalars, so every thread runs the same trips (barriers inside the
// body, from layout conversions, are safe).
#include "tessel/ir/accessors.hpp"
#include "lowerer.hpp"

namespace tessel::lowering {

void lower_for(Lowerer& L, const ir::Op& op) {
  ir::ForOp loop{op};
  auto& b = L.b;
  llvm::Value* lo = L.scalar(loop.lo());
  llvm::Type* ivt = lo->getType();
  llvm::Value* hi = b.CreateSExtOrTrunc(L.scalar(loop.hi()), ivt);
  llvm::Value* step = b.CreateSExtOrTrunc(L.scalar(loop.step()), ivt);

  const int nc = loop.num_carried();
  std::vector<const Layout*> lay(nc, nullptr);
  std::vector<Regs> init(nc);
  for (int i = 0; i < nc; ++i) {
    const ir::Value* c = loop.carried(i);
    if (c->type.is_scalar()) {
      init[i] = {L.scalar(loop.init(i))};
    } else {
      lay[i] = &L.layouts.of(c);
      init[i] = L.tile(loop.init(i), *lay[i]);
    }
  }

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
  b.CreateCondBr(b.CreateICmpSLT(iv, hi), body, exit);

  b.SetInsertPoint(body);
  L.smem_loop_begin();
  L.bind(loop.induction_var(), {iv});
  for (int i = 0; i < nc; ++i) L.bind(loop.carried(i), Regs(phis[i].begin(), phis[i].end()));
  L.push_scope();
  L.lower_block(loop.body());
  const ir::Op& yield = loop.yield();
  TESSEL_ASSERT(yield.kind == ir::OpKind::Yield && yield.num_operands() == nc,
                "loop body must end with a yield of every carried value");
  std::vector<Regs> next(nc);
  for (int i = 0; i < nc; ++i)
    next[i] = lay[i] ? L.tile(yield.operand(i), *lay[i]) : Regs{L.scalar(yield.operand(i))};
  L.smem_loop_latch();
  llvm::Value* iv_next = b.CreateAdd(iv, step, "iv.next");
  llvm::BasicBlock* latch = b.GetInsertBlock();
  iv->addIncoming(iv_next, latch);
  for (int i = 0; i < nc; ++i)
    for (size_t k = 0; k < phis[i].size(); ++k) phis[i][k]->addIncoming(next[i].at(k), latch);
  b.CreateBr(header);
  L.pop_scope();

  b.SetInsertPoint(exit);
  L.smem_loop_exit();
  for (int i = 0; i < nc; ++i) L.bind(op.results[i], Regs(phis[i].begin(), phis[i].end()));
}

}  // namespace tessel::lowering
