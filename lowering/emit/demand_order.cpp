// Reorders pure arithmetic inside each basic block so that it runs where its result is first
// needed (see demand_order.hpp).
#include "demand_order.hpp"

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>

#include <algorithm>
#include <unordered_set>
#include <vector>

namespace tessel::lowering {
namespace {

// Arithmetic the order may move: no memory, no side effects, not convergent, one scalar or
// vector result. Calls qualify only as plain math intrinsics (fma, fabs, ex2.approx, ...):
// tensor-core intrinsics (struct results), inline asm and shuffles stay where they are.
bool movable(const llvm::Instruction& i) {
  if (i.isTerminator() || llvm::isa<llvm::PHINode>(i) || i.isEHPad() || llvm::isa<llvm::AllocaInst>(i)) return false;
  // Marked pure inline asm (no memory; LLVM cannot tell it returns, so it counts as a side effect).
  if (const auto* call = llvm::dyn_cast<llvm::CallBase>(&i); call && call->getMetadata(kSinkToUse)) return true;
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
    // Anchors keep their order; each first pulls in the movable values it uses. Up to kWindow
    // consecutive independent anchors (the stores of an epilogue) pull theirs in together,
    // interleaved, so that several elements' chains are in flight at once.
    std::vector<llvm::Instruction*> anchors;
    for (llvm::Instruction* i : original)
      if (!movable(*i)) anchors.push_back(i);
    for (size_t a = 0; a < anchors.size();) {
      size_t end = a + 1;
      std::vector<std::vector<llvm::Instruction*>> chains{chain_of(anchors[a])};
      std::unordered_set<llvm::Instruction*> window{anchors[a]};
      while (end < anchors.size() && end - a < kWindow) {
        std::vector<llvm::Instruction*> c = chain_of(anchors[end]);
        if (uses_any(anchors[end], window) || std::any_of(c.begin(), c.end(), [&](llvm::Instruction* i) {
              return uses_any(i, window);
            }))
          break;
        window.insert(anchors[end++]);
        chains.push_back(std::move(c));
      }
      size_t longest = 0;
      for (const auto& c : chains) longest = std::max(longest, c.size());
      for (size_t k = 0; k < longest; ++k)
        for (const auto& c : chains)
          if (k < c.size()) emit(c[k]);
      for (; a < end; ++a) emit(anchors[a]);
    }
    // Movable values used only in later blocks (or not at all) go last, in their old order.
    for (llvm::Instruction* i : original) emit(i);
    llvm::Instruction* end = bb_.getTerminator();
    for (llvm::Instruction* i : order_) i->moveBefore(end);
  }

 private:
  static constexpr size_t kWindow = 4;

  // The movable values of this block not yet placed that i needs, in depth-first order.
  std::vector<llvm::Instruction*> chain_of(llvm::Instruction* root) {
    std::vector<llvm::Instruction*> out;
    std::unordered_set<llvm::Instruction*> seen;
    std::vector<std::pair<llvm::Instruction*, unsigned>> stack{{root, 0}};
    while (!stack.empty()) {
      auto& [i, next] = stack.back();
      if (next < i->getNumOperands()) {
        auto* d = llvm::dyn_cast<llvm::Instruction>(i->getOperand(next++));
        if (d && in_block_.count(d) && movable(*d) && !placed_.count(d) && seen.insert(d).second)
          stack.push_back({d, 0});
        continue;
      }
      if (i != root) out.push_back(i);
      stack.pop_back();
    }
    return out;
  }

  static bool uses_any(const llvm::Instruction* i, const std::unordered_set<llvm::Instruction*>& set) {
    for (const llvm::Value* op : i->operands())
      if (const auto* d = llvm::dyn_cast<llvm::Instruction>(op); d && set.count(const_cast<llvm::Instruction*>(d)))
        return true;
    return false;
  }

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
