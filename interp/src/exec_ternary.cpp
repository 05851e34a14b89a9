// Ternary elementwise ops: fma (fused multiply-add) and select.
#include <cmath>

#include "elementwise.hpp"

namespace tessel::interp {
namespace {

void fma(Machine& m, const ir::Op& op) {
  require_uniform(m, op, 3);
  const ir::Value* r = op.result();
  if (!r->type.dtype.is_float()) m.malformed(op, "takes floats, not " + r->type.dtype.str());
  const std::vector<double>& a = m.in(op, 0).f;
  const std::vector<double>& b = m.in(op, 1).f;
  const std::vector<double>& c = m.in(op, 2).f;
  std::vector<double>& out = m.out(r).f;
  if (r->type.dtype.scalar == ir::Scalar::f32) {
    // One rounding, as the hardware's fma.rn.f32 does (through double it would round twice).
    for (size_t k = 0; k < out.size(); ++k)
      out[k] = std::fma(static_cast<float>(a[k]), static_cast<float>(b[k]), static_cast<float>(c[k]));
    return;
  }
  with_rounding(r->type.dtype.scalar, [&](auto round) {
    for (size_t k = 0; k < out.size(); ++k) out[k] = round(std::fma(a[k], b[k], c[k]));
  });
}

void select(Machine& m, const ir::Op& op) {
  const ir::Value* r = op.result();
  require_same_numel(m, op, r->type.numel());
  if (!op.operand(0)->type.dtype.is_bool() || op.operand(1)->type.dtype != r->type.dtype ||
      op.operand(2)->type.dtype != r->type.dtype)
    m.malformed(op, fmt::format("select needs (i1, T, T), got ({}, {}, {})",
                                op.operand(0)->type.str(), op.operand(1)->type.str(),
                                op.operand(2)->type.str()));
  const std::vector<int64_t>& c = m.in(op, 0).i;
  const Tile& a = m.in(op, 1);
  const Tile& b = m.in(op, 2);
  Tile& out = m.out(r);
  if (holds_floats(r->type.dtype)) {
    for (size_t k = 0; k < out.f.size(); ++k) out.f[k] = c[k] ? a.f[k] : b.f[k];
  } else {
    for (size_t k = 0; k < out.i.size(); ++k) out.i[k] = c[k] ? a.i[k] : b.i[k];
  }
}

}  // namespace

void exec_ternary(Machine& m, const ir::Op& op) {
  if (op.kind == ir::OpKind::Fma) return fma(m, op);
  if (op.kind == ir::OpKind::Select) return select(m, op);
  internal_error(__FILE__, __LINE__, "exec_ternary on " + std::string(op.name()));
}

}  // namespace tessel::interp
