#include "plan/dot_plan.hpp"

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

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

namespace {

// The kernel arguments an address is computed from (through loop-carried values too) that the
// launch did not find divisible by 16: pointers not 16-byte aligned, integers not multiples of
// 16. By name, in parameter order.
std::vector<std::string> unaligned_arguments(const ir::Function& f, const ir::Value* ptr) {
  std::set<const ir::Value*> seen;
  std::vector<const ir::Value*> todo{ptr};
  std::set<int> params;
  while (!todo.empty()) {
    const ir::Value* v = todo.back();
    todo.pop_back();
    if (!seen.insert(v).second) continue;
    if (v->def) {
      for (const ir::Value* o : v->def->operands) todo.push_back(o);
    } else if (v->block == &f.body) {
      const ir::Param& p = f.params.at(static_cast<size_t>(v->index));
      if (!p.spec.div16 && !p.spec.equal1 && (v->type.dtype.ptr || v->type.dtype.is_int())) params.insert(v->index);
    } else if (const ir::Op* loop = v->block->parent_op; loop && loop->kind == ir::OpKind::For) {
      const ir::ForOp fo{*loop};
      if (v->index == 0) {  // the induction variable
        todo.push_back(fo.lo());
        todo.push_back(fo.step());
      } else {  // a carried value: where it starts, and its update
        todo.push_back(fo.init(v->index - 1));
        todo.push_back(fo.yield().operands.at(static_cast<size_t>(v->index - 1)));
      }
    }
  }
  std::vector<std::string> out;
  for (int i : params) out.push_back(f.params.at(static_cast<size_t>(i)).name);
  return out;
}

}  // namespace

std::string copy_mismatch(const ir::Function& f, const ir::Op& load, int operand, const MmaPlan& mma, int uses,
                          const AxisAnalysis& axis, const Layout& l) {
  const ir::Value* v = load.results[0];
  if (v->type.rank() != 2) return "not a 2-D tile";
  if (uses != 1) return "its tile has other users than the dot";
  if (mma.in.kind == MmaKind::TF32) return "tf32 operands are rounded on their way through registers";
  if (operand == 0 && mma.a_in_registers) return "the dot reads it from registers";
  // The copies move 16-byte runs along the staging's rows: the layout's contiguous dim must be
  // the one the staging lays along its rows (k for A and a [N][K] B, n for a [K][N] B).
  const int row_bytes_dim = operand == 1 && mma.b_by_rows_of_n ? 0 : 1;
  if (fastest_tile_dim(l) != row_bytes_dim)
    return fmt::format("its pointers are contiguous along dimension {}, the staging's rows run along dimension {}",
                       fastest_tile_dim(l), row_bytes_dim);
  ir::LoadOp ld{load};
  if (ld.other() && !is_zero_constant(ld.other())) return "its `other` is not zero (cp.async fills zeros)";
  if (copies_16_bytes(axis, load, l)) return "";
  // The limit that binds (access_limits, in elements), as bytes against the copy's 16.
  const int64_t eb = v->type.dtype.bytes();
  const AccessLimits a = access_limits(axis, ld.ptr(), ld.mask(), l, v->type.shape, eb);
  auto bytes = [](int64_t n) { return fmt::format("{} byte{}", n, n == 1 ? "" : "s"); };
  if (a.run * eb < 16)
    return fmt::format("its layout gives a thread {} contiguous, not the 16 a copy moves", bytes(a.run * eb));
  if (a.contiguity * eb < 16)
    return fmt::format("its pointers are proven contiguous over {} along dimension {}, not the 16 a copy moves (that "
                       "dimension's stride must be known to be 1: a launch with a unit stride is specialised so)",
                       bytes(a.contiguity * eb), a.fast);
  if (a.alignment * eb < 16) {
    std::string why = fmt::format("its pointers are proven aligned to {} only, not the 16 a copy needs",
                                  bytes(axis.at(ld.ptr()).divisibility[a.fast]));
    const std::vector<std::string> args = unaligned_arguments(f, ld.ptr());
    if (!args.empty())
      why += fmt::format(": at this launch {} {} not divisible by 16 (pointers 16-byte aligned, integers multiples "
                         "of 16)",
                         fmt::join(args, ", "), args.size() == 1 ? "is" : "are");
    return why;
  }
  return "its mask is not proven uniform over the 16-byte runs a copy moves (a mask bound that the launch "
         "found divisible by 16 is)";
}

}  // namespace tessel::lowering
