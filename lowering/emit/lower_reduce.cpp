// Reductions along one axis: reduce_sum / reduce_max / reduce_min, argmax / argmin, reduce.
//
// A partial result travels as an Item, one LLVM value per channel (argmax/argmin carry the
// value and its index). The stages follow plan_reduce (reduction_layout.hpp): a pairwise tree
// over a thread's registers, shfl.sync.bfly butterflies across lanes, then one shared-memory
// round across warps (each warp's partial written once, one barrier, every thread combines
// all warps' partials in warp order, so all threads end with the same value). The result is
// in the slice layout of the operand's layout; a rank-1 operand gives a (uniform) scalar.
//
// Like the interpreter, every combine rounds to the element type (f16/bf16 values are widened
// to f32 for each combine and rounded back, as elementwise ops do); only the order of the
// combines differs. Combines must be commutative (lanes of a butterfly combine in opposite orders): sum,
// maximum/minimum and the (value, index) orders of argmax/argmin are; the generic reduce
// asks the same of its user (ops.def).
#include <functional>

#include "lowerer.hpp"
#include "plan/reduction_layout.hpp"

namespace tessel::lowering {
namespace {

using Item = std::vector<llvm::Value*>;
using K = ir::OpKind;

struct Reduction {
  std::vector<llvm::Type*> channels;
  bool needs_index = false;
  // An element (register value) and its coordinate along the axis (null unless needs_index).
  std::function<Item(llvm::Value* elem, llvm::Value* coord)> make;
  std::function<Item(const Item&, const Item&)> combine;
  std::function<llvm::Value*(const Item&)> finish;
};


// Does `b` beat `a` in argmax (or argmin) order? Larger (smaller) values win, NaN beats
// every number, and ties (NaN against NaN included) go to the smaller index.
llvm::Value* arg_takes_b(Lowerer& L, bool is_max, ir::DType d, const Item& a, const Item& c) {
  auto& b = L.b;
  llvm::Value *va = a[0], *vb = c[0];
  llvm::Value* smaller_index = b.CreateICmpSLT(c[1], a[1]);
  if (d.is_float()) {
    llvm::Value* a_nan = b.CreateFCmpUNO(va, va);
    llvm::Value* b_nan = b.CreateFCmpUNO(vb, vb);
    llvm::Value* better = is_max ? b.CreateFCmpOGT(vb, va) : b.CreateFCmpOLT(vb, va);
    better = b.CreateOr(better, b.CreateAnd(b_nan, b.CreateNot(a_nan)));
    llvm::Value* tie = b.CreateOr(b.CreateFCmpOEQ(vb, va), b.CreateAnd(a_nan, b_nan));
    return b.CreateOr(better, b.CreateAnd(tie, smaller_index));
  }
  const bool u = d.is_bool() || d.is_unsigned();
  llvm::Value* better = is_max ? (u ? b.CreateICmpUGT(vb, va) : b.CreateICmpSGT(vb, va))
                               : (u ? b.CreateICmpULT(vb, va) : b.CreateICmpSLT(vb, va));
  return b.CreateOr(better, b.CreateAnd(b.CreateICmpEQ(vb, va), smaller_index));
}

Reduction reduction_for(Lowerer& L, const ir::Op& op) {
  auto& b = L.b;
  const ir::DType d = op.operands[0]->type.dtype;
  llvm::Type* ct = d.is_float() && is_half(d) ? b.getFloatTy() : L.reg_type(d);
  Reduction r;
  auto same = [](llvm::Value* e, llvm::Value*) { return Item{e}; };
  auto first = [](const Item& x) { return x[0]; };
  switch (op.kind) {
    case K::ReduceSum:
      r.channels = {L.reg_type(d)};
      r.make = same;
      r.finish = first;
      r.combine = [&L, d](const Item& a, const Item& c) {
        if (!d.is_float()) return Item{L.b.CreateAdd(a[0], c[0])};
        return Item{from_compute(L, L.b.CreateFAdd(to_compute(L, a[0], d), to_compute(L, c[0], d)), d)};
      };
      return r;
    case K::ReduceMax:
    case K::ReduceMin: {
      const bool mx = op.kind == K::ReduceMax;
      r.channels = {L.reg_type(d)};
      r.make = same;
      r.finish = first;
      r.combine = [&L, d, mx](const Item& a, const Item& c) {
        llvm::Intrinsic::ID id;
        if (d.is_float()) id = mx ? llvm::Intrinsic::maximum : llvm::Intrinsic::minimum;  // NaN propagates
        else if (d.is_bool() || d.is_unsigned()) id = mx ? llvm::Intrinsic::umax : llvm::Intrinsic::umin;
        else id = mx ? llvm::Intrinsic::smax : llvm::Intrinsic::smin;
        llvm::Value* x = to_compute(L, a[0], d);
        return Item{from_compute(L, L.intrinsic(id, {x->getType()}, {x, to_compute(L, c[0], d)}), d)};  // exact
      };
      return r;
    }
    case K::ArgMax:
    case K::ArgMin: {
      const bool mx = op.kind == K::ArgMax;
      r.channels = {ct, b.getInt32Ty()};
      r.needs_index = true;
      r.make = [&L, d](llvm::Value* e, llvm::Value* coord) { return Item{to_compute(L, e, d), coord}; };
      r.finish = [](const Item& x) { return x[1]; };
      r.combine = [&L, d, mx](const Item& a, const Item& c) {
        llvm::Value* take = arg_takes_b(L, mx, d, a, c);
        return Item{L.b.CreateSelect(take, c[0], a[0]), L.b.CreateSelect(take, c[1], a[1])};
      };
      return r;
    }
    case K::Reduce: {
      // The combine region is lowered afresh for every pair: its block arguments are bound
      // to the pair, its scalar ops emitted inline, and the yielded value read back.
      const ir::Block* body = &op.body();
      r.channels = {L.reg_type(d)};
      r.make = [](llvm::Value* e, llvm::Value*) { return Item{e}; };
      r.finish = [](const Item& x) { return x[0]; };
      r.combine = [&L, body](const Item& a, const Item& c) {
        L.bind(body->args.at(0), {a[0]});
        L.bind(body->args.at(1), {c[0]});
        L.lower_block(*body);
        const ir::Op* y = body->terminator();
        TESSEL_ASSERT(y && y->kind == K::Yield && y->num_operands() == 1, "reduce body must end in yield");
        return Item{L.scalar(y->operand(0))};
      };
      return r;
    }
    // cumsum is a scan (lower_scan.cpp); the rest are not reductions.
    case K::Constant: case K::ProgramId: case K::NumPrograms: case K::Arange: case K::Splat: case K::Broadcast:
    case K::ExpandDims: case K::Cast: case K::Add: case K::Sub: case K::Mul: case K::Div: case K::Rem:
    case K::Min: case K::Max: case K::And: case K::Or: case K::Xor: case K::Shl: case K::Shr: case K::CmpEq:
    case K::CmpNe: case K::CmpLt: case K::CmpLe: case K::CmpGt: case K::CmpGe: case K::Neg: case K::Abs:
    case K::Not: case K::Exp: case K::Exp2: case K::Log: case K::Log2: case K::Sqrt: case K::Rsqrt:
    case K::Sin: case K::Cos: case K::Tanh: case K::Sigmoid: case K::Erf: case K::Floor: case K::Ceil:
    case K::Fma: case K::Select: case K::AddPtr: case K::Load: case K::Store: case K::Rand: case K::RandN:
    case K::CumSum: case K::Reshape: case K::Trans: case K::Dot: case K::AtomicAdd: case K::AtomicMax:
    case K::For: case K::Yield: case K::Hint: case K::Bitcast: case K::Unpack:
      break;
  }
  ir::unexpected_op(__FILE__, __LINE__, "lower_reduce", op.kind);
}

// Combines neighbours pairwise until one is left (left operands hold lower coordinates).
Item tree(const Reduction& red, std::vector<Item> xs) {
  TESSEL_ASSERT(!xs.empty(), "reduction of nothing");
  while (xs.size() > 1) {
    std::vector<Item> next;
    for (size_t i = 0; i < xs.size(); i += 2) next.push_back(i + 1 < xs.size() ? red.combine(xs[i], xs[i + 1]) : xs[i]);
    xs = std::move(next);
  }
  return xs[0];
}

}  // namespace

Regs lower_reduce(Lowerer& L, const ir::Op& op, const Layout* l) {
  auto& b = L.b;
  const ir::Value* x = op.operands[0];
  const ir::Shape& shape = x->type.shape;
  const int axis = static_cast<int>(op.int_attr("axis"));
  // The layout assignment puts the result in the slice of the operand's layout. Otherwise the
  // operand is fetched in a layout whose slice is the result's or, failing that, the result
  // converts at the end.
  const Layout src = reduce_source_layout(L.layouts().of(x), l, axis);
  const Regs in = L.tile(x, src);
  const ReducePlan plan = plan_reduce(src, shape, axis);
  const Reduction red = reduction_for(L, op);

  // 1. In thread.
  std::vector<Item> items;
  for (const std::vector<int64_t>& group : plan.groups) {
    std::vector<Item> xs;
    for (int64_t r : group) {
      llvm::Value* coord = nullptr;
      if (red.needs_index) coord = L.coord(src, shape, axis, reg_dims(src, shape, r)[axis]);
      xs.push_back(red.make(in.at(r), coord));
    }
    items.push_back(tree(red, std::move(xs)));
  }

  // 2. Across the lanes holding the axis.
  for (int mask : plan.lane_masks)
    for (Item& it : items) {
      Item other;
      for (llvm::Value* v : it) other.push_back(shfl_xor(L, v, mask));
      it = red.combine(it, other);
    }

  // 3. Across the warps holding the axis: warp j's partial of result element e goes to slot
  // j * M + e (consecutive elements in consecutive banks).
  if (plan.warps > 1) {
    const int64_t m = plan.result_numel;
    llvm::Value* j = b.CreateAnd(b.CreateLShr(L.warp(), log2i(plan.warp_stride)), L.i32(plan.warps - 1));
    llvm::Value* jm = b.CreateMul(j, L.i32(m));
    std::vector<llvm::Value*> elem(items.size());
    for (size_t rr = 0; rr < items.size(); ++rr)
      elem[rr] = plan.scalar_result ? L.i32(0) : L.linear_index(plan.result, plan.result_shape, rr);
    std::vector<SmemWrite> writes;
    for (size_t rr = 0; rr < items.size(); ++rr) {
      if (!plan.scalar_result && !reg_is_owner(plan.result, plan.result_shape, rr)) continue;
      // Every lane of the warp holds the same partial: identical values to one slot.
      writes.push_back({b.CreateAdd(jm, elem[rr]), items[rr]});
    }
    std::vector<llvm::Value*> reads;
    for (size_t rr = 0; rr < items.size(); ++rr)
      for (int k = 0; k < plan.warps; ++k) reads.push_back(b.CreateAdd(elem[rr], L.i32(k * m)));
    auto got = exchange_through_smem(L, red.channels, plan.warps * m, writes, nullptr, reads);
    for (size_t rr = 0; rr < items.size(); ++rr)
      items[rr] = tree(red, std::vector<Item>(got.begin() + rr * plan.warps, got.begin() + (rr + 1) * plan.warps));
  }

  Regs out;
  for (const Item& it : items) out.push_back(red.finish(it));
  if (plan.scalar_result) return out;
  if (l && !(plan.result == *l)) return convert_layout(L, op.results[0], out, plan.result, *l);
  return out;
}

}  // namespace tessel::lowering
