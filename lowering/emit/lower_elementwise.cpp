// Elementwise arithmetic, bitwise, comparison, unary (neg/abs/not), select and fma.
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Intrinsics.h>

#include <algorithm>
#include <map>

#include "lowerer.hpp"

namespace tessel::lowering {
namespace {

using K = ir::OpKind;

// x / y and x % y as the interpreter defines them: x / 0 and x % 0 are 0; MIN / -1 wraps to
// MIN and MIN % -1 is 0. Both cases are undefined behaviour for LLVM's sdiv/srem (seen on the
// GPU: an i16 -32768 / -1 came back as 32768, the sign extension after it folded away), so
// the divisor is replaced by 1 there: a constant divisor still folds to the plain division.
llvm::Value* int_divide(Lowerer& L, K k, llvm::Value* a, llvm::Value* c, bool is_bool) {
  auto& b = L.b;
  llvm::Type* t = a->getType();
  llvm::Value* zero = b.CreateICmpEQ(c, llvm::ConstantInt::get(t, 0));
  llvm::Value* replace = zero;
  if (!is_bool) {
    const unsigned w = t->getIntegerBitWidth();
    llvm::Value* min = llvm::ConstantInt::get(t, llvm::APInt::getSignedMinValue(w));
    llvm::Value* overflow = b.CreateAnd(b.CreateICmpEQ(a, min), b.CreateICmpEQ(c, llvm::ConstantInt::getSigned(t, -1)));
    replace = b.CreateOr(zero, overflow);
  }
  llvm::Value* d = b.CreateSelect(replace, llvm::ConstantInt::get(t, 1), c);
  llvm::Value* q = k == K::Div ? (is_bool ? b.CreateUDiv(a, d) : b.CreateSDiv(a, d))
                               : (is_bool ? b.CreateURem(a, d) : b.CreateSRem(a, d));
  return b.CreateSelect(zero, llvm::ConstantInt::get(t, 0), q);
}

// Integer binary op with the interpreter's semantics: two's complement wrap-around;
// shifts by >= width give 0 (shl, and shr of unsigned kinds) or the sign fill (shr of signed
// ones); division as int_divide says (unsigned kinds and i1: udiv, no overflow case).
llvm::Value* int_binary(Lowerer& L, K k, llvm::Value* a, llvm::Value* c, ir::DType d) {
  auto& b = L.b;
  const unsigned w = a->getType()->getIntegerBitWidth();
  const bool is_bool = d.is_bool() || d.is_unsigned();  // the unsigned readings
  switch (k) {
    case K::Add: return b.CreateAdd(a, c);
    case K::Sub: return b.CreateSub(a, c);
    case K::Mul: return b.CreateMul(a, c);
    case K::Div: case K::Rem: return int_divide(L, k, a, c, is_bool);
    case K::Min: return L.intrinsic(is_bool ? llvm::Intrinsic::umin : llvm::Intrinsic::smin, {a->getType()}, {a, c});
    case K::Max: return L.intrinsic(is_bool ? llvm::Intrinsic::umax : llvm::Intrinsic::smax, {a->getType()}, {a, c});
    case K::And: return b.CreateAnd(a, c);
    case K::Or: return b.CreateOr(a, c);
    case K::Xor: return b.CreateXor(a, c);
    case K::Shl: {
      // Amounts are read as unsigned: negative amounts count as >= width.
      llvm::Value* in_range = b.CreateICmpULT(c, llvm::ConstantInt::get(c->getType(), w));
      return b.CreateSelect(in_range, b.CreateShl(a, c), llvm::ConstantInt::get(a->getType(), 0));
    }
    case K::Shr: {
      if (d.is_bool()) return a;  // an i1's only bit is its sign bit: every amount keeps it
      if (d.is_unsigned()) {
        llvm::Value* in_range = b.CreateICmpULT(c, llvm::ConstantInt::get(c->getType(), w));
        return b.CreateSelect(in_range, b.CreateLShr(a, c), llvm::ConstantInt::get(a->getType(), 0));
      }
      llvm::Value* amt = L.intrinsic(llvm::Intrinsic::umin, {c->getType()}, {c, llvm::ConstantInt::get(c->getType(), w - 1)});
      return b.CreateAShr(a, amt);
    }
    case K::Constant: case K::ProgramId: case K::NumPrograms: case K::Arange: case K::Splat: case K::Broadcast:
    case K::ExpandDims: case K::Cast: case K::CmpEq: case K::CmpNe: case K::CmpLt: case K::CmpLe:
    case K::CmpGt: case K::CmpGe: case K::Neg: case K::Abs: case K::Not: case K::Exp: case K::Exp2:
    case K::Log: case K::Log2: case K::Sqrt: case K::Rsqrt: case K::Sin: case K::Cos: case K::Tanh:
    case K::Sigmoid: case K::Erf: case K::Floor: case K::Ceil: case K::Fma: case K::Select: case K::AddPtr:
    case K::Load: case K::Store: case K::Rand: case K::RandN: case K::ReduceSum: case K::ReduceMax:
    case K::ReduceMin: case K::ArgMax: case K::ArgMin: case K::Reduce: case K::CumSum: case K::Reshape:
    case K::Trans: case K::Dot: case K::AtomicAdd: case K::AtomicMax: case K::For: case K::Yield: case K::Hint: case K::Bitcast: case K::Unpack:
      break;
  }
  ir::unexpected_op(__FILE__, __LINE__, "int_binary", k);
}

llvm::Value* float_binary(Lowerer& L, K k, llvm::Value* a, llvm::Value* c) {
  auto& b = L.b;
  switch (k) {
    case K::Add: return b.CreateFAdd(a, c);
    case K::Sub: return b.CreateFSub(a, c);
    case K::Mul: return b.CreateFMul(a, c);
    case K::Div: return b.CreateFDiv(a, c);
    // The sign of the dividend, like C fmod. NVPTX expands frem to a - trunc(a / b) * b,
    // which rounds unlike fmod wherever trunc(a / b) * b is not exact (f32 -497.868164 rem
    // 3.9774785: -0.683349609, fmod -0.68335104; found by tests/fuzz), and beyond 2^24 in the
    // quotient; Triton has the same. It also returns a when b is infinite, so +-inf rem +-inf
    // came out +-inf (fmod of an infinity is NaN), and its zeros are +0 where fmod's have the
    // dividend's sign (-3 rem 3 is -0, and 1 / that is -inf): both are corrected here.
    case K::Rem: {
      llvm::Value* r = b.CreateFRem(a, c);
      llvm::Type* t = a->getType();
      llvm::Value* negative = b.CreateICmpSLT(b.CreateBitCast(a, b.getIntNTy(t->getPrimitiveSizeInBits())),
                                              llvm::ConstantInt::get(b.getIntNTy(t->getPrimitiveSizeInBits()), 0));
      llvm::Value* signed_zero = b.CreateSelect(negative, llvm::ConstantFP::get(t, -0.0), llvm::ConstantFP::get(t, 0.0));
      r = b.CreateSelect(b.CreateFCmpOEQ(r, llvm::ConstantFP::get(t, 0.0)), signed_zero, r);
      llvm::Value* inf = llvm::ConstantFP::getInfinity(a->getType());
      llvm::Value* a_inf = b.CreateFCmpOEQ(L.intrinsic(llvm::Intrinsic::fabs, {a->getType()}, {a}), inf);
      return b.CreateSelect(a_inf, llvm::ConstantFP::getNaN(a->getType()), r);
    }
    // NaN-propagating (max.NaN.f32 on sm_80+).
    case K::Min: return L.intrinsic(llvm::Intrinsic::minimum, {a->getType()}, {a, c});
    case K::Max: return L.intrinsic(llvm::Intrinsic::maximum, {a->getType()}, {a, c});
    // Bitwise ops take integers only (verifier rule Bitwise).
    case K::Constant: case K::ProgramId: case K::NumPrograms: case K::Arange: case K::Splat: case K::Broadcast:
    case K::ExpandDims: case K::Cast: case K::And: case K::Or: case K::Xor: case K::Shl: case K::Shr:
    case K::CmpEq: case K::CmpNe: case K::CmpLt: case K::CmpLe: case K::CmpGt: case K::CmpGe: case K::Neg:
    case K::Abs: case K::Not: case K::Exp: case K::Exp2: case K::Log: case K::Log2: case K::Sqrt:
    case K::Rsqrt: case K::Sin: case K::Cos: case K::Tanh: case K::Sigmoid: case K::Erf: case K::Floor:
    case K::Ceil: case K::Fma: case K::Select: case K::AddPtr: case K::Load: case K::Store: case K::Rand:
    case K::RandN: case K::ReduceSum: case K::ReduceMax: case K::ReduceMin: case K::ArgMax: case K::ArgMin:
    case K::Reduce: case K::CumSum: case K::Reshape: case K::Trans: case K::Dot: case K::AtomicAdd:
    case K::AtomicMax: case K::For: case K::Yield: case K::Hint: case K::Bitcast: case K::Unpack:
      break;
  }
  ir::unexpected_op(__FILE__, __LINE__, "float_binary", k);
}

llvm::Value* compare(Lowerer& L, K k, ir::DType d, llvm::Value* a, llvm::Value* c) {
  auto& b = L.b;
  if (d.is_float()) {
    a = to_compute(L, a, d);
    c = to_compute(L, c, d);
    switch (k) {
      case K::CmpEq: return b.CreateFCmpOEQ(a, c);
      case K::CmpNe: return b.CreateFCmpUNE(a, c);  // NaN != x is true
      case K::CmpLt: return b.CreateFCmpOLT(a, c);
      case K::CmpLe: return b.CreateFCmpOLE(a, c);
      case K::CmpGt: return b.CreateFCmpOGT(a, c);
      case K::CmpGe: return b.CreateFCmpOGE(a, c);
      case K::Constant: case K::ProgramId: case K::NumPrograms: case K::Arange: case K::Splat:
      case K::Broadcast: case K::ExpandDims: case K::Cast: case K::Add: case K::Sub: case K::Mul: case K::Div:
      case K::Rem: case K::Min: case K::Max: case K::And: case K::Or: case K::Xor: case K::Shl: case K::Shr:
      case K::Neg: case K::Abs: case K::Not: case K::Exp: case K::Exp2: case K::Log: case K::Log2:
      case K::Sqrt: case K::Rsqrt: case K::Sin: case K::Cos: case K::Tanh: case K::Sigmoid: case K::Erf:
      case K::Floor: case K::Ceil: case K::Fma: case K::Select: case K::AddPtr: case K::Load: case K::Store:
      case K::Rand: case K::RandN: case K::ReduceSum: case K::ReduceMax: case K::ReduceMin: case K::ArgMax:
      case K::ArgMin: case K::Reduce: case K::CumSum: case K::Reshape: case K::Trans: case K::Dot:
      case K::AtomicAdd: case K::AtomicMax: case K::For: case K::Yield: case K::Hint: case K::Bitcast: case K::Unpack:
        break;
    }
  } else {
    const bool u = d.ptr || d.is_bool() || d.is_unsigned();  // addresses and bools compare unsigned
    switch (k) {
      case K::CmpEq: return b.CreateICmpEQ(a, c);
      case K::CmpNe: return b.CreateICmpNE(a, c);
      case K::CmpLt: return u ? b.CreateICmpULT(a, c) : b.CreateICmpSLT(a, c);
      case K::CmpLe: return u ? b.CreateICmpULE(a, c) : b.CreateICmpSLE(a, c);
      case K::CmpGt: return u ? b.CreateICmpUGT(a, c) : b.CreateICmpSGT(a, c);
      case K::CmpGe: return u ? b.CreateICmpUGE(a, c) : b.CreateICmpSGE(a, c);
      case K::Constant: case K::ProgramId: case K::NumPrograms: case K::Arange: case K::Splat:
      case K::Broadcast: case K::ExpandDims: case K::Cast: case K::Add: case K::Sub: case K::Mul: case K::Div:
      case K::Rem: case K::Min: case K::Max: case K::And: case K::Or: case K::Xor: case K::Shl: case K::Shr:
      case K::Neg: case K::Abs: case K::Not: case K::Exp: case K::Exp2: case K::Log: case K::Log2:
      case K::Sqrt: case K::Rsqrt: case K::Sin: case K::Cos: case K::Tanh: case K::Sigmoid: case K::Erf:
      case K::Floor: case K::Ceil: case K::Fma: case K::Select: case K::AddPtr: case K::Load: case K::Store:
      case K::Rand: case K::RandN: case K::ReduceSum: case K::ReduceMax: case K::ReduceMin: case K::ArgMax:
      case K::ArgMin: case K::Reduce: case K::CumSum: case K::Reshape: case K::Trans: case K::Dot:
      case K::AtomicAdd: case K::AtomicMax: case K::For: case K::Yield: case K::Hint: case K::Bitcast: case K::Unpack:
        break;
    }
  }
  ir::unexpected_op(__FILE__, __LINE__, "compare", k);
}

llvm::Value* unary(Lowerer& L, K k, ir::DType d, llvm::Value* a) {
  auto& b = L.b;
  if (d.is_float()) {
    llvm::Value* x = to_compute(L, a, d);
    switch (k) {
      case K::Neg: return from_compute(L, b.CreateFNeg(x), d);
      case K::Abs: return from_compute(L, L.intrinsic(llvm::Intrinsic::fabs, {x->getType()}, {x}), d);
      // not takes integers only (verifier rule UnaryInt).
      case K::Constant: case K::ProgramId: case K::NumPrograms: case K::Arange: case K::Splat:
      case K::Broadcast: case K::ExpandDims: case K::Cast: case K::Add: case K::Sub: case K::Mul: case K::Div:
      case K::Rem: case K::Min: case K::Max: case K::And: case K::Or: case K::Xor: case K::Shl: case K::Shr:
      case K::CmpEq: case K::CmpNe: case K::CmpLt: case K::CmpLe: case K::CmpGt: case K::CmpGe: case K::Not:
      case K::Exp: case K::Exp2: case K::Log: case K::Log2: case K::Sqrt: case K::Rsqrt: case K::Sin:
      case K::Cos: case K::Tanh: case K::Sigmoid: case K::Erf: case K::Floor: case K::Ceil: case K::Fma:
      case K::Select: case K::AddPtr: case K::Load: case K::Store: case K::Rand: case K::RandN:
      case K::ReduceSum: case K::ReduceMax: case K::ReduceMin: case K::ArgMax: case K::ArgMin: case K::Reduce:
      case K::CumSum: case K::Reshape: case K::Trans: case K::Dot: case K::AtomicAdd: case K::AtomicMax:
      case K::For: case K::Yield: case K::Hint: case K::Bitcast: case K::Unpack:
        break;
    }
    ir::unexpected_op(__FILE__, __LINE__, "float unary", k);
  }
  switch (k) {
    case K::Neg: return b.CreateNeg(a);
    case K::Abs: return d.is_bool() || d.is_unsigned() ? a : L.intrinsic(llvm::Intrinsic::abs, {a->getType()}, {a, b.getFalse()});
    case K::Not: return b.CreateNot(a);
    case K::Constant: case K::ProgramId: case K::NumPrograms: case K::Arange: case K::Splat: case K::Broadcast:
    case K::ExpandDims: case K::Cast: case K::Add: case K::Sub: case K::Mul: case K::Div: case K::Rem:
    case K::Min: case K::Max: case K::And: case K::Or: case K::Xor: case K::Shl: case K::Shr: case K::CmpEq:
    case K::CmpNe: case K::CmpLt: case K::CmpLe: case K::CmpGt: case K::CmpGe: case K::Exp: case K::Exp2:
    case K::Log: case K::Log2: case K::Sqrt: case K::Rsqrt: case K::Sin: case K::Cos: case K::Tanh:
    case K::Sigmoid: case K::Erf: case K::Floor: case K::Ceil: case K::Fma: case K::Select: case K::AddPtr:
    case K::Load: case K::Store: case K::Rand: case K::RandN: case K::ReduceSum: case K::ReduceMax:
    case K::ReduceMin: case K::ArgMax: case K::ArgMin: case K::Reduce: case K::CumSum: case K::Reshape:
    case K::Trans: case K::Dot: case K::AtomicAdd: case K::AtomicMax: case K::For: case K::Yield: case K::Hint: case K::Bitcast: case K::Unpack:
      break;
  }
  ir::unexpected_op(__FILE__, __LINE__, "integer unary", k);
}

// f16/bf16 add, sub and mul on pairs of registers that some operand holds as neighbouring lanes
// of one vector (loads, unpack and this make them so): computed as one <2 x half> op,
// which the backend emits as add/sub/mul.rn.f16x2 (bf16x2 on sm_90), half the instructions.
// Each lane rounds exactly as the scalar op does (f32 arithmetic rounded once to 16 bits). The
// pairs are marked done in `out`; the rest stay scalar.
void lower_paired_halves(Lowerer& L, const ir::Op& op, const std::vector<Regs>& in, ir::DType d, Regs& out) {
  if (!is_half(d) || (op.kind != K::Add && op.kind != K::Sub && op.kind != K::Mul)) return;
  // Lanes 2i and 2i + 1 of each vector an operand's registers were extracted from (a 16-byte
  // load's <8 x half>, an unpack's or an earlier pair's <2 x half>).
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (const Regs& regs : in) {
    std::map<std::pair<llvm::Value*, uint64_t>, std::pair<int64_t, int64_t>> lanes;
    for (int64_t r = 0; r < static_cast<int64_t>(regs.size()); ++r) {
      auto* e = llvm::dyn_cast<llvm::ExtractElementInst>(regs[r]);
      auto* lane = e ? llvm::dyn_cast<llvm::ConstantInt>(e->getIndexOperand()) : nullptr;
      if (!lane || !llvm::isa<llvm::FixedVectorType>(e->getVectorOperandType()) ||
          llvm::cast<llvm::FixedVectorType>(e->getVectorOperandType())->getNumElements() % 2 != 0) continue;
      const uint64_t i = lane->getZExtValue();
      auto& [lo, hi] = lanes.try_emplace({e->getVectorOperand(), i / 2}, -1, -1).first->second;
      (i % 2 == 0 ? lo : hi) = r;
    }
    for (const auto& [key, lh] : lanes)
      if (lh.first >= 0 && lh.second >= 0 && !out[lh.first] && !out[lh.second]) pairs.push_back(lh);
    if (!pairs.empty()) break;
  }
  // In register order, not the map's (pointer) order: the same kernel gives the same PTX in
  // every process.
  std::sort(pairs.begin(), pairs.end());
  auto& b = L.b;
  llvm::Type* h2 = llvm::FixedVectorType::get(L.reg_type(d), 2);
  llvm::Type* f2 = llvm::FixedVectorType::get(b.getFloatTy(), 2);
  for (const auto& [lo, hi] : pairs) {
    llvm::Value* x[2];
    for (int i = 0; i < 2; ++i) {
      llvm::Value* v = b.CreateInsertElement(llvm::PoisonValue::get(h2), in[i][lo], uint64_t{0});
      x[i] = b.CreateFPExt(b.CreateInsertElement(v, in[i][hi], uint64_t{1}), f2);
    }
    llvm::Value* y = b.CreateFPTrunc(float_binary(L, op.kind, x[0], x[1]), h2);
    out[lo] = b.CreateExtractElement(y, uint64_t{0});
    out[hi] = b.CreateExtractElement(y, uint64_t{1});
  }
}

}  // namespace

Regs lower_elementwise(Lowerer& L, const ir::Op& op, const Layout* l) {
  const int64_t n = L.result_regs(op, l);
  std::vector<Regs> in;
  for (int i = 0; i < op.num_operands(); ++i) in.push_back(L.operand(op, i, l));
  const ir::DType d = op.operands[0]->type.dtype;
  Regs out(n);
  lower_paired_halves(L, op, in, d, out);
  for (int64_t r = 0; r < n; ++r) {
    if (out[r]) continue;  // computed in a pair
    llvm::Value* v = nullptr;
    switch (op.kind) {
      case K::Add: case K::Sub: case K::Mul: case K::Div: case K::Rem: case K::Min: case K::Max:
      case K::And: case K::Or: case K::Xor: case K::Shl: case K::Shr:
        if (d.is_float())
          v = from_compute(L, float_binary(L, op.kind, to_compute(L, in[0][r], d), to_compute(L, in[1][r], d)), d);
        else
          v = int_binary(L, op.kind, in[0][r], in[1][r], d);
        break;
      case K::CmpEq: case K::CmpNe: case K::CmpLt: case K::CmpLe: case K::CmpGt: case K::CmpGe:
        v = compare(L, op.kind, d, in[0][r], in[1][r]);
        break;
      case K::Neg: case K::Abs: case K::Not:
        v = unary(L, op.kind, d, in[0][r]);
        break;
      case K::Select:
        v = L.b.CreateSelect(in[0][r], in[1][r], in[2][r]);
        break;
      case K::Hint:  // a promise for the axis analysis; the value itself is unchanged
        v = in[0][r];
        break;
      case K::Bitcast:  // fp8 lives in i8 registers: i8 <-> fp8 is no instruction
        v = L.b.CreateBitCast(in[0][r], L.reg_type(op.results[0]->type.dtype));
        break;
      case K::Fma: {
        llvm::Value* a = to_compute(L, in[0][r], d);
        v = from_compute(L, L.intrinsic(llvm::Intrinsic::fma, {a->getType()},
                                        {a, to_compute(L, in[1][r], d), to_compute(L, in[2][r], d)}), d);
        break;
      }
      // Other families have their own lowering (Lowerer::lower_op dispatches).
      case K::Constant: case K::ProgramId: case K::NumPrograms: case K::Arange: case K::Splat:
      case K::Broadcast: case K::ExpandDims: case K::Cast: case K::Exp: case K::Exp2: case K::Log:
      case K::Log2: case K::Sqrt: case K::Rsqrt: case K::Sin: case K::Cos: case K::Tanh: case K::Sigmoid:
      case K::Erf: case K::Floor: case K::Ceil: case K::AddPtr: case K::Load: case K::Store: case K::Rand:
      case K::RandN: case K::ReduceSum: case K::ReduceMax: case K::ReduceMin: case K::ArgMax: case K::ArgMin:
      case K::Reduce: case K::CumSum: case K::Reshape: case K::Trans: case K::Dot: case K::AtomicAdd:
      case K::AtomicMax: case K::For: case K::Yield: case K::Unpack:
        ir::unexpected_op(__FILE__, __LINE__, "lower_elementwise", op.kind);
    }
    out[r] = v;
  }
  return out;
}

}  // namespace tessel::lowering
