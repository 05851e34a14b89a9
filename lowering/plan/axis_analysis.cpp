// Axis analysis driver: seeds parameters from their specialisation, walks ops in order.
#include "plan/axis_analysis.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "tessel/ir/accessors.hpp"

namespace tessel::lowering {

int64_t pow2_divisor(int64_t v) {
  if (v == 0) return kMaxDivisibility;
  uint64_t u = static_cast<uint64_t>(v);
  uint64_t p = u & (~u + 1);
  return p >= static_cast<uint64_t>(kMaxDivisibility) ? kMaxDivisibility : static_cast<int64_t>(p);
}

AxisInfo AxisInfo::unknown(int rank) {
  int n = rank > 0 ? rank : 1;
  return AxisInfo{std::vector<int64_t>(n, 1), std::vector<int64_t>(n, 1), std::vector<int64_t>(n, 1), {}};
}

std::string AxisInfo::str() const {
  std::string s = fmt::format("{{contig=[{}], div=[{}], const=[{}]", fmt::join(contiguity, ","),
                              fmt::join(divisibility, ","), fmt::join(constancy, ","));
  if (constant) s += fmt::format(", value={}", *constant);
  return s + "}";
}

AxisAnalysis::AxisAnalysis(const ir::Function& f) : info_(f.num_values()) {
  for (size_t i = 0; i < f.body.args.size(); ++i) {
    const ir::Value* a = f.body.args[i];
    AxisInfo ai = AxisInfo::unknown(a->type.rank());
    const ir::ParamSpec& spec = f.params.at(i).spec;
    if (a->type.dtype.is_int() || a->type.dtype.ptr) {
      if (spec.equal1 && !a->type.dtype.ptr) ai.constant = 1;
      else if (spec.div16) ai.divisibility.assign(ai.dims(), 16);
    }
    info_[a->id] = ai;
  }
  block(f.body);
}

namespace {
// What holds for both a and b (the info of a loop-carried value on entry and after a trip).
// Constancy: the smaller group. Contiguity: the smaller run; divisibility is kept only where
// both runs agree (it is stated for the positions that start a run, which move when the
// run length changes).
AxisInfo join(const AxisInfo& a, const AxisInfo& b) {
  if (a == b) return a;
  AxisInfo o = a;
  for (int d = 0; d < o.dims(); ++d) {
    o.constancy[d] = std::min(a.constancy[d], b.constancy[d]);
    o.contiguity[d] = std::min(a.contiguity[d], b.contiguity[d]);
    o.divisibility[d] = a.contiguity[d] == b.contiguity[d] ? std::min(a.divisibility[d], b.divisibility[d]) : 1;
  }
  if (a.constant != b.constant) o.constant.reset();
  return o;
}
}  // namespace

void AxisAnalysis::block(const ir::Block& b) {
  for (const auto& op_ptr : b.ops) {
    const ir::Op& op = *op_ptr;
    if (op.kind == ir::OpKind::For) {
      loop(op);
      continue;
    }
    // A reduce body's arguments are arbitrary scalars.
    for (const auto& region : op.regions) {
      for (const ir::Value* a : region->args) info_[a->id] = AxisInfo::unknown(a->type.rank());
      block(*region);
    }
    if (op.results.empty()) continue;
    std::vector<const AxisInfo*> in;
    for (const ir::Value* o : op.operands) in.push_back(&info_[o->id]);
    info_[op.results[0]->id] = axis_transfer(op, in);
  }
}

void AxisAnalysis::loop(const ir::Op& op) {
  // The induction variable steps from lo by step. A carried value starts as its init's info
  // and is joined with what the body yields until nothing changes (pointer tiles advanced by
  // a splat keep their contiguity, so loads in a K loop stay vectorised); after a few rounds
  // without a fixed point the carried values are taken as unknown.
  ir::ForOp lp{op};
  AxisInfo iv = AxisInfo::unknown(0);
  iv.divisibility[0] = std::min(info_[lp.lo()->id].divisibility[0], info_[lp.step()->id].divisibility[0]);
  info_[lp.induction_var()->id] = iv;
  const int nc = lp.num_carried();
  for (int i = 0; i < nc; ++i) info_[lp.carried(i)->id] = info_[lp.init(i)->id];
  constexpr int kRounds = 4;
  for (int round = 0;; ++round) {
    block(lp.body());
    bool changed = false;
    for (int i = 0; i < nc; ++i) {
      AxisInfo& c = info_[lp.carried(i)->id];
      AxisInfo j = round + 1 < kRounds ? join(c, info_[lp.yield().operand(i)->id])
                                       : AxisInfo::unknown(lp.carried(i)->type.rank());
      if (!(j == c)) {
        c = std::move(j);
        changed = true;
      }
    }
    if (!changed) break;
  }
  for (int i = 0; i < nc; ++i) info_[op.results[i]->id] = info_[lp.carried(i)->id];
}

const AxisInfo& AxisAnalysis::at(const ir::Value* v) const {
  TESSEL_ASSERT(v->id < info_.size() && info_[v->id].dims() > 0, "no axis info for value");
  return info_[v->id];
}

}  // namespace tessel::lowering
