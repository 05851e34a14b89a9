// Transcendental and rounding functions.
//
// f32 is the working precision: exp/exp2/log/log2/sin/cos/rsqrt use the PTX .approx
// instructions (as Triton does); sqrt is correctly rounded (sqrt.rn); exp, exp2, log, log2,
// tanh, sigmoid and erf are the sequences of fast_math.hpp (ex2.approx, lg2.approx and
// polynomials; tanh and erf within 1.5 ulp over the whole f32 range given an exact exp2),
// emitted through F32IrBackend. f16/bf16 compute in f32 and round once. f64 is never computed
// in f32: sqrt, rsqrt (1/sqrt), floor and ceil are the f64 instructions, exp, exp2, log, log2,
// sin, cos, tanh and sigmoid the f64_math.hpp algorithms, and erf libdevice's __nv_erf (within
// 2 ulp; a CompileError at the op's line when libdevice is not installed), precise or not.
//
// An op with precise = 1 (lang::Precision::ieee), or any with Options::precise_math, calls
// NVIDIA's libdevice instead (__nv_sinf, ...: within 2 ulp over the whole range; libdevice.cpp
// links it into the module only then): exp, exp2, log, log2, sin, cos, tanh and erf of f32;
// rsqrt becomes 1 / sqrt.rn, sigmoid 1 / (1 + __nv_expf(-x)). f64 keeps its own algorithms.
#include <fmt/format.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "libdevice.hpp"
#include "lowerer.hpp"
#include "tessel/ir/accessors.hpp"
#include "emit/fast_math.hpp"

namespace tessel::lowering {
namespace {

using K = ir::OpKind;

// Emits each arithmetic step of fast_math.hpp as f32 LLVM IR (i1 masks).
struct F32IrBackend {
  Lowerer& L;
  llvm::IRBuilder<>& b;
  using V = llvm::Value*;

  llvm::Type* f() { return b.getFloatTy(); }
  V c(float v) { return llvm::ConstantFP::get(f(), v); }
  V add(V x, V y) { return b.CreateFAdd(x, y); }
  V sub(V x, V y) { return b.CreateFSub(x, y); }
  V mul(V x, V y) { return b.CreateFMul(x, y); }
  V div(V x, V y) { return b.CreateFDiv(x, y); }
  V fma(V x, V y, V z) { return L.intrinsic(llvm::Intrinsic::fma, {f()}, {x, y, z}); }
  V abs(V x) { return L.intrinsic(llvm::Intrinsic::fabs, {f()}, {x}); }
  // |m| with the sign of s, as two bitwise ops (one LOP3 in SASS): NVPTX expands
  // llvm.copysign.f32 into abs, neg, a sign-bit test and a select.
  V copysign(V m, V s) {
    llvm::Type* i32 = b.getInt32Ty();
    V mag = b.CreateAnd(b.CreateBitCast(m, i32), 0x7fffffffu);
    V sign = b.CreateAnd(b.CreateBitCast(s, i32), 0x80000000u);
    return b.CreateBitCast(b.CreateOr(mag, sign), f());
  }
  // llvm.minimum keeps NaN (minnum would turn it into the other operand).
  V minimum(V x, V y) { return L.intrinsic(llvm::Intrinsic::minimum, {f()}, {x, y}); }
  V ex2(V x) { return L.intrinsic(llvm::Intrinsic::nvvm_ex2_approx_f, {}, {x}); }
  // ex2.approx.ftz: one MUFU.EX2 where the plain form adds a denormal-range test and two
  // scaling multiplies. exp and exp2 flush results below 2^-126 to 0 with it; tanh, erf and
  // sigmoid's internal powers change no f32 result (fast_math.hpp says why).
  V ex2_ftz(V x) { return L.intrinsic(llvm::Intrinsic::nvvm_ex2_approx_ftz_f, {}, {x}); }
  V lg2(V x) { return L.intrinsic(llvm::Intrinsic::nvvm_lg2_approx_f, {}, {x}); }
  V lt(V x, V y) { return b.CreateFCmpOLT(x, y); }
  V sel(V m, V x, V y) { return b.CreateSelect(m, x, y); }
};

// The accurate form of one f32 math op (libdevice, or correctly rounded steps).
llvm::Value* f32_precise(Lowerer& L, K k, llvm::Value* x) {
  auto& b = L.b;
  auto nv = [&](const char* name) { return call_libdevice(L.module(), b, name, x); };
  switch (k) {
    case K::Exp: return nv("__nv_expf");
    case K::Exp2: return nv("__nv_exp2f");
    case K::Log: return nv("__nv_logf");
    case K::Log2: return nv("__nv_log2f");
    case K::Sin: return nv("__nv_sinf");
    case K::Cos: return nv("__nv_cosf");
    case K::Tanh: return nv("__nv_tanhf");
    case K::Erf: return nv("__nv_erff");
    // libdevice's __nv_rsqrtf is rsqrt.approx itself: div.rn of sqrt.rn is within 1 ulp.
    case K::Rsqrt:
      return b.CreateFDiv(llvm::ConstantFP::get(b.getFloatTy(), 1.0),
                          L.intrinsic(llvm::Intrinsic::sqrt, {b.getFloatTy()}, {x}));
    case K::Sigmoid: {
      llvm::Value* one = llvm::ConstantFP::get(b.getFloatTy(), 1.0);
      return b.CreateFDiv(one, b.CreateFAdd(one, call_libdevice(L.module(), b, "__nv_expf", b.CreateFNeg(x))));
    }
    // sqrt, floor and ceil are exact already; the rest are not math ops.
    case K::Constant: case K::ProgramId: case K::NumPrograms: case K::Arange: case K::Splat: case K::Broadcast:
    case K::ExpandDims: case K::Cast: case K::Add: case K::Sub: case K::Mul: case K::Div: case K::Rem:
    case K::Min: case K::Max: case K::And: case K::Or: case K::Xor: case K::Shl: case K::Shr: case K::CmpEq:
    case K::CmpNe: case K::CmpLt: case K::CmpLe: case K::CmpGt: case K::CmpGe: case K::Neg: case K::Abs:
    case K::Not: case K::Sqrt: case K::Floor: case K::Ceil: case K::Fma: case K::Select: case K::AddPtr:
    case K::Load: case K::Store: case K::Rand: case K::RandN: case K::ReduceSum: case K::ReduceMax:
    case K::ReduceMin: case K::ArgMax: case K::ArgMin: case K::Reduce: case K::CumSum: case K::Reshape:
    case K::Trans: case K::Dot: case K::AtomicAdd: case K::AtomicMax: case K::For: case K::Yield: case K::Hint: case K::Bitcast: case K::Unpack:
      break;
  }
  ir::unexpected_op(__FILE__, __LINE__, "f32_precise", k);
}

// One f32 math op: the fast_math.hpp sequences, or one instruction; libdevice when precise.
llvm::Value* f32_math(Lowerer& L, K k, llvm::Value* x, bool precise) {
  if (precise && ir::has_precise_form(k)) return f32_precise(L, k, x);
  F32IrBackend be{L, L.b};
  auto nvvm = [&](llvm::Intrinsic::ID id) { return L.intrinsic(id, {}, {x}); };
  switch (k) {
    case K::Exp: return fast_math::exp(be, x);
    case K::Exp2: return fast_math::exp2(be, x);
    case K::Log: return fast_math::log(be, x);
    case K::Log2: return fast_math::log2(be, x);
    case K::Sqrt: return L.intrinsic(llvm::Intrinsic::sqrt, {be.f()}, {x});
    case K::Rsqrt: return nvvm(llvm::Intrinsic::nvvm_rsqrt_approx_f);
    case K::Sin: return nvvm(llvm::Intrinsic::nvvm_sin_approx_f);
    case K::Cos: return nvvm(llvm::Intrinsic::nvvm_cos_approx_f);
    case K::Tanh: return fast_math::tanh(be, x);
    case K::Sigmoid: return fast_math::sigmoid(be, x);
    case K::Erf: return fast_math::erf(be, x);
    case K::Floor: return L.intrinsic(llvm::Intrinsic::floor, {be.f()}, {x});
    case K::Ceil: return L.intrinsic(llvm::Intrinsic::ceil, {be.f()}, {x});
    case K::Constant: case K::ProgramId: case K::NumPrograms: case K::Arange: case K::Splat: case K::Broadcast:
    case K::ExpandDims: case K::Cast: case K::Add: case K::Sub: case K::Mul: case K::Div: case K::Rem:
    case K::Min: case K::Max: case K::And: case K::Or: case K::Xor: case K::Shl: case K::Shr: case K::CmpEq:
    case K::CmpNe: case K::CmpLt: case K::CmpLe: case K::CmpGt: case K::CmpGe: case K::Neg: case K::Abs:
    case K::Not: case K::Fma: case K::Select: case K::AddPtr: case K::Load: case K::Store: case K::Rand:
    case K::RandN: case K::ReduceSum: case K::ReduceMax: case K::ReduceMin: case K::ArgMax: case K::ArgMin:
    case K::Reduce: case K::CumSum: case K::Reshape: case K::Trans: case K::Dot: case K::AtomicAdd:
    case K::AtomicMax: case K::For: case K::Yield: case K::Hint: case K::Bitcast: case K::Unpack:
      break;
  }
  ir::unexpected_op(__FILE__, __LINE__, "f32_math", k);
}

// One f64 math op, always in f64 (the interpreter computes f64 exactly, so the GPU never drops to
// f32 precision behind the user's back): an instruction, an f64_math.hpp algorithm, or for erf,
// which has none here, libdevice's __nv_erf (within 2 ulp), precise or not.
llvm::Value* f64_math(Lowerer& L, K k, llvm::Value* x) {
  auto& b = L.b;
  llvm::Type* d = b.getDoubleTy();
  switch (k) {
    case K::Sqrt: return L.intrinsic(llvm::Intrinsic::sqrt, {d}, {x});
    case K::Rsqrt:
      return b.CreateFDiv(llvm::ConstantFP::get(d, 1.0), L.intrinsic(llvm::Intrinsic::sqrt, {d}, {x}));
    case K::Floor: return L.intrinsic(llvm::Intrinsic::floor, {d}, {x});
    case K::Ceil: return L.intrinsic(llvm::Intrinsic::ceil, {d}, {x});
    case K::Exp: case K::Exp2: case K::Log: case K::Log2: case K::Sin: case K::Cos: case K::Tanh: case K::Sigmoid:
      return f64_unary(L, k, x);
    case K::Erf: return call_libdevice(L.module(), b, "__nv_erf", x);
    case K::Constant: case K::ProgramId: case K::NumPrograms: case K::Arange: case K::Splat: case K::Broadcast:
    case K::ExpandDims: case K::Cast: case K::Add: case K::Sub: case K::Mul: case K::Div: case K::Rem:
    case K::Min: case K::Max: case K::And: case K::Or: case K::Xor: case K::Shl: case K::Shr: case K::CmpEq:
    case K::CmpNe: case K::CmpLt: case K::CmpLe: case K::CmpGt: case K::CmpGe: case K::Neg: case K::Abs:
    case K::Not: case K::Fma: case K::Select: case K::AddPtr: case K::Load: case K::Store: case K::Rand:
    case K::RandN: case K::ReduceSum: case K::ReduceMax: case K::ReduceMin: case K::ArgMax: case K::ArgMin:
    case K::Reduce: case K::CumSum: case K::Reshape: case K::Trans: case K::Dot: case K::AtomicAdd:
    case K::AtomicMax: case K::For: case K::Yield: case K::Hint: case K::Bitcast: case K::Unpack:
      break;
  }
  ir::unexpected_op(__FILE__, __LINE__, "f64_math", k);
}

// f64 erf is libdevice's: without libdevice it is a CompileError at the user's line (naming the
// op and the way out), never a silent f32 erf. Checked once per op, before any code is emitted.
void require_libdevice_for_f64(const Lowerer& L, const ir::Op& op) {
  try {
    find_libdevice();
  } catch (const CompileError&) {
    throw CompileError(op.loc, fmt::format("kernel '{}': {} of f64 needs NVIDIA's libdevice on the GPU (tessel has no "
                                           "f64 {} of its own), not found at {} (set TESSEL_LIBDEVICE to "
                                           "libdevice.10.bc, or CUDA_HOME); or cast to f32 first",
                                           L.irf.name, op.name(), op.name(), fmt::join(libdevice_candidates(), ", ")));
  }
}

}  // namespace

Regs lower_math(Lowerer& L, const ir::Op& op, const Layout* l) {
  Regs in = L.operand(op, 0, l);
  const ir::DType d = op.operands[0]->type.dtype;
  TESSEL_ASSERT(d.is_float(), std::string(op.name()) + " needs a float operand");
  const bool precise = L.opts.precise_math || ir::is_precise(op);
  const bool f64 = d.scalar == ir::Scalar::f64;
  if (f64 && op.kind == K::Erf) require_libdevice_for_f64(L, op);
  Regs out(in.size());
  for (size_t r = 0; r < in.size(); ++r) {
    if (f64) out[r] = f64_math(L, op.kind, in[r]);
    else out[r] = from_compute(L, f32_math(L, op.kind, to_compute(L, in[r], d), precise), d);
  }
  return out;
}

}  // namespace tessel::lowering
