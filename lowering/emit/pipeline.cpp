// Software pipelining of K loops: issuing one stage's copies.
#include "pipeline.hpp"

#include <llvm/IR/IntrinsicsNVPTX.h>

#include "tessel/ir/accessors.hpp"

namespace tessel::lowering {

void issue_stage(Lowerer& L, const ir::Op& op, const PipelinePlan& p, llvm::Value* base, llvm::Value* iv,
                 llvm::Value* runs, const std::vector<Regs>& ptrs, bool commit, bool by_class) {
  ir::ForOp loop{op};
  auto& b = L.b;
  L.with_rebound({{loop.induction_var(), Regs{iv}}}, p.mask_ops, [&] {
    llvm::Value* guard = runs;
    for (size_t o = 0; o < p.operands.size(); ++o) {
      const PipelinedOperand& po = p.operands[o];
      // A dense copy computes its pointers and mask in its copy layout.
      const Layout& l = po.dense ? *po.dense : L.layouts().of(po.load->results[0]);
      ir::LoadOp ld{*po.load};
      Regs mask;
      if (ld.mask()) mask = L.tile(ld.mask(), l);
      // Pointers computed from the induction variable: this trip's, lowered again above.
      const Regs own = po.from_iv() ? L.tile(ld.ptr(), l) : Regs{};
      llvm::Value* at = b.CreateConstGEP1_64(b.getInt8Ty(), base, po.offset);
      if (po.prefetch())
        prefetch_copy(L, po, at, po.from_iv() ? own : ptrs[o], mask, guard);
      else
        stage_async(L, at, po.tile, *po.load, po.from_iv() ? own : ptrs[o], mask, guard, by_class);
    }
  });
  if (commit) L.intrinsic(llvm::Intrinsic::nvvm_cp_async_commit_group, {}, {});
}

}  // namespace tessel::lowering
