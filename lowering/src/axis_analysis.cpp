// Axis analysis driver: seeds parameters from their specialisation, walks ops in order.
#include "tessel/lowering/axis_analysis.hpp"

#include <fmt/format.h>

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
  ir::walk(f.body, [&](const ir::Op& op) {
    if (op.kind == ir::OpKind::For) {
      // The induction variable steps from lo by step; carried values are not tracked.
      ir::ForOp loop{op};
      AxisInfo iv = AxisInfo::unknown(0);
      iv.divisibility[0] = std::min(info_[loop.lo()->id].divisibility[0], info_[loop.step()->id].divisibility[0]);
      info_[loop.induction_var()->id] = iv;
      for (int i = 0; i < loop.num_carried(); ++i)
        info_[loop.carried(i)->id] = AxisInfo::unknown(loop.carried(i)->type.rank());
      for (const ir::Value* r : op.results) info_[r->id] = AxisInfo::unknown(r->type.rank());
      return;
    }
    // A reduce body's arguments are arbitrary scalars (the walk visits the body next).
    for (const auto& region : op.regions)
      for (const ir::Value* a : region->args) info_[a->id] = AxisInfo::unknown(a->type.rank());
    if (op.results.empty()) return;
    std::vector<const AxisInfo*> in;
    for (const ir::Value* o : op.operands) in.push_back(&info_[o->id]);
    info_[op.results[0]->id] = axis_transfer(op, in);
  });
}

const AxisInfo& AxisAnalysis::at(const ir::Value* v) const {
  TESSEL_ASSERT(v->id < info_.size() && info_[v->id].dims() > 0, "no axis info for value");
  return info_[v->id];
}

}  // namespace tessel::lowering
