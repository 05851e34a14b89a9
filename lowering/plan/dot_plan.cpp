#include "plan/dot_plan.hpp"

#include <cmath>

#include "plan/access.hpp"
#include "tessel/ir/accessors.hpp"
#include "tessel/ir/error.hpp"

namespace tessel::lowering {

std::optional<MmaPlan> plan_dot(const ir::Op& op, const Options& o, const LayoutAssignment& layouts) {
  const ir::Value* a = op.operands[0];
  const ir::Value* bv = op.operands[1];
  const ir::Value* acc = op.operands[2];
  TESSEL_ASSERT(a->type.rank() == 2 && bv->type.rank() == 2 && acc->type.rank() == 2, "dot operands are 2-D");
  const bool tf32 = op.int_attr("allow_tf32") != 0;  // required by ops.def
  auto in = mma_instr_for(a->type.dtype.scalar, bv->type.dtype.scalar, acc->type.dtype.scalar, tf32);
  if (!in || !o.target.has_mma()) return std::nullopt;
  const Layout& lb = layouts.of(bv);
  const bool b_k_major = lb.rank() == 2 && fastest_tile_dim(lb) == 0;
  auto p = plan_mma(*in, a->type.shape[0], bv->type.shape[1], a->type.shape[1], layouts.of(op.results[0]),
                    o.target.has_wgmma(), b_k_major, &layouts.of(a), &lb);
  // fp8 runs on wgmma (sm_90a) or on mma.sync where the target has its fp8 form; else on FMA.
  if (p && in->is_fp8() && !p->wgmma && !o.target.has_fp8_mma()) return std::nullopt;
  return p;
}

const ir::Op* sole_dot_user(const ir::Op& load, int& operand) {
  const ir::Value* v = load.results[0];
  bool after = false;
  for (const auto& o : load.parent->ops) {
    if (o.get() == &load) {
      after = true;
      continue;
    }
    if (!after) continue;
    if (o->kind == ir::OpKind::Dot) {
      for (int i = 0; i < 2; ++i)
        if (o->operands[i] == v) {
          operand = i;
          return o.get();
        }
    }
    const ir::Effect e = o->info().effect;
    if (e == ir::Effect::Writes || e == ir::Effect::Loop) return nullptr;
  }
  return nullptr;
}

bool is_zero_constant(const ir::Value* v) {
  const ir::Op* d = v->def;
  if (d && d->kind == ir::OpKind::Splat) d = d->operands[0]->def;
  if (!d || d->kind != ir::OpKind::Constant) return false;
  ir::ConstantOp c{*d};
  return c.is_float() ? c.float_value() == 0.0 && !std::signbit(c.float_value()) : c.int_value() == 0;
}

bool stages_by_copy(const ir::Op& load, int operand, const MmaPlan& mma, int uses, const AxisAnalysis& axis,
                    const Layout& l) {
  const ir::Value* v = load.results[0];
  if (v->type.rank() != 2 || uses != 1) return false;
  if (mma.in.kind == MmaKind::TF32 || (operand == 0 && mma.a_in_registers)) return false;
  // The copies move 16-byte runs along the staging's rows: the layout's contiguous dim must be
  // the one the staging lays along its rows (k for A and a [N][K] B, n for a [K][N] B).
  const int row_bytes_dim = operand == 1 && mma.b_by_rows_of_n ? 0 : 1;
  if (fastest_tile_dim(l) != row_bytes_dim) return false;
  ir::LoadOp ld{load};
  if (ld.other() && !is_zero_constant(ld.other())) return false;
  return copies_16_bytes(axis, load, l);
}

}  // namespace tessel::lowering
