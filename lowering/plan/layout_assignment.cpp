// Layout assignment: default layout per shape, forward anchors from reductions, then
// backward propagation of requests.
#include "plan/layout_assignment.hpp"

#include <algorithm>

#include "tessel/ir/accessors.hpp"
#include "plan/mma_layout.hpp"
#include "plan/reduction_layout.hpp"

namespace tessel::lowering {

using ir::OpKind;

bool is_reduction(const ir::Op& op) {
  ir::Rule r = op.info().rule;
  return r == ir::Rule::Reduce || r == ir::Rule::ArgReduce || r == ir::Rule::ReduceRegion;
}

std::vector<std::pair<int, Layout>> operands_converted_first(const ir::Op& op, const Layout* l) {
  std::vector<std::pair<int, Layout>> out;
  if (!l || op.kind == OpKind::Store || is_reduction(op)) return out;
  for (int i = 0; i < static_cast<int>(op.operands.size()); ++i)
    if (auto want = operand_layout(op, i, *l)) out.emplace_back(i, std::move(*want));
  return out;
}

namespace {

bool is_store(const ir::Op& op) { return op.kind == OpKind::Store; }

}  // namespace

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

const Layout* LayoutAssignment::of_op(const ir::Op& op) const {
  if (!op.results.empty()) return op.results[0]->type.is_scalar() ? nullptr : &of(op.results[0]);
  if (op.operands.empty() || op.operands[0]->type.is_scalar()) return nullptr;
  auto it = stores.find(&op);
  return it != stores.end() ? &it->second : &default_for(op.operands[0]->type.shape);
}

std::optional<Layout> dot_accumulator_layout(const ir::Op& op, int num_warps, bool wgmma) {
  const ir::Shape& mn = op.results[0]->type.shape;
  if (mn.size() != 2 || mn[0] < 16 || mn[1] < 8) return std::nullopt;
  if (wgmma) {
    const ir::Value* a = op.operands[0];
    if (auto l = wgmma_accumulator_layout(a->type.dtype.scalar, op.results[0]->type.dtype.scalar, mn[0], mn[1],
                                          a->type.shape.size() == 2 ? a->type.shape[1] : 0, num_warps))
      return l;
  }
  return mma_accumulator_layout(mn, num_warps);
}

std::optional<Layout> operand_layout(const ir::Op& op, int i, const Layout& l) {
  const ir::Value* v = op.operands[i];
  if (v->type.is_scalar()) return std::nullopt;
  if (is_reduction(op)) return unslice_layout(l, static_cast<int>(op.int_attr("axis")));
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
    case OpKind::Reshape:
    case OpKind::Trans:
      return std::nullopt;  // the operand stays where it is; the op moves the data
    case OpKind::Unpack:
      return unpack_operand_layout(l, static_cast<int>(op.int_attr("axis")), unpack_count(op),
                                   op.results[0]->type.shape[static_cast<size_t>(op.int_attr("axis"))]);
    case OpKind::Dot:
      // The accumulator shares the result's layout; a and b stay where their producers left
      // them (the lowering stages them through shared memory from any layout).
      return i == 2 ? std::optional<Layout>(l) : std::nullopt;
    // Reductions took the unslice above (is_reduction).
    case OpKind::ReduceSum: case OpKind::ReduceMax: case OpKind::ReduceMin: case OpKind::ArgMax:
    case OpKind::ArgMin: case OpKind::Reduce:
      ir::unexpected_op(__FILE__, __LINE__, "operand_layout", op.kind);
    // Elementwise, below.
    case OpKind::Constant: case OpKind::ProgramId: case OpKind::NumPrograms: case OpKind::Arange:
    case OpKind::Cast: case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div:
    case OpKind::Rem: case OpKind::Min: case OpKind::Max: case OpKind::And: case OpKind::Or: case OpKind::Xor:
    case OpKind::Shl: case OpKind::Shr: case OpKind::CmpEq: case OpKind::CmpNe: case OpKind::CmpLt:
    case OpKind::CmpLe: case OpKind::CmpGt: case OpKind::CmpGe: case OpKind::Neg: case OpKind::Abs:
    case OpKind::Not: case OpKind::Exp: case OpKind::Exp2: case OpKind::Log: case OpKind::Log2:
    case OpKind::Sqrt: case OpKind::Rsqrt: case OpKind::Sin: case OpKind::Cos: case OpKind::Tanh:
    case OpKind::Sigmoid: case OpKind::Erf: case OpKind::Floor: case OpKind::Ceil: case OpKind::Fma:
    case OpKind::Select: case OpKind::AddPtr: case OpKind::Load: case OpKind::Store: case OpKind::Rand:
    case OpKind::RandN: case OpKind::CumSum: case OpKind::AtomicAdd: case OpKind::AtomicMax: case OpKind::Hint:
    case OpKind::Bitcast:
      break;
  }
  // Elementwise ops (loads, stores, atomics and cumsum included): same-shaped operands share
  // the layout.
  ir::Shape shape = op.results.empty() ? op.operands[0]->type.shape : op.results[0]->type.shape;
  if (v->type.shape != shape) return std::nullopt;
  return l;
}

namespace {

// Per tile shape: the axis every reduction of a default-laid tile of that shape runs along
// (-1: none; -2: several disagree).
void collect_reduced_dims(const ir::Block& b, std::map<ir::Shape, int>& reduced) {
  ir::walk(b, [&](const ir::Op& op) {
    if (!is_reduction(op) && op.kind != OpKind::CumSum) return;
    const ir::Shape& s = op.operands[0]->type.shape;
    int axis = static_cast<int>(op.int_attr("axis"));
    auto [it, fresh] = reduced.emplace(s, axis);
    if (!fresh && it->second != axis) it->second = -2;
  });
}

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
    if (op.kind == OpKind::Load || op.kind == OpKind::Store || op.kind == OpKind::AtomicAdd ||
        op.kind == OpKind::AtomicMax) {
      const ir::Value* p = op.operands[0];
      note(p, p->type.dtype.pointee().bytes());
    }
  });
}

// Layouts chosen by access order (assign_layouts' `axis`): by Value::id, the pointer tiles and
// results of loads contiguous along a dim other than the last.
using AccessAnchors = std::unordered_map<uint32_t, Layout>;

AccessAnchors access_anchors(const ir::Function& f, const AxisAnalysis& axis, int num_warps) {
  AccessAnchors out;
  ir::walk(f.body, [&](const ir::Op& op) {
    if (op.kind != OpKind::Load) return;
    const ir::Value* ptr = op.operands[0];
    const ir::Value* v = op.results[0];
    if (v->type.rank() != 2) return;
    const AxisInfo& pi = axis.at(ptr);
    const int64_t eb = v->type.dtype.bytes();
    // Only where dim 0 gives vectors the last dim cannot: 2+ consecutive elements along dim 0,
    // none along dim 1.
    if (pi.dims() != 2 || pi.contiguity[1] != 1 || pi.contiguity[0] < 2 || eb >= 16) return;
    const Layout l = layout_along(v->type.shape, static_cast<int>(eb), num_warps, 0);
    out.emplace(ptr->id, l);
    out.emplace(v->id, l);
  });
  return out;
}

// The unpack that `v` (a dot's B) is computed from through elementwise ops on tiles of its
// shape (W4A16's `unpack(words) * scales`, a zero point subtracted, a cast), or null.
const ir::Op* unpack_feeding(const ir::Value* v, int depth = 0) {
  const ir::Op* d = v->def;
  if (!d || depth > 8) return nullptr;
  if (d->kind == OpKind::Unpack) return d;
  const ir::Rule r = d->info().rule;
  if (r != ir::Rule::Cast && r != ir::Rule::Arith && r != ir::Rule::Fma && r != ir::Rule::Select &&
      r != ir::Rule::UnaryNumeric && r != ir::Rule::UnaryFloat)
    return nullptr;
  for (const ir::Value* o : d->operands)
    if (o->type.shape == v->type.shape)
      if (const ir::Op* u = unpack_feeding(o, depth + 1)) return u;
  return nullptr;
}

// Register-B dots (mma_b_register_layout): a dot on mma.sync whose B an unpack computes in
// registers (the 8 fields of a word along K, 16-bit elements) takes B straight from its
// registers. The unpack's result is anchored in that layout (the ops from it to the dot
// inherit it); it reads its words in the layout that gives each lane of a quad the whole word
// (unpack_operand_layout's lane split), and takes its two fields of each. The words, where they
// are a load, stay in a copy layout of 16-byte runs (anchored, with the load's pointer tile and
// the loop-carried pointers it is read through, as access anchors are): a pipelined loop copies
// them as a dense tile and each lane reads its words from it (PipelinedOperand::dense).
void register_b_anchors(const ir::Function& f, int num_warps, bool wgmma, AccessAnchors& out) {
  ir::walk(f.body, [&](const ir::Op& op) {
    if (op.kind != OpKind::Dot) return;
    const ir::Value* bv = op.operands[1];
    const ir::Value* acc = op.results[0];
    const ir::Scalar bs = bv->type.dtype.scalar;
    if (bv->type.dtype.ptr || (bs != ir::Scalar::f16 && bs != ir::Scalar::bf16) || acc->type.dtype.scalar != ir::Scalar::f32)
      return;
    if (op.operands[0]->type.dtype != bv->type.dtype) return;
    const auto l = dot_accumulator_layout(op, num_warps, wgmma);
    if (!l || !is_mma_accumulator(*l, acc->type.shape)) return;  // none, or wgmma's
    const auto lb = mma_b_register_layout(*l, bv->type.shape);
    const ir::Op* u = unpack_feeding(bv);
    if (!lb || !u || u->int_attr("axis") != 0 || unpack_count(*u) != 8) return;
    const ir::Value* words = u->operands[0];
    if (!unpack_operand_layout(*lb, 0, 8, bv->type.shape[0])) return;
    out[u->results[0]->id] = *lb;
    if (words->def && words->def->kind == OpKind::Load && words->type.rank() == 2) {
      const Layout c = copy_layout(words->type.shape, static_cast<int>(words->type.dtype.bytes()), num_warps);
      out[words->id] = c;
      out[words->def->operands[0]->id] = c;
    }
  });
}

// The forward pass: anchored layouts (see layout_assignment.hpp).
class Anchors {
 public:
  Anchors(const ir::Function& f, const LayoutAssignment& la, int num_warps, bool wgmma, AccessAnchors access)
      : at(f.num_values()), la_(la), num_warps_(num_warps), wgmma_(wgmma), access_(std::move(access)) {}

  void block(const ir::Block& b) {
    for (const auto& op : b.ops) visit(*op);
  }

  std::vector<std::optional<Layout>> at;  // by Value::id
  std::unordered_map<const ir::Op*, Layout> stores;

 private:
  Layout layout_or_default(const ir::Value* v) const {
    return at[v->id] ? *at[v->id] : la_.default_for(v->type.shape);
  }

  void visit(const ir::Op& op) {
    if (op.kind == OpKind::For) return loop(op);
    if (op.kind == OpKind::Yield) return;
    std::optional<Layout> a = anchor(op);
    if (is_store(op)) {
      if (a) stores[&op] = *a;
      else stores.erase(&op);
      return;
    }
    for (const ir::Value* r : op.results) at[r->id] = r->type.is_scalar() ? std::nullopt : a;
    for (const ir::Value* r : op.results) forced(r);
  }

  // An access-order anchor overrides what the operands agreed on.
  void forced(const ir::Value* v) {
    auto it = access_.find(v->id);
    if (it != access_.end()) at[v->id] = it->second;
  }

  std::optional<Layout> anchor(const ir::Op& op) const {
    if (op.results.empty() && !is_store(op)) return std::nullopt;
    if (!op.results.empty() && op.results[0]->type.is_scalar()) return std::nullopt;
    const ir::Value* x = op.operands.empty() ? nullptr : op.operands[0];
    if (is_reduction(op)) return slice_layout(layout_or_default(x), static_cast<int>(op.int_attr("axis")));
    switch (op.kind) {
      case OpKind::Dot:
        // The mma accumulator layout (mma_layout.hpp); the epilogue computed from the result
        // and the loop-carried accumulator inherit it.
        return dot_accumulator_layout(op, num_warps_, wgmma_);
      case OpKind::Constant: case OpKind::ProgramId: case OpKind::NumPrograms: case OpKind::Arange:
      case OpKind::Splat: case OpKind::Reshape: case OpKind::Trans:
        return std::nullopt;
      case OpKind::Unpack:
        // A word's fields stay in its thread: the words' layout with longer runs along the axis.
        return unpack_result_layout(layout_or_default(x), static_cast<int>(op.int_attr("axis")), unpack_count(op));
      case OpKind::ExpandDims:
        if (x->type.is_scalar() || !at[x->id]) return std::nullopt;
        return unslice_layout(*at[x->id], static_cast<int>(op.int_attr("axis")));
      case OpKind::Broadcast: {
        if (x->type.is_scalar() || !at[x->id]) return std::nullopt;
        std::optional<Layout> l = at[x->id];
        for (int k = x->type.rank(); l && k < op.results[0]->type.rank(); ++k) l = unslice_layout(*l, 0);
        return l;
      }
      // Reductions took the slice above (is_reduction).
      case OpKind::ReduceSum: case OpKind::ReduceMax: case OpKind::ReduceMin: case OpKind::ArgMax:
      case OpKind::ArgMin: case OpKind::Reduce:
        ir::unexpected_op(__FILE__, __LINE__, "anchor", op.kind);
      // Elementwise, below.
      case OpKind::Cast: case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div:
      case OpKind::Rem: case OpKind::Min: case OpKind::Max: case OpKind::And: case OpKind::Or:
      case OpKind::Xor: case OpKind::Shl: case OpKind::Shr: case OpKind::CmpEq: case OpKind::CmpNe:
      case OpKind::CmpLt: case OpKind::CmpLe: case OpKind::CmpGt: case OpKind::CmpGe: case OpKind::Neg:
      case OpKind::Abs: case OpKind::Not: case OpKind::Exp: case OpKind::Exp2: case OpKind::Log:
      case OpKind::Log2: case OpKind::Sqrt: case OpKind::Rsqrt: case OpKind::Sin: case OpKind::Cos:
      case OpKind::Tanh: case OpKind::Sigmoid: case OpKind::Erf: case OpKind::Floor: case OpKind::Ceil:
      case OpKind::Fma: case OpKind::Select: case OpKind::AddPtr: case OpKind::Load: case OpKind::Store:
      case OpKind::Rand: case OpKind::RandN: case OpKind::CumSum: case OpKind::AtomicAdd:
      case OpKind::AtomicMax: case OpKind::For: case OpKind::Yield: case OpKind::Hint: case OpKind::Bitcast:
        break;
    }
    // Elementwise: the anchor the same-shaped operands agree on.
    const ir::Shape& shape = op.results.empty() ? x->type.shape : op.results[0]->type.shape;
    std::optional<Layout> agreed;
    for (const ir::Value* v : op.operands) {
      if (v->type.shape != shape || !at[v->id]) continue;
      if (agreed && !(*agreed == *at[v->id])) return std::nullopt;
      agreed = at[v->id];
    }
    return agreed;
  }

  // A carried value takes the anchor of what the body yields for it (else its init's), so
  // loops over reduction results stay in the slice layout. Two passes over the body: the
  // second sees the carried anchors the first found.
  void loop(const ir::Op& op) {
    ir::ForOp lp{op};
    const int nc = lp.num_carried();
    for (int i = 0; i < nc; ++i) {
      at[lp.carried(i)->id] = lp.carried(i)->type.is_scalar() ? std::nullopt : at[lp.init(i)->id];
      forced(lp.carried(i));
    }
    block(lp.body());
    bool changed = false;
    for (int i = 0; i < nc; ++i) {
      const auto& y = at[lp.yield().operand(i)->id];
      auto& c = at[lp.carried(i)->id];
      if (y && !(c && *c == *y) && !access_.count(lp.carried(i)->id)) {
        c = y;
        changed = true;
      }
    }
    if (changed) block(lp.body());
    for (int i = 0; i < nc; ++i) at[op.results[i]->id] = at[lp.carried(i)->id];
  }

  const LayoutAssignment& la_;
  int num_warps_;
  bool wgmma_;
  AccessAnchors access_;
};

class Assigner {
 public:
  Assigner(const ir::Function& f, LayoutAssignment& out, const Anchors& anchors)
      : fn_(f), out_(out), anchors_(anchors), wants_(f.num_values()) {}

  void run() {
    std::vector<const ir::Op*> ops;
    ir::walk(fn_.body, [&](const ir::Op& op) { ops.push_back(&op); });
    for (const ir::Value* a : fn_.body.args) set(a, fixed(a));
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) visit(**it);
  }

 private:
  // Loop-carried values, loop results and parameters: their anchor or their default.
  std::optional<Layout> fixed(const ir::Value* v) const {
    if (v->type.is_scalar()) return std::nullopt;
    return anchors_.at[v->id] ? *anchors_.at[v->id] : out_.default_for(v->type.shape);
  }
  void set(const ir::Value* v, const std::optional<Layout>& l) {
    if (!v->type.is_scalar()) out_.by_value[v->id] = l;
  }

  // A value's layout once all its uses have been seen (they come after it in the walk).
  void decide(const ir::Value* v) {
    if (v->type.is_scalar()) return;
    if (anchors_.at[v->id]) {
      out_.by_value[v->id] = anchors_.at[v->id];
      return;
    }
    const auto& w = wants_[v->id];
    bool agree = !w.empty() && std::all_of(w.begin(), w.end(), [&](const Layout& l) { return l == w[0]; });
    out_.by_value[v->id] = agree ? w[0] : out_.default_for(v->type.shape);
  }

  void visit(const ir::Op& op) {
    if (op.kind == OpKind::For) {
      // The body was visited already (it follows the op in the walk); the inits are asked
      // for in the carried values' layouts.
      ir::ForOp loop{op};
      for (const ir::Value* r : op.results) set(r, fixed(r));
      for (const ir::Value* a : loop.body().args) set(a, fixed(a));
      for (int i = 0; i < loop.num_carried(); ++i) want(loop.init(i), fixed(loop.carried(i)));
      return;
    }
    if (op.kind == OpKind::Yield) {
      const ir::Op* parent = op.parent->parent_op;
      if (!parent || parent->kind != OpKind::For) return;  // a reduce body: scalars only
      ir::ForOp loop{*parent};
      for (size_t i = 0; i < op.operands.size(); ++i) want(op.operands[i], fixed(loop.carried(static_cast<int>(i))));
      return;
    }
    for (const ir::Value* r : op.results) decide(r);
    for (const auto& region : op.regions)
      for (const ir::Value* a : region->args) set(a, std::nullopt);
    std::optional<Layout> l;
    if (!op.results.empty()) {
      if (!op.results[0]->type.is_scalar()) l = out_.by_value[op.results[0]->id];
    } else if (!op.operands.empty() && !op.operands[0]->type.is_scalar()) {
      auto it = anchors_.stores.find(&op);
      l = it != anchors_.stores.end() ? it->second : out_.default_for(op.operands[0]->type.shape);
      out_.stores[&op] = *l;
    }
    if (!l) return;
    for (int i = 0; i < op.num_operands(); ++i) want(op.operands[i], operand_layout(op, i, *l));
  }

  void want(const ir::Value* v, const std::optional<Layout>& l) {
    if (l && !v->type.is_scalar()) wants_[v->id].push_back(*l);
  }

  const ir::Function& fn_;
  LayoutAssignment& out_;
  const Anchors& anchors_;
  std::vector<std::vector<Layout>> wants_;
};

}  // namespace

LayoutAssignment assign_layouts(const ir::Function& f, int num_warps, bool wgmma, const AxisAnalysis* axis) {
  LayoutAssignment out;
  out.by_value.resize(f.num_values());
  std::map<ir::Shape, int> elem_bytes;
  collect_shapes(f.body, elem_bytes);
  std::map<ir::Shape, int> reduced;
  collect_reduced_dims(f.body, reduced);
  for (const auto& [shape, bytes] : elem_bytes) {
    auto it = reduced.find(shape);
    int axis = it != reduced.end() && it->second >= 0 ? it->second : -1;
    out.defaults.emplace(shape, default_layout(shape, bytes ? bytes : 4, num_warps, axis));
  }
  AccessAnchors forced = axis ? access_anchors(f, *axis, num_warps) : AccessAnchors{};
  register_b_anchors(f, num_warps, wgmma, forced);
  Anchors anchors(f, out, num_warps, wgmma, std::move(forced));
  anchors.block(f.body);
  Assigner(f, out, anchors).run();
  return out;
}

}  // namespace tessel::lowering
