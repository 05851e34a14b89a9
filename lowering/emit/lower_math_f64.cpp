// f64 math: the f64_math.hpp algorithms (exp, exp2, log, log2, sin, cos, tanh, sigmoid)
// instantiated over an LLVM IR builder backend; any other kind is an InternalError.
#include <llvm/IR/Intrinsics.h>

#include "lowerer.hpp"
#include "emit/f64_math.hpp"

namespace tessel::lowering {
namespace {

// Emits each arithmetic step of f64_math as LLVM IR (f64 values, i64 integers, i1 masks).
struct IrBackend {
  Lowerer& L;
  llvm::IRBuilder<>& b;
  using V = llvm::Value*;

  llvm::Type* d() { return b.getDoubleTy(); }
  V c(double v) { return llvm::ConstantFP::get(d(), v); }
  V ci(int64_t v) { return b.getInt64(static_cast<uint64_t>(v)); }
  V add(V x, V y) { return b.CreateFAdd(x, y); }
  V sub(V x, V y) { return b.CreateFSub(x, y); }
  V mul(V x, V y) { return b.CreateFMul(x, y); }
  V div(V x, V y) { return b.CreateFDiv(x, y); }
  V fma(V x, V y, V z) { return L.intrinsic(llvm::Intrinsic::fma, {d()}, {x, y, z}); }
  V rint(V x) { return L.intrinsic(llvm::Intrinsic::rint, {d()}, {x}); }
  V lt(V x, V y) { return b.CreateFCmpOLT(x, y); }
  V gt(V x, V y) { return b.CreateFCmpOGT(x, y); }
  V eq(V x, V y) { return b.CreateFCmpOEQ(x, y); }
  V ieq(V x, V y) { return b.CreateICmpEQ(x, y); }
  V isnan(V x) { return b.CreateFCmpUNO(x, x); }
  V lor(V x, V y) { return b.CreateOr(x, y); }
  V sel(V m, V x, V y) { return b.CreateSelect(m, x, y); }
  V isel(V m, V x, V y) { return b.CreateSelect(m, x, y); }
  V to_int(V x) { return b.CreateFPToSI(x, b.getInt64Ty()); }
  V to_double(V x) { return b.CreateSIToFP(x, d()); }
  V iadd(V x, V y) { return b.CreateAdd(x, y); }
  V isub(V x, V y) { return b.CreateSub(x, y); }
  V iand(V x, V y) { return b.CreateAnd(x, y); }
  V ior(V x, V y) { return b.CreateOr(x, y); }
  V shl(V x, int n) { return b.CreateShl(x, n); }
  V ashr(V x, int n) { return b.CreateAShr(x, n); }
  V from_bits(V x) { return b.CreateBitCast(x, d()); }
  V to_bits(V x) { return b.CreateBitCast(x, b.getInt64Ty()); }
};

}  // namespace

llvm::Value* f64_unary(Lowerer& L, ir::OpKind k, llvm::Value* x) {
  IrBackend be{L, L.b};
  using K = ir::OpKind;
  switch (k) {
    case K::Exp: return f64_math::exp(be, x);
    case K::Exp2: return f64_math::exp2(be, x);
    case K::Log: return f64_math::log(be, x);
    case K::Log2: return f64_math::log2(be, x);
    case K::Sin: return f64_math::sincos(be, x, false);
    case K::Cos: return f64_math::sincos(be, x, true);
    case K::Tanh: return f64_math::tanh(be, x);
    case K::Sigmoid: return f64_math::sigmoid(be, x);
    // sqrt, rsqrt, floor and ceil are f64 instructions and erf is libdevice's (lower_math.cpp).
    case K::Constant: case K::ProgramId: case K::NumPrograms: case K::Arange: case K::Splat: case K::Broadcast:
    case K::ExpandDims: case K::Cast: case K::Add: case K::Sub: case K::Mul: case K::Div: case K::Rem:
    case K::Min: case K::Max: case K::And: case K::Or: case K::Xor: case K::Shl: case K::Shr: case K::CmpEq:
    case K::CmpNe: case K::CmpLt: case K::CmpLe: case K::CmpGt: case K::CmpGe: case K::Neg: case K::Abs:
    case K::Not: case K::Sqrt: case K::Rsqrt: case K::Erf: case K::Floor: case K::Ceil: case K::Fma:
    case K::Select: case K::AddPtr: case K::Load: case K::Store: case K::Rand: case K::RandN:
    case K::ReduceSum: case K::ReduceMax: case K::ReduceMin: case K::ArgMax: case K::ArgMin: case K::Reduce:
    case K::CumSum: case K::Reshape: case K::Trans: case K::Dot: case K::AtomicAdd: case K::AtomicMax:
    case K::For: case K::Yield: case K::Hint: case K::Bitcast: case K::Unpack:
      break;
  }
  ir::unexpected_op(__FILE__, __LINE__, "f64_unary", k);
}

}  // namespace tessel::lowering
