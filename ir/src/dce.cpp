// dce: removes ops, loops and loop-carried values that nothing with a side effect needs.
#include <unordered_set>

#include "tessel/ir/accessors.hpp"
#include "tessel/ir/passes.hpp"

namespace tessel::ir {
namespace {

// Mark and sweep rather than "delete ops with no uses": a loop-carried value that only
// feeds its own next iteration has a use, yet nothing needs it. Liveness starts at the ops
// that write memory and flows backwards through operands, loop results, carried values and
// yields; whatever is not reached is dead. Loads may be removed too: with their result
// unused, reading memory changes nothing (which is also why a loop that only reads dies).
class Dce {
 public:
  explicit Dce(Function& f) : fn_(f), live_(f.num_values(), false) {}

  bool run() {
    walk(fn_.body, [&](Op& op) {
      if (op.info().effect == Effect::Writes) roots_.push_back(&op);
    });
    for (Op* op : roots_) mark_op(*op);
    drain();
    return sweep(fn_.body);
  }

 private:
  // The loop (or region op, e.g. reduce) whose body holds `op`.
  static Op* enclosing_loop(const Op& op) { return op.parent ? op.parent->parent_op : nullptr; }
  static bool is_loop(const Op& op) { return op.kind == OpKind::For; }
  // The body's yield; null in a malformed loop (the verifier reports it, we just don't crash).
  static Op* yield_of(const Op& loop) {
    Op* t = loop.body().terminator();
    return t && t->kind == OpKind::Yield ? t : nullptr;
  }

  void mark_value(Value* v) {
    if (live_[v->id]) return;
    live_[v->id] = true;
    work_.push_back(v);
  }

  // The op itself runs: its operands are needed, and so is every loop around it. A loop
  // needs only its bounds here; its carried slots become live one at a time.
  void mark_op(Op& op) {
    if (op.info().effect == Effect::Terminator) return;  // yields are live slot by slot
    if (!live_ops_.insert(&op).second) return;
    if (is_loop(op)) {
      ForOp loop{op};
      mark_value(loop.lo());
      mark_value(loop.hi());
      mark_value(loop.step());
    } else {
      for (Value* v : op.operands) mark_value(v);
      // A live op with a region that is not a loop (the generic reduce) runs its whole body:
      // what the body yields is needed.
      for (auto& r : op.regions)
        if (Op* t = r->terminator(); t && t->kind == OpKind::Yield)
          for (Value* v : t->operands) mark_value(v);
    }
    if (Op* outer = enclosing_loop(op)) mark_op(*outer);
  }

  // Carried slot j of a loop is needed: its init and what the body yields for it.
  void mark_slot(Op& loop, int j) {
    ForOp f{loop};
    if (j >= f.num_carried()) return;
    mark_value(f.init(j));
    Op* y = yield_of(loop);
    if (y && j < static_cast<int>(y->operands.size())) mark_value(y->operands[j]);
  }

  void drain() {
    while (!work_.empty()) {
      Value* v = work_.back();
      work_.pop_back();
      if (v->def) {
        mark_op(*v->def);
        if (is_loop(*v->def)) mark_slot(*v->def, v->index);
      } else if (Op* loop = v->block ? v->block->parent_op : nullptr) {
        mark_op(*loop);                                   // the induction variable or a
        if (v->index > 0 && is_loop(*loop)) mark_slot(*loop, v->index - 1);  // carried value
      }
    }
  }

  bool live_op(const Op& op) const { return live_ops_.contains(&op); }

  bool sweep(Block& b) {
    size_t before = b.ops.size();
    std::erase_if(b.ops, [&](const std::unique_ptr<Op>& op) {
      return op->info().effect != Effect::Terminator && !live_op(*op);
    });
    bool changed = b.ops.size() != before;
    for (auto& op : b.ops) {
      if (is_loop(*op)) changed |= drop_dead_slots(*op);
      for (auto& r : op->regions) changed |= sweep(*r);
    }
    return changed;
  }

  // A slot whose result and body argument are both dead: nothing reads it after the loop
  // and no live op in the body does, so its init, argument, yield operand and result go.
  bool drop_dead_slots(Op& loop) {
    ForOp f{loop};
    Block& body = f.body();
    Op* y = yield_of(loop);
    if (!y || y->operands.size() != loop.results.size() ||
        body.args.size() != loop.results.size() + 1 || f.num_carried() != static_cast<int>(loop.results.size()))
      return false;
    bool changed = false;
    for (int j = f.num_carried() - 1; j >= 0; --j) {
      if (live_[loop.results[j]->id] || live_[f.carried(j)->id]) continue;
      loop.operands.erase(loop.operands.begin() + 3 + j);
      loop.results.erase(loop.results.begin() + j);
      body.args.erase(body.args.begin() + 1 + j);
      y->operands.erase(y->operands.begin() + j);
      changed = true;
    }
    if (changed) {
      for (size_t i = 0; i < loop.results.size(); ++i) loop.results[i]->index = static_cast<int>(i);
      for (size_t i = 0; i < body.args.size(); ++i) body.args[i]->index = static_cast<int>(i);
    }
    return changed;
  }

  Function& fn_;
  std::vector<bool> live_;                  // by value id
  std::unordered_set<const Op*> live_ops_;  // membership only; never iterated
  std::vector<Op*> roots_;
  std::vector<Value*> work_;
};

}  // namespace

bool dce(Function& f) { return Dce(f).run(); }

}  // namespace tessel::ir
