// Transcendental and rounding functions.
//
// f32 is the working precision: exp/exp2/log/log2/sin/cos/rsqrt use the PTX .approx
// instructions (as Triton does); sqrt is correctly rounded (sqrt.rn); tanh, sigmoid and erf
// are built here from ex2.approx and polynomials fitted for this file (tanh and erf within
// about 2.5 ulp over the whole f32 range). f16/bf16 compute in f32 and round once. f64
// computes sqrt, rsqrt (1/sqrt), floor and ceil with the f64 instructions, exp, exp2, log,
// log2, sin, cos, tanh and sigmoid with f64_math.hpp, and erf in f32 precision (there is
// no libdevice here).
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "lowerer.hpp"
#include "tessel/lowering/fast_math.hpp"

namespace tessel::lowering {
namespace {

using K = ir::OpKind;

using namespace fast_math;

class F32Math {
 public:
  explicit F32Math(Lowerer& L) : L_(L), b_(L.b) {}

  llvm::Value* c(float v) { return llvm::ConstantFP::get(b_.getFloatTy(), v); }
  llvm::Value* nvvm(llvm::Intrinsic::ID id, llvm::Value* x) { return L_.intrinsic(id, {}, {x}); }
  llvm::Value* fma(llvm::Value* a, llvm::Value* x, llvm::Value* y) {
    return L_.intrinsic(llvm::Intrinsic::fma, {b_.getFloatTy()}, {a, x, y});
  }
  template <size_t N>
  llvm::Value* poly(const float (&k)[N], llvm::Value* t) {
    llvm::Value* p = c(k[0]);
    for (size_t i = 1; i < N; ++i) p = fma(p, t, c(k[i]));
    return p;
  }
  llvm::Value* fabs(llvm::Value* x) { return L_.intrinsic(llvm::Intrinsic::fabs, {b_.getFloatTy()}, {x}); }
  // |m| with the sign of s, as two bitwise ops (one LOP3 in SASS): NVPTX expands
  // llvm.copysign.f32 into abs, neg, a sign-bit test and a select.
  llvm::Value* copysign(llvm::Value* m, llvm::Value* s) {
    llvm::Type* i32 = b_.getInt32Ty();
    llvm::Value* mag = b_.CreateAnd(b_.CreateBitCast(m, i32), 0x7fffffffu);
    llvm::Value* sign = b_.CreateAnd(b_.CreateBitCast(s, i32), 0x80000000u);
    return b_.CreateBitCast(b_.CreateOr(mag, sign), b_.getFloatTy());
  }
  llvm::Value* ex2(llvm::Value* x) { return nvvm(llvm::Intrinsic::nvvm_ex2_approx_f, x); }
  // ex2.approx.ftz: one MUFU.EX2 where the plain form adds a denormal-range test and two
  // scaling multiplies. For tanh, erf and sigmoid's internal powers only: a flushed 2^q there
  // (q < -126) changes no f32 result (erf is 1 - 2^q with q >= -23; tanh's power is >= 1;
  // sigmoid's 1 / (1 + 2^q) rounds to 1 either way). exp/exp2 keep their denormal results.
  llvm::Value* ex2_ftz(llvm::Value* x) { return nvvm(llvm::Intrinsic::nvvm_ex2_approx_ftz_f, x); }
  llvm::Value* lg2(llvm::Value* x) { return nvvm(llvm::Intrinsic::nvvm_lg2_approx_f, x); }

  llvm::Value* tanh(llvm::Value* x) {
    llvm::Value* small = fma(x, poly(kTanhPoly, b_.CreateFMul(x, x)), x);
    llvm::Value* a = fabs(x);
    // 1 - 2 / (e^(2|x|) + 1): no cancellation for |x| >= 0.9; inf and NaN fall out right.
    llvm::Value* e = ex2_ftz(b_.CreateFMul(a, c(2.0f * kLog2e)));
    llvm::Value* large = b_.CreateFSub(c(1.0f), b_.CreateFDiv(c(2.0f), b_.CreateFAdd(e, c(1.0f))));
    return b_.CreateSelect(b_.CreateFCmpOLT(a, c(kTanhBound)), small, copysign(large, x));
  }

  llvm::Value* erf(llvm::Value* x) {
    llvm::Value* small = fma(x, poly(kErfSmallPoly, b_.CreateFMul(x, x)), x);
    llvm::Value* a = fabs(x);
    // llvm.minimum keeps NaN (minnum would turn it into the bound).
    llvm::Value* ac = L_.intrinsic(llvm::Intrinsic::minimum, {b_.getFloatTy()}, {a, c(kErfBound)});
    llvm::Value* large = b_.CreateFSub(c(1.0f), ex2_ftz(poly(kErfLargePoly, ac)));
    return b_.CreateSelect(b_.CreateFCmpOLT(a, c(1.0f)), small, copysign(large, x));
  }

  llvm::Value* sigmoid(llvm::Value* x) {
    llvm::Value* e = ex2_ftz(b_.CreateFMul(x, c(-kLog2e)));
    return b_.CreateFDiv(c(1.0f), b_.CreateFAdd(c(1.0f), e));
  }

  llvm::Value* apply(K k, llvm::Value* x) {
    switch (k) {
      case K::Exp: return ex2(b_.CreateFMul(x, c(kLog2e)));
      case K::Exp2: return ex2(x);
      case K::Log: return b_.CreateFMul(lg2(x), c(kLn2));
      case K::Log2: return lg2(x);
      case K::Sqrt: return L_.intrinsic(llvm::Intrinsic::sqrt, {b_.getFloatTy()}, {x});
      case K::Rsqrt: return nvvm(llvm::Intrinsic::nvvm_rsqrt_approx_f, x);
      case K::Sin: return nvvm(llvm::Intrinsic::nvvm_sin_approx_f, x);
      case K::Cos: return nvvm(llvm::Intrinsic::nvvm_cos_approx_f, x);
      case K::Tanh: return tanh(x);
      case K::Sigmoid: return sigmoid(x);
      case K::Erf: return erf(x);
      case K::Floor: return L_.intrinsic(llvm::Intrinsic::floor, {b_.getFloatTy()}, {x});
      case K::Ceil: return L_.intrinsic(llvm::Intrinsic::ceil, {b_.getFloatTy()}, {x});
      default: break;
    }
    internal_error(__FILE__, __LINE__, "not a math op");
  }

 private:
  Lowerer& L_;
  llvm::IRBuilder<>& b_;
};

llvm::Value* f64_math(Lowerer& L, K k, llvm::Value* x) {
  auto& b = L.b;
  llvm::Type* d = b.getDoubleTy();
  switch (k) {
    case K::Sqrt: return L.intrinsic(llvm::Intrinsic::sqrt, {d}, {x});
    case K::Rsqrt:
      return b.CreateFDiv(llvm::ConstantFP::get(d, 1.0), L.intrinsic(llvm::Intrinsic::sqrt, {d}, {x}));
    case K::Floor: return L.intrinsic(llvm::Intrinsic::floor, {d}, {x});
    case K::Ceil: return L.intrinsic(llvm::Intrinsic::ceil, {d}, {x});
    default: {
      if (llvm::Value* v = f64_unary(L, k, x)) return v;
      F32Math m(L);
      return b.CreateFPExt(m.apply(k, b.CreateFPTrunc(x, b.getFloatTy())), d);
    }
  }
}

}  // namespace

Regs lower_math(Lowerer& L, const ir::Op& op, const Layout* l) {
  Regs in = L.operand(op, 0, l);
  const ir::DType d = op.operands[0]->type.dtype;
  TESSEL_ASSERT(d.is_float(), std::string(op.name()) + " needs a float operand");
  F32Math m(L);
  Regs out(in.size());
  for (size_t r = 0; r < in.size(); ++r) {
    if (d.scalar == ir::Scalar::f64) out[r] = f64_math(L, op.kind, in[r]);
    else out[r] = from_compute(L, m.apply(op.kind, to_compute(L, in[r], d)), d);
  }
  return out;
}

}  // namespace tessel::lowering
