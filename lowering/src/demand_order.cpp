// Reorders pure arithmetic inside each basic block so that it runs where its result is first
// needed (see demand_order.hpp).
#include "demand_order.hpp"

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>

#include <unordered_set>
#include <vector>

namespace tessel::lowering {
namespace {

// Arithmetic the order may move: no memory, no side effects, not convergent, one scalar or
// vector result. Calls qualify only as plain math intrinsics (fma, fabs, ex2.approx, ...):
// tensor-core intrinsics (struct results), inline asm and shuffles stay where they are.
bool movable(const llvm::Instruction& i) {
  if (i.isTerminator() || llvm::isa<llvm::PHINode>(i) || i.isEHPad() || llvm::isa<llvm::AllocaInst>(i)) return false;
  if (i.mayReadOrWriteMemory() || i.mayHaveSideEffects()) return false;
  if (const auto* call = llvm::dyn_cast<llvm::CallBase>(&i)) {
    if (!llvm::isa<llvm::IntrinsicInst>(call) || call->isConvergent()) return false;
    if (call->getType()->isStructTy() || call->getType()->isVoidTy()) return false;
  }
  return true;
}

class BlockOrder {
 public:
  explicit BlockOrder(llvm::BasicBlock& bb) : bb_(bb) {}

  void run() {
    std::vector<llvm::Instruction*> original;
    for (llvm::Instruction& i : bb_)
      if (!llvm::isa<llvm::PHINode>(i) && !i.isTerminator()) original.push_back(&i);
    for (llvm::Instruction* i : original) in_block_.insert(i);
    // Anchors keep their order; each first pulls in the movable values it uses.
    for (llvm::Instruction* i : original)
      if (!movable(*i)) emit(i);
    // Movable values used only in later blocks (or not at all) go last, in their old order.
    for (llvm::Instruction* i : original) emit(i);
    llvm::Instruction* end = bb_.getTerminator();
    for (llvm::Instruction* i : order_) i->moveBefore(end);
  }

 private:
  // Appends i after the not-yet-placed movable values of this block it uses (depth first,
  // operands in order). Operands that are anchors were placed already: SSA puts them before i.
  // Iterative: in-thread reduction chains can be thousands of values deep.
  void emit(llvm::Instruction* root) {
    if (placed_.count(root)) return;
    std::vector<std::pair<llvm::Instruction*, unsigned>> stack{{root, 0}};
    placed_.insert(root);
    while (!stack.empty()) {
      auto& [i, next] = stack.back();
      if (next < i->getNumOperands()) {
        auto* d = llvm::dyn_cast<llvm::Instruction>(i->getOperand(next++));
        if (d && in_block_.count(d) && movable(*d) && placed_.insert(d).second) stack.push_back({d, 0});
        continue;
      }
      order_.push_back(i);
      stack.pop_back();
    }
  }

  llvm::BasicBlock& bb_;
  std::unordered_set<llvm::Instruction*> in_block_, placed_;
  std::vector<llvm::Instruction*> order_;
};

}  // namespace

void order_by_demand(llvm::Function& f) {
  for (llvm::BasicBlock& bb : f) {
    if (!bb.getTerminator()) continue;
    BlockOrder(bb).run();
  }
}

}  // namespace tessel::lowering
