// cumsum: an inclusive prefix sum along one axis, in the operand's own layout.
//
// Following plan_scan (reduction_layout.hpp), for each line of registers along the axis:
//  1. each run (one footprint repetition) is scanned in the thread;
//  2. run totals are scanned across the lanes of the axis with shfl.sync.up (Hillis-Steele),
//     giving each lane the exclusive prefix of the lanes before it and the warp's total;
//  3. warp totals meet in shared memory (one barrier): each thread adds the totals of the
//     warps before it and of all warps in earlier repetitions.
// Every add rounds to the element type (f16/bf16 through f32, as elementwise adds do) and
// integers wrap, like the interpreter; only the order of the adds differs.
#include "lowerer.hpp"
#include "plan/reduction_layout.hpp"

namespace tessel::lowering {
namespace {


}  // namespace

Regs lower_scan(Lowerer& L, const ir::Op& op, const Layout* l) {
  if (op.kind != ir::OpKind::CumSum) ir::unexpected_op(__FILE__, __LINE__, "lower_scan", op.kind);
  auto& b = L.b;
  const ir::Value* x = op.operands[0];
  const ir::Shape& shape = x->type.shape;
  const ir::DType d = x->type.dtype;
  const int axis = static_cast<int>(op.int_attr("axis"));
  TESSEL_ASSERT(l != nullptr, "cumsum of a scalar");
  const Regs in = L.tile(x, *l);
  const ScanPlan plan = plan_scan(*l, shape, axis);
  llvm::Type* ct = L.reg_type(d);
  llvm::Value* zero = llvm::Constant::getNullValue(ct);
  auto add = [&](llvm::Value* a, llvm::Value* c) -> llvm::Value* {
    if (a == zero) return c;
    if (c == zero) return a;
    if (!d.is_float()) return b.CreateAdd(a, c);
    return from_compute(L, b.CreateFAdd(to_compute(L, a, d), to_compute(L, c, d)), d);
  };

  const size_t nl = plan.lines.size();
  const int64_t reps = plan.reps;
  Regs out(in.size(), nullptr);
  // local[line][rep]: the run's inclusive prefixes; total: the run's sum.
  std::vector<std::vector<std::vector<llvm::Value*>>> local(nl, std::vector<std::vector<llvm::Value*>>(reps));
  std::vector<std::vector<llvm::Value*>> total(nl, std::vector<llvm::Value*>(reps));
  for (size_t li = 0; li < nl; ++li)
    for (int64_t rep = 0; rep < reps; ++rep) {
      llvm::Value* acc = nullptr;
      for (int64_t r : plan.lines[li][rep].regs) {
        llvm::Value* v = in.at(r);
        acc = acc ? add(acc, v) : v;
        local[li][rep].push_back(acc);
      }
      total[li][rep] = acc;
    }

  // 2. Lanes: inclusive scan of run totals, then the exclusive prefix and the warp total.
  std::vector<std::vector<llvm::Value*>> lane_excl(nl, std::vector<llvm::Value*>(reps, zero));
  std::vector<std::vector<llvm::Value*>> warp_total = total;
  if (plan.lanes > 1) {
    const int ls = plan.lane_stride;
    llvm::Value* lp = b.CreateAnd(b.CreateLShr(L.lane(), log2i(ls)), L.i32(plan.lanes - 1));
    llvm::Value* first = b.CreateICmpEQ(lp, L.i32(0));
    llvm::Value* last_lane = b.CreateAdd(L.lane(), b.CreateMul(b.CreateSub(L.i32(plan.lanes - 1), lp), L.i32(ls)));
    for (size_t li = 0; li < nl; ++li)
      for (int64_t rep = 0; rep < reps; ++rep) {
        llvm::Value* s = total[li][rep];
        for (int delta = 1; delta < plan.lanes; delta <<= 1) {
          llvm::Value* y = shfl_up(L, s, delta * ls);
          s = b.CreateSelect(b.CreateICmpUGE(lp, L.i32(delta)), add(s, y), s);
        }
        lane_excl[li][rep] = b.CreateSelect(first, zero, shfl_up(L, s, ls));
        warp_total[li][rep] = shfl_idx(L, s, last_lane);
      }
  }

  // 3. Warps: totals of (rep, warp j, other coordinates) at slot (rep * W + j) * O + other.
  std::vector<std::vector<llvm::Value*>> warp_prefix(nl, std::vector<llvm::Value*>(reps, zero));
  std::vector<std::vector<llvm::Value*>> rep_total = warp_total;
  if (plan.warps > 1) {
    const int w = plan.warps;
    const int64_t o = plan.other_numel;
    llvm::Value* j = b.CreateAnd(b.CreateLShr(L.warp(), log2i(plan.warp_stride)), L.i32(w - 1));
    std::vector<SmemWrite> writes;
    std::vector<llvm::Value*> reads;
    for (size_t li = 0; li < nl; ++li) {
      const int64_t r0 = plan.lines[li][0].regs[0];
      std::vector<int64_t> rd = reg_dims(*l, shape, r0);
      llvm::Value* other = L.i32(0);
      for (int dd = 0; dd < static_cast<int>(shape.size()); ++dd)
        if (dd != axis) other = b.CreateAdd(b.CreateMul(other, L.i32(shape[dd])), L.coord(*l, shape, dd, rd[dd]));
      const bool owner = reg_is_owner(*l, shape, r0);
      for (int64_t rep = 0; rep < reps; ++rep) {
        llvm::Value* row = b.CreateMul(b.CreateAdd(L.i32(rep * w), j), L.i32(o));
        if (owner) writes.push_back({b.CreateAdd(row, other), {warp_total[li][rep]}});
        for (int k = 0; k < w; ++k) reads.push_back(b.CreateAdd(other, L.i32((rep * w + k) * o)));
      }
    }
    auto got = exchange_through_smem(L, {ct}, reps * w * o, writes, nullptr, reads);
    size_t at = 0;
    for (size_t li = 0; li < nl; ++li)
      for (int64_t rep = 0; rep < reps; ++rep) {
        llvm::Value* before = zero;  // warps k < j
        llvm::Value* all = zero;
        for (int k = 0; k < w; ++k) {
          llvm::Value* t = got[at++][0];
          all = add(all, t);
          if (k < w - 1) before = b.CreateSelect(b.CreateICmpULT(L.i32(k), j), add(before, t), before);
        }
        warp_prefix[li][rep] = before;
        rep_total[li][rep] = all;
      }
  }

  for (size_t li = 0; li < nl; ++li) {
    llvm::Value* carry = zero;
    for (int64_t rep = 0; rep < reps; ++rep) {
      llvm::Value* base = add(carry, add(warp_prefix[li][rep], lane_excl[li][rep]));
      const ScanRun& run = plan.lines[li][rep];
      for (size_t i = 0; i < run.regs.size(); ++i) out[run.regs[i]] = add(base, local[li][rep][i]);
      carry = add(carry, rep_total[li][rep]);
    }
  }
  for (auto [k, src] : plan.copies) out[k] = out.at(src);
  for (llvm::Value* v : out) TESSEL_ASSERT(v != nullptr, "cumsum left a register unset");
  return out;
}

}  // namespace tessel::lowering
