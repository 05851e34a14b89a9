// Casts between element types with the interpreter's semantics.
//
// int -> int: sign-extend (uN and i1 zero-extend: true is 1) or truncate; x -> i1: x != 0;
// float -> int: truncate toward zero, saturating, NaN -> 0 (llvm.fptosi.sat / fptoui.sat, PTX
// cvt.rzi.sat); int -> float: round to nearest; float -> float: round to nearest;
// ptr <-> int: the address; ptr -> ptr: the same address.
// fp8 (f8e4m3, f8e5m2; i8 registers) goes through f32, two elements per instruction (PTX
// cvt.rn.satfinite.e4m3x2.f32 and cvt.rn.f16x2.e4m3x2, sm_89+): to fp8 rounds to nearest and
// saturates to the largest finite value; from f64 it rounds twice (through f32).
#include <fmt/format.h>

#include <cmath>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Intrinsics.h>

#include "lowerer.hpp"

namespace tessel::lowering {
namespace {

const char* fp8_ptx(ir::Scalar s) { return s == ir::Scalar::f8e4m3 ? "e4m3x2" : "e5m2x2"; }

// Two f32 values as one fp8 pair: (lo, hi) -> the i16 whose low byte is lo's.
llvm::Value* f32x2_to_fp8x2(Lowerer& L, llvm::Value* lo, llvm::Value* hi, ir::Scalar s) {
  auto& b = L.b;
  auto* fty = llvm::FunctionType::get(b.getInt16Ty(), {b.getFloatTy(), b.getFloatTy()}, false);
  // PTX packs the first source into the upper byte.
  const std::string text = fmt::format("cvt.rn.satfinite.{}.f32 $0, $1, $2;", fp8_ptx(s));
  return b.CreateCall(llvm::InlineAsm::get(fty, text, "=h,f,f", false), {hi, lo});
}

// One fp8 pair (i16, low byte first) as two f32 values (exact).
std::pair<llvm::Value*, llvm::Value*> fp8x2_to_f32x2(Lowerer& L, llvm::Value* pair, ir::Scalar s) {
  auto& b = L.b;
  auto* fty = llvm::FunctionType::get(b.getInt32Ty(), {b.getInt16Ty()}, false);
  const std::string text = fmt::format("cvt.rn.f16x2.{} $0, $1;", fp8_ptx(s));
  llvm::Value* h2 = b.CreateCall(llvm::InlineAsm::get(fty, text, "=r,h", false), {pair});
  llvm::Value* v = b.CreateBitCast(h2, llvm::FixedVectorType::get(b.getHalfTy(), 2));
  return {b.CreateFPExt(b.CreateExtractElement(v, uint64_t{0}), b.getFloatTy()),
          b.CreateFPExt(b.CreateExtractElement(v, uint64_t{1}), b.getFloatTy())};
}

void require_fp8_convert(Lowerer& L, const ir::Op& op) {
  if (!L.opts.target.has_fp8_convert())
    throw CompileError(op.loc, fmt::format("kernel '{}': cast between {} and {} needs the fp8 conversions of "
                                           "sm_90 (PTX ISA 7.8) or sm_89 with PTX ISA 8.1 (target {}); load the "
                                           "bytes as u8 and decode them with bit operations instead",
                                           L.irf.name, op.operands[0]->type.dtype.str(),
                                           op.results[0]->type.dtype.str(), L.opts.target.arch()));
}

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
  const bool zext = from.is_bool() || from.is_unsigned();
  if (from.is_int() && to.is_int()) return zext ? b.CreateZExtOrTrunc(x, tt) : b.CreateSExtOrTrunc(x, tt);
  if (from.is_int() && to.is_float()) {
    // Convert straight to the target width: one rounding (f16 via f32 could round twice).
    return zext ? b.CreateUIToFP(x, tt) : b.CreateSIToFP(x, tt);
  }
  if (from.is_float() && to.is_int()) {
    llvm::Value* f = to_compute(L, x, from);  // f16/bf16 widen exactly first
    return L.intrinsic(to.is_unsigned() ? llvm::Intrinsic::fptoui_sat : llvm::Intrinsic::fptosi_sat,
                       {tt, f->getType()}, {f});
  }
  // float -> float
  const int fw = ir::bit_width(from.scalar), tw = ir::bit_width(to.scalar);
  if (is_half(from) && is_half(to)) return b.CreateFPTrunc(b.CreateFPExt(x, b.getFloatTy()), tt);  // exact widening, one rounding
  return fw < tw ? b.CreateFPExt(x, tt) : b.CreateFPTrunc(x, tt);
}

}  // namespace

llvm::Value* fp8_constant(Lowerer& L, const ir::Op& op, double v) {
  if (v == 0 && !std::signbit(v)) return L.b.getInt8(0);
  require_fp8_convert(L, op);
  llvm::Value* f = llvm::ConstantFP::get(L.b.getFloatTy(), v);
  return L.b.CreateTrunc(f32x2_to_fp8x2(L, f, f, op.results[0]->type.dtype.scalar), L.b.getInt8Ty());
}

llvm::Value* fp8_to_f32(Lowerer& L, llvm::Value* byte, ir::Scalar s) {
  auto& b = L.b;
  if (L.opts.target.has_fp8_convert()) return fp8x2_to_f32x2(L, b.CreateZExt(byte, b.getInt16Ty()), s).first;
  // Decoded with integer operations (targets without the cvt pairs). e5m2 is the top byte of
  // an f16. e4m3: |x| = m * 2^-9 for e = 0, else (8 + m) * 2^(e - 1) * 2^-9, exact in f32;
  // S.1111.111 is NaN.
  llvm::Value* x = b.CreateZExt(byte, b.getInt32Ty());
  if (s == ir::Scalar::f8e5m2)
    return b.CreateFPExt(b.CreateBitCast(b.CreateTrunc(b.CreateShl(x, 8), b.getInt16Ty()), b.getHalfTy()),
                         b.getFloatTy());
  llvm::Value* e = b.CreateAnd(b.CreateLShr(x, 3), L.i32(15));
  llvm::Value* m = b.CreateAnd(x, L.i32(7));
  llvm::Value* is_sub = b.CreateICmpEQ(e, L.i32(0));
  llvm::Value* normal = b.CreateShl(b.CreateOr(m, L.i32(8)), b.CreateSub(e, L.i32(1)));
  llvm::Value* units = b.CreateSelect(is_sub, m, normal);
  llvm::Value* mag = b.CreateFMul(b.CreateUIToFP(units, b.getFloatTy()), llvm::ConstantFP::get(b.getFloatTy(), 0x1p-9));
  llvm::Value* v = b.CreateSelect(b.CreateICmpNE(b.CreateAnd(x, L.i32(0x80)), L.i32(0)), b.CreateFNeg(mag), mag);
  llvm::Value* nan = b.CreateICmpEQ(b.CreateAnd(x, L.i32(0x7f)), L.i32(0x7f));
  return b.CreateSelect(nan, llvm::ConstantFP::getNaN(b.getFloatTy()), v);
}

Regs lower_cast(Lowerer& L, const ir::Op& op, const Layout* l) {
  Regs in = L.operand(op, 0, l);
  const ir::DType from = op.operands[0]->type.dtype, to = op.results[0]->type.dtype;
  Regs out(in.size());
  if (from == to) return in;
  auto& b = L.b;
  if (from.is_fp8()) {
    // Decode pairs to f32, then the rest of the way (f32 -> f16/bf16/f64/int is exact or one rounding).
    require_fp8_convert(L, op);
    const ir::DType f32{ir::Scalar::f32};
    for (size_t k = 0; k < in.size(); k += 2) {
      llvm::Value* hi = k + 1 < in.size() ? in[k + 1] : b.getInt8(0);
      llvm::Value* pair = b.CreateOr(b.CreateZExt(in[k], b.getInt16Ty()), b.CreateShl(b.CreateZExt(hi, b.getInt16Ty()), 8));
      auto [f0, f1] = fp8x2_to_f32x2(L, pair, from.scalar);
      out[k] = to.is_fp8() ? f0 : cast_one(L, f0, f32, to);
      if (k + 1 < in.size()) out[k + 1] = to.is_fp8() ? f1 : cast_one(L, f1, f32, to);
    }
    if (!to.is_fp8()) return out;
    in = out;  // e4m3 <-> e5m2: on through f32
  }
  if (to.is_fp8()) {
    require_fp8_convert(L, op);
    const ir::DType f32{ir::Scalar::f32};
    auto as_f32 = [&](llvm::Value* v) { return from.is_fp8() ? v : cast_one(L, v, from, f32); };
    for (size_t k = 0; k < in.size(); k += 2) {
      llvm::Value* lo = as_f32(in[k]);
      llvm::Value* hi = k + 1 < in.size() ? as_f32(in[k + 1]) : llvm::ConstantFP::get(b.getFloatTy(), 0.0);
      llvm::Value* pair = f32x2_to_fp8x2(L, lo, hi, to.scalar);
      out[k] = b.CreateTrunc(pair, b.getInt8Ty());
      if (k + 1 < in.size()) out[k + 1] = b.CreateTrunc(b.CreateLShr(pair, 8), b.getInt8Ty());
    }
    return out;
  }
  for (size_t k = 0; k < in.size(); ++k) out[k] = cast_one(L, in[k], from, to);
  return out;
}

}  // namespace tessel::lowering
