// Sources and shape ops: constant, program_id, num_programs, arange, splat, broadcast, expand_dims.
#include <llvm/IR/Constants.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "tessel/ir/accessors.hpp"
#include "lowerer.hpp"

namespace tessel::lowering {
namespace {

llvm::Value* constant_of(Lowerer& L, const ir::Op& op) {
  ir::ConstantOp c{op};
  ir::DType d = op.results[0]->type.dtype;
  llvm::Type* t = L.reg_type(d);
  if (d.ptr) {
    auto* i = llvm::ConstantInt::get(L.b.getInt64Ty(), static_cast<uint64_t>(c.is_float() ? 0 : c.int_value()));
    return llvm::ConstantExpr::getIntToPtr(i, t);
  }
  if (d.is_fp8()) return fp8_constant(L, op, c.is_float() ? c.float_value() : static_cast<double>(c.int_value()));
  if (d.is_float()) return llvm::ConstantFP::get(t, c.is_float() ? c.float_value() : static_cast<double>(c.int_value()));
  if (d.is_bool()) return L.b.getInt1(c.is_float() ? c.float_value() != 0 : c.int_value() != 0);
  int64_t v = c.is_float() ? static_cast<int64_t>(c.float_value()) : c.int_value();
  return llvm::ConstantInt::get(t, static_cast<uint64_t>(v), true);
}

llvm::Value* special_register(Lowerer& L, const ir::Op& op, bool count) {
  static constexpr llvm::Intrinsic::ID kIds[2][3] = {
      {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
       llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z},
      {llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y,
       llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_z}};
  int64_t axis = op.int_attr("axis");
  TESSEL_ASSERT(axis >= 0 && axis < 3, "program axis must be 0, 1 or 2");
  llvm::Value* v = L.intrinsic(kIds[count ? 1 : 0][axis], {}, {});
  const int per_cta = L.opts.programs_per_cta;
  if (axis != 0 || per_cta == 1) return v;
  // Several programs per CTA along x: program (ctaid.x * per_cta + group), per_cta * nctaid.x of them.
  // In 2-CTA clusters (Lowerer::cluster_pair) programs 2j and 2j + 1 are the same group of the
  // cluster's two CTAs (lang::multicast pairs them): (ctaid.x / 2) * 2 per_cta + 2 group + ctaid.x % 2.
  if (L.cluster_pair() && !count) {
    auto& b = L.b;
    llvm::Value* cluster = b.CreateMul(b.CreateLShr(v, L.i32(1)), L.i32(2 * per_cta));
    return b.CreateAdd(cluster, b.CreateAdd(b.CreateShl(L.group(), L.i32(1)), b.CreateAnd(v, L.i32(1))));
  }
  v = L.b.CreateMul(v, L.i32(per_cta));
  return count ? v : L.b.CreateAdd(v, L.group());
}

}  // namespace

Regs lower_shape(Lowerer& L, const ir::Op& op, const Layout* l) {
  using K = ir::OpKind;
  const int64_t n = L.result_regs(op, l);
  const ir::Type& rt = op.results[0]->type;
  switch (op.kind) {
    case ir::OpKind::Constant: return Regs(n, constant_of(L, op));
    case ir::OpKind::ProgramId: return {special_register(L, op, false)};
    case ir::OpKind::NumPrograms: return {special_register(L, op, true)};
    case ir::OpKind::Arange: {
      ir::ArangeOp a{op};
      Regs r(n);
      for (int64_t k = 0; k < n; ++k) r[k] = L.b.CreateAdd(L.coord(*l, rt.shape, 0, k), L.i32(a.start()));
      return r;
    }
    case ir::OpKind::Splat: return Regs(n, L.scalar(op.operands[0]));
    case ir::OpKind::Broadcast: {
      const ir::Value* src = op.operands[0];
      if (src->type.is_scalar()) return Regs(n, L.scalar(src));
      Regs in = L.operand(op, 0, l);
      Layout sl = *operand_layout(op, 0, *l);
      const ir::Shape& ss = src->type.shape;
      const int extra = rt.rank() - src->type.rank();
      Regs r(n);
      for (int64_t k = 0; k < n; ++k) {
        std::vector<int64_t> rd = reg_dims(*l, rt.shape, k), sd(ss.size());
        for (size_t d = 0; d < ss.size(); ++d) sd[d] = ss[d] == 1 ? 0 : rd[d + extra];
        r[k] = in.at(reg_index(sl, ss, sd));
      }
      return r;
    }
    case ir::OpKind::ExpandDims: {
      const ir::Value* src = op.operands[0];
      if (src->type.is_scalar()) return Regs(n, L.scalar(src));
      Regs in = L.operand(op, 0, l);
      Layout sl = *operand_layout(op, 0, *l);
      const int axis = static_cast<int>(op.int_attr("axis"));
      Regs r(n);
      for (int64_t k = 0; k < n; ++k) {
        std::vector<int64_t> rd = reg_dims(*l, rt.shape, k);
        rd.erase(rd.begin() + axis);
        r[k] = in.at(reg_index(sl, src->type.shape, rd));
      }
      return r;
    }
    case K::Cast: case K::Add: case K::Sub: case K::Mul:
    case K::Div: case K::Rem: case K::Min: case K::Max:
    case K::And: case K::Or: case K::Xor: case K::Shl:
    case K::Shr: case K::CmpEq: case K::CmpNe: case K::CmpLt:
    case K::CmpLe: case K::CmpGt: case K::CmpGe: case K::Neg:
    case K::Abs: case K::Not: case K::Exp: case K::Exp2:
    case K::Log: case K::Log2: case K::Sqrt: case K::Rsqrt:
    case K::Sin: case K::Cos: case K::Tanh: case K::Sigmoid:
    case K::Erf: case K::Floor: case K::Ceil: case K::Fma:
    case K::Select: case K::AddPtr: case K::Load: case K::Store:
    case K::Rand: case K::RandN: case K::ReduceSum: case K::ReduceMax:
    case K::ReduceMin: case K::ArgMax: case K::ArgMin: case K::Reduce:
    case K::CumSum: case K::Reshape: case K::Trans: case K::Dot:
    case K::AtomicAdd: case K::AtomicMax: case K::For: case K::Yield:
    case K::Hint: case K::Bitcast: case K::Unpack:
      break;
  }
  ir::unexpected_op(__FILE__, __LINE__, "lower_shape", op.kind);
}

}  // namespace tessel::lowering
