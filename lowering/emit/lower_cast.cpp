// Casts between element types with the interpreter's semantics.
//
// int -> int: sign-extend or truncate (i1 zero-extends: true is 1); x -> i1: x != 0;
// float -> int: truncate toward zero, saturating, NaN -> 0 (llvm.fptosi.sat, PTX
// cvt.rzi.sat); int -> float: round to nearest; float -> float: round to nearest;
// ptr <-> int: the address; ptr -> ptr: the same address.
#include <llvm/IR/Intrinsics.h>

#include "lowerer.hpp"

namespace tessel::lowering {
namespace {

llvm::Value* cast_one(Lowerer& L, llvm::Value* x, ir::DType from, ir::DType to) {
  auto& b = L.b;
  llvm::Type* tt = L.reg_type(to);
  if (from == to) return x;
  if (from.ptr || to.ptr) {
    if (from.ptr && to.ptr) return x;
    if (from.ptr) {
      if (to.is_bool()) return b.CreateICmpNE(x, llvm::ConstantPointerNull::get(L.global_ptr()));
      return b.CreateIntCast(b.CreatePtrToInt(x, b.getInt64Ty()), tt, true);
    }
    TESSEL_ASSERT(from.is_int(), "only integers cast to pointers");
    llvm::Value* wide = from.is_bool() ? b.CreateZExt(x, b.getInt64Ty()) : b.CreateSExtOrTrunc(x, b.getInt64Ty());
    return b.CreateIntToPtr(wide, tt);
  }
  if (to.is_bool()) {
    if (from.is_float()) return b.CreateFCmpUNE(to_compute(L, x, from), llvm::ConstantFP::get(to_compute(L, x, from)->getType(), 0.0));
    return b.CreateICmpNE(x, llvm::ConstantInt::get(x->getType(), 0));
  }
  if (from.is_int() && to.is_int())
    return from.is_bool() ? b.CreateZExt(x, tt) : b.CreateSExtOrTrunc(x, tt);
  if (from.is_int() && to.is_float()) {
    // Convert straight to the target width: one rounding (f16 via f32 could round twice).
    return from.is_bool() ? b.CreateUIToFP(x, tt) : b.CreateSIToFP(x, tt);
  }
  if (from.is_float() && to.is_int()) {
    llvm::Value* f = to_compute(L, x, from);  // f16/bf16 widen exactly first
    return L.intrinsic(llvm::Intrinsic::fptosi_sat, {tt, f->getType()}, {f});
  }
  // float -> float
  const int fw = ir::bit_width(from.scalar), tw = ir::bit_width(to.scalar);
  if (is_half(from) && is_half(to)) return b.CreateFPTrunc(b.CreateFPExt(x, b.getFloatTy()), tt);  // exact widening, one rounding
  return fw < tw ? b.CreateFPExt(x, tt) : b.CreateFPTrunc(x, tt);
}

}  // namespace

Regs lower_cast(Lowerer& L, const ir::Op& op, const Layout* l) {
  Regs in = L.operand(op, 0, l);
  const ir::DType from = op.operands[0]->type.dtype, to = op.results[0]->type.dtype;
  Regs out(in.size());
  for (size_t k = 0; k < in.size(); ++k) out[k] = cast_one(L, in[k], from, to);
  return out;
}

}  // namespace tessel::lowering
