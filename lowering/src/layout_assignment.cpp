// Layout assignment: default layout per shape, then backward propagation of requests.
#include "tessel/lowering/layout_assignment.hpp"

#include <algorithm>

#include "tessel/ir/accessors.hpp"

namespace tessel::lowering {

using ir::OpKind;

const Layout& LayoutAssignment::of(const ir::Value* v) const {
  TESSEL_ASSERT(v->id < by_value.size() && by_value[v->id].has_value(),
                "no layout for a value of type " + v->type.str());
  return *by_value[v->id];
}

const Layout& LayoutAssignment::default_for(const ir::Shape& s) const {
  auto it = defaults.find(s);
  TESSEL_ASSERT(it != defaults.end(), "no default layout for shape " + ir::shape_str(s));
  return it->second;
}

std::optional<Layout> operand_layout(const ir::Op& op, int i, const Layout& l) {
  const ir::Value* v = op.operands[i];
  if (v->type.is_scalar()) return std::nullopt;
  switch (op.kind) {
    case OpKind::ExpandDims: return slice_layout(l, static_cast<int>(op.int_attr("axis")));
    case OpKind::Broadcast: {
      Layout s = l;
      int extra = static_cast<int>(op.results[0]->type.rank()) - v->type.rank();
      for (int k = 0; k < extra; ++k) s = slice_layout(s, 0);
      return s;
    }
    case OpKind::For:
    case OpKind::Yield:
    case OpKind::Splat:
      return std::nullopt;  // loop operands are decided by the loop; splat takes a scalar
    default: break;
  }
  // Elementwise ops (loads and stores included): same-shaped operands share the layout.
  ir::Shape shape = op.results.empty() ? op.operands[0]->type.shape : op.results[0]->type.shape;
  if (v->type.shape != shape) return std::nullopt;
  return l;
}

namespace {

void collect_shapes(const ir::Block& b, std::map<ir::Shape, int>& elem_bytes) {
  auto note = [&](const ir::Value* v, int bytes) {
    if (v->type.is_scalar()) return;
    auto [it, fresh] = elem_bytes.emplace(v->type.shape, bytes);
    if (!fresh && bytes > 0 && (it->second == 0 || bytes < it->second)) it->second = bytes;
  };
  for (const ir::Value* a : b.args) note(a, 0);
  ir::walk(b, [&](const ir::Op& op) {
    for (const ir::Value* r : op.results) note(r, 0);
    for (const ir::Value* o : op.operands) note(o, 0);
    for (const auto& region : op.regions)
      for (const ir::Value* a : region->args) note(a, 0);
    if (op.kind == OpKind::Load || op.kind == OpKind::Store) {
      const ir::Value* p = op.operands[0];
      note(p, p->type.dtype.pointee().bytes());
    }
  });
}

class Assigner {
 public:
  Assigner(const ir::Function& f, LayoutAssignment& out) : fn_(f), out_(out), wants_(f.num_values()) {}

  void run() {
    std::vector<const ir::Op*> ops;
    ir::walk(fn_.body, [&](const ir::Op& op) { ops.push_back(&op); });
    for (const ir::Value* a : fn_.body.args) set_default(a);
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) visit(**it);
  }

 private:
  void set_default(const ir::Value* v) {
    if (!v->type.is_scalar()) out_.by_value[v->id] = out_.default_for(v->type.shape);
  }

  // A value's layout once all its uses have been seen (they come after it in the walk).
  void decide(const ir::Value* v) {
    if (v->type.is_scalar()) return;
    const auto& w = wants_[v->id];
    bool agree = !w.empty() && std::all_of(w.begin(), w.end(), [&](const Layout& l) { return l == w[0]; });
    out_.by_value[v->id] = agree ? w[0] : out_.default_for(v->type.shape);
  }

  void visit(const ir::Op& op) {
    if (op.kind == OpKind::For) {
      // Loop results and carried values use their default layouts; the inits are asked
      // for in those layouts. The body was visited already (it follows the op in the walk).
      for (const ir::Value* r : op.results) set_default(r);
      ir::ForOp loop{op};
      for (const ir::Value* a : loop.body().args) set_default(a);
      for (int i = 0; i < loop.num_carried(); ++i) want(loop.init(i), out_.by_value[loop.carried(i)->id]);
      return;
    }
    if (op.kind == OpKind::Yield) {
      const ir::Op* loop = op.parent->parent_op;
      if (!loop) return;
      for (size_t i = 0; i < op.operands.size(); ++i) {
        const ir::Value* r = loop->results.at(i);
        if (!r->type.is_scalar()) want(op.operands[i], out_.default_for(r->type.shape));
      }
      return;
    }
    for (const ir::Value* r : op.results) decide(r);
    std::optional<Layout> l;
    if (!op.results.empty()) {
      if (!op.results[0]->type.is_scalar()) l = out_.by_value[op.results[0]->id];
    } else if (!op.operands.empty() && !op.operands[0]->type.is_scalar()) {
      l = out_.default_for(op.operands[0]->type.shape);  // a store: its pointer's default
    }
    if (!l) return;
    for (int i = 0; i < op.num_operands(); ++i) want(op.operands[i], operand_layout(op, i, *l));
  }

  void want(const ir::Value* v, const std::optional<Layout>& l) {
    if (l && !v->type.is_scalar()) wants_[v->id].push_back(*l);
  }

  const ir::Function& fn_;
  LayoutAssignment& out_;
  std::vector<std::vector<Layout>> wants_;
};

}  // namespace

LayoutAssignment assign_layouts(const ir::Function& f, int num_warps) {
  LayoutAssignment out;
  out.by_value.resize(f.num_values());
  std::map<ir::Shape, int> elem_bytes;
  collect_shapes(f.body, elem_bytes);
  for (const auto& [shape, bytes] : elem_bytes)
    out.defaults.emplace(shape, default_layout(shape, bytes ? bytes : 4, num_warps));
  Assigner(f, out).run();
  return out;
}

}  // namespace tessel::lowering
