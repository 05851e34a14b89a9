#include "plan/recompute.hpp"

#include <map>
#include <utility>

namespace tessel::lowering {

namespace {

class Recompute {
 public:
  // `depth`: how many producers back from the value first asked about.
  bool cheap(const ir::Value* v, int depth) {
    if (v->type.is_scalar()) return true;
    if (depth > 12) return false;
    auto key = std::make_pair(v->id, depth);
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
    const bool r = cheap_op(v->def, depth);
    memo_[key] = r;
    return r;
  }

 private:
  bool cheap_op(const ir::Op* op, int depth) {
    if (!op || !ir::is_pure(op->kind) || op->kind == ir::OpKind::Rand || op->kind == ir::OpKind::RandN) return false;
    switch (op->info().rule) {
      // Reductions, scans and data movement are lowered once, in their own layout.
      case ir::Rule::Reduce: case ir::Rule::ArgReduce: case ir::Rule::ReduceRegion: case ir::Rule::Scan:
      case ir::Rule::Reshape: case ir::Rule::Trans: case ir::Rule::Dot: case ir::Rule::Unpack:
        return false;
      // Effects (loads, stores, atomics, loops) were refused above as impure; Rand too.
      case ir::Rule::Load: case ir::Rule::Store: case ir::Rule::Atomic: case ir::Rule::For: case ir::Rule::Yield:
      case ir::Rule::Rand:
        return false;
      case ir::Rule::Constant: case ir::Rule::Axis: case ir::Rule::Arange: case ir::Rule::Splat:
      case ir::Rule::Broadcast: case ir::Rule::ExpandDims: case ir::Rule::Cast: case ir::Rule::Arith:
      case ir::Rule::Bitwise: case ir::Rule::Compare: case ir::Rule::UnaryNumeric: case ir::Rule::UnaryInt:
      case ir::Rule::UnaryFloat: case ir::Rule::Fma: case ir::Rule::Select: case ir::Rule::AddPtr:
      case ir::Rule::Hint: case ir::Rule::Bitcast:
        break;
    }
    if (!op->regions.empty()) return false;
    for (const ir::Value* o : op->operands)
      if (!o->type.is_scalar() && !cheap(o, depth + 1)) return false;
    return true;
  }

  std::map<std::pair<uint32_t, int>, bool> memo_;
};

}  // namespace

std::vector<bool> recomputed_values(const ir::Function& f) {
  std::vector<bool> out(f.num_values(), false);
  Recompute r;
  ir::walk(f.body, [&](const ir::Op& op) {
    for (const ir::Value* v : op.results)
      if (!v->type.is_scalar()) out.at(v->id) = r.cheap(v, 0);
  });
  return out;
}

}  // namespace tessel::lowering
