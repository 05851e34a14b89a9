// dot: picks tensor cores (lower_dot_mma.cpp) or the FMA path, and lowers the FMA path.
//
// The FMA path computes in any result layout, so it is the fallback for everything mma.sync
// does not cover: allow_tf32 = 0 (exact fp32), s8 with K = 16 (m16n8k32 needs K >= 32), and
// results not in the mma accumulator layout. Both operands are staged in shared memory in the
// compute type (f32, or i32 for i8: no narrow shared loads), row-major; after one barrier each
// thread runs a K loop (an LLVM loop, so the code does not grow with K) that loads a[row][k]
// for each of its rows and b[k][col] for each of its columns and does one FMA per register:
// the outer product of its rows and columns. Products and sums are in f32 (i32 for i8), as
// in the interpreter; fma rounds once per step. fp8 operands (a target without fp8 mma) are
// converted to f32 as they are staged (cvt pairs on sm_89+, integer decoding before).
#include <fmt/format.h>

#include "lowerer.hpp"
#include "plan/mma_layout.hpp"

namespace tessel::lowering {
namespace {

// Stores every element of a tile (registers owned by this thread; copies in other threads
// write the same value) at (row * cols + col) of `base`, converted to the compute type.
void stage_row_major(Lowerer& L, llvm::Value* base, llvm::Type* ct, const ir::Value* v, const Regs& regs,
                     const Layout& l) {
  auto& b = L.b;
  const ir::Shape& s = v->type.shape;
  const ir::DType d = v->type.dtype;
  for (int64_t r = 0; r < static_cast<int64_t>(regs.size()); ++r) {
    if (!reg_is_owner(l, s, r)) continue;
    std::vector<int64_t> rd = reg_dims(l, s, r);
    llvm::Value* idx = b.CreateAdd(b.CreateMul(L.coord(l, s, 0, rd[0]), L.i32(s[1])), L.coord(l, s, 1, rd[1]));
    llvm::Value* x = regs[r];
    x = d.is_fp8() ? fp8_to_f32(L, x, d.scalar) : d.is_float() ? to_compute(L, x, d) : b.CreateSExt(x, ct);
    b.CreateStore(x, b.CreateGEP(ct, base, idx));
  }
}

Regs lower_dot_fma(Lowerer& L, const ir::Op& op, const Layout& l) {
  auto& b = L.b;
  const ir::Value* a = op.operands[0];
  const ir::Value* bv = op.operands[1];
  const int64_t M = a->type.shape[0], K = a->type.shape[1], N = bv->type.shape[1];
  const bool is_int = !a->type.dtype.is_float();
  llvm::Type* ct = is_int ? static_cast<llvm::Type*>(b.getInt32Ty()) : b.getFloatTy();
  const ir::Shape mn{M, N};
  Regs acc = L.operand(op, 2, &l);

  Lowerer::SmemBuffer buf = L.smem_begin((M * K + K * N) * 4);
  llvm::Value* sa = buf.base;
  llvm::Value* sb = b.CreateConstGEP1_64(ct, buf.base, M * K);
  stage_row_major(L, sa, ct, a, L.tile(a, L.layouts().of(a)), L.layouts().of(a));
  stage_row_major(L, sb, ct, bv, L.tile(bv, L.layouts().of(bv)), L.layouts().of(bv));
  L.barrier();

  // This thread's rows and columns (element offsets into the staged a and b).
  const int64_t nr = regs_along(l, mn, 0), nc = regs_along(l, mn, 1);
  std::vector<llvm::Value*> row_off, col;
  for (int64_t r = 0; r < nr; ++r) row_off.push_back(b.CreateMul(L.coord(l, mn, 0, r), L.i32(K)));
  for (int64_t c = 0; c < nc; ++c) col.push_back(L.coord(l, mn, 1, c));

  llvm::BasicBlock* pre = b.GetInsertBlock();
  auto* body = llvm::BasicBlock::Create(L.ctx, "dot.k", L.function());
  auto* exit = llvm::BasicBlock::Create(L.ctx, "dot.done", L.function());
  b.CreateBr(body);
  b.SetInsertPoint(body);
  llvm::PHINode* k = b.CreatePHI(b.getInt32Ty(), 2, "k");
  k->addIncoming(L.i32(0), pre);
  std::vector<llvm::PHINode*> phis;
  for (llvm::Value* x : acc) {
    phis.push_back(b.CreatePHI(x->getType(), 2));
    phis.back()->addIncoming(x, pre);
  }
  std::vector<llvm::Value*> av, bvals;
  for (int64_t r = 0; r < nr; ++r) av.push_back(b.CreateLoad(ct, b.CreateGEP(ct, sa, b.CreateAdd(row_off[r], k))));
  llvm::Value* krow = b.CreateMul(k, L.i32(N));
  for (int64_t c = 0; c < nc; ++c) bvals.push_back(b.CreateLoad(ct, b.CreateGEP(ct, sb, b.CreateAdd(krow, col[c]))));
  Regs next(acc.size());
  for (int64_t reg = 0; reg < static_cast<int64_t>(acc.size()); ++reg) {
    std::vector<int64_t> rd = reg_dims(l, mn, reg);
    llvm::Value* x = av[rd[0]];
    llvm::Value* y = bvals[rd[1]];
    llvm::Value* c = phis[reg];
    next[reg] = is_int ? b.CreateAdd(c, b.CreateMul(x, y)) : L.intrinsic(llvm::Intrinsic::fma, {ct}, {x, y, c});
  }
  llvm::Value* k1 = b.CreateAdd(k, L.i32(1));
  k->addIncoming(k1, body);
  for (size_t i = 0; i < phis.size(); ++i) phis[i]->addIncoming(next[i], body);
  b.CreateCondBr(b.CreateICmpSLT(k1, L.i32(K)), body, exit);
  b.SetInsertPoint(exit);
  L.smem_done(buf);
  return next;
}

}  // namespace

Regs lower_dot(Lowerer& L, const ir::Op& op, const Layout* l, const PipelineState* pipe) {
  TESSEL_ASSERT(l != nullptr, "dot has a tile result");
  // Dots are never recomputed in another layout (KernelPlan::recomputed), so `l` is the result's own.
  TESSEL_ASSERT(*l == L.layouts().of(op.results[0]), "dot lowered outside its own layout");
  if (const MmaPlan* plan = L.plan.mma(op)) return lower_dot_mma(L, op, *l, *plan, pipe);
  TESSEL_ASSERT(pipe == nullptr, "a pipelined dot runs on tensor cores");
  return lower_dot_fma(L, op, *l);
}

}  // namespace tessel::lowering
