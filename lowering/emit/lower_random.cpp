// rand / randn: Philox 4x32-10, four words per call, bit for bit the stream of ir/philox.hpp.
// Each element computes the call for counter = offset >> 2 and picks its word; elements whose
// offsets share a counter (a thread's four consecutive offsets) get identical calls, which
// LLVM's CSE merges, so a thread runs Philox once per four elements.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "tessel/ir/philox.hpp"
#include "lowerer.hpp"
#include "plan/layout.hpp"

#include <algorithm>

namespace tessel::lowering {
namespace {

struct Words {
  llvm::Value* w[4];
};

// Ten Philox rounds; the high product halves use mul.hi.u32 (nvvm.mulhi.ui).
Words philox(Lowerer& L, llvm::Value* offset, llvm::Value* k0, llvm::Value* k1) {
  auto& b = L.b;
  llvm::Value* zero = b.getInt32(0);
  llvm::Value *c0 = offset, *c1 = zero, *c2 = zero, *c3 = zero;
  llvm::Value* ra = b.getInt32(ir::philox::kRoundA);
  llvm::Value* rb = b.getInt32(ir::philox::kRoundB);
  for (int r = 0; r < ir::philox::kRounds; ++r) {
    llvm::Value* hi_a = L.intrinsic(llvm::Intrinsic::nvvm_mulhi_ui, {}, {ra, c0});
    llvm::Value* hi_b = L.intrinsic(llvm::Intrinsic::nvvm_mulhi_ui, {}, {rb, c2});
    llvm::Value* lo_a = b.CreateMul(ra, c0);
    llvm::Value* lo_b = b.CreateMul(rb, c2);
    llvm::Value* n0 = b.CreateXor(b.CreateXor(hi_b, c1), k0);
    llvm::Value* n2 = b.CreateXor(b.CreateXor(hi_a, c3), k1);
    c1 = lo_b;
    c3 = lo_a;
    c0 = n0;
    c2 = n2;
    k0 = b.CreateAdd(k0, b.getInt32(ir::philox::kKeyA));
    k1 = b.CreateAdd(k1, b.getInt32(ir::philox::kKeyB));
  }
  return Words{{c0, c1, c2, c3}};
}

// s = int32(u); s = s < 0 ? -s - 1 : s; f32(s) * 4.6566127342e-10f (the f32 just below 2^-31)
llvm::Value* uniform(Lowerer& L, llvm::Value* u) {
  auto& b = L.b;
  llvm::Value* neg = b.CreateICmpSLT(u, b.getInt32(0));
  llvm::Value* s = b.CreateSelect(neg, b.CreateSub(b.CreateNeg(u), b.getInt32(1)), u);
  llvm::Value* f = b.CreateSIToFP(s, b.getFloatTy());
  return b.CreateFMul(f, llvm::ConstantFP::get(b.getFloatTy(), 4.6566127342e-10f));
}

// Box-Muller on a pair of words: sqrt(-2 ln max(u1, 1e-7)) * (sin if `use_sin` else cos)(2 pi u2).
llvm::Value* normal(Lowerer& L, llvm::Value* w1, llvm::Value* w2, llvm::Value* use_sin) {
  auto& b = L.b;
  llvm::Value* u1 = uniform(L, w1);
  llvm::Value* u2 = uniform(L, w2);
  llvm::Value* floor = llvm::ConstantFP::get(b.getFloatTy(), 1e-7f);
  u1 = b.CreateSelect(b.CreateFCmpOLT(u1, floor), floor, u1);
  llvm::Value* th = b.CreateFMul(llvm::ConstantFP::get(b.getFloatTy(), 6.283185307179586f), u2);
  llvm::Value* ln = b.CreateFMul(L.intrinsic(llvm::Intrinsic::nvvm_lg2_approx_f, {}, {u1}),
                                 llvm::ConstantFP::get(b.getFloatTy(), 0.693147180559945309f));
  llvm::Value* rad = L.intrinsic(llvm::Intrinsic::sqrt, {b.getFloatTy()},
                                 {b.CreateFMul(llvm::ConstantFP::get(b.getFloatTy(), -2.0f), ln)});
  llvm::Value* c = L.intrinsic(llvm::Intrinsic::nvvm_cos_approx_f, {}, {th});
  if (use_sin == b.getFalse()) return b.CreateFMul(rad, c);
  llvm::Value* sn = L.intrinsic(llvm::Intrinsic::nvvm_sin_approx_f, {}, {th});
  if (use_sin == b.getTrue()) return b.CreateFMul(rad, sn);
  return b.CreateFMul(rad, b.CreateSelect(use_sin, sn, c));
}

// How many consecutive registers provably share one Philox call: 4 when the offsets run in
// aligned groups of 4 along the last dim inside each thread's registers, else 1.
int64_t shared_call_group(Lowerer& L, const ir::Op& op, const Layout* l) {
  const ir::Shape& shape = op.results[0]->type.shape;
  if (!l || shape.empty()) return 1;
  const int d = static_cast<int>(shape.size()) - 1;
  const AxisInfo& ai = L.axis.at(op.operands[1]);
  if (ai.dims() <= d) return 1;
  int64_t run = std::min({ai.contiguity[d], ai.divisibility[d], contiguous_per_thread(*l, shape)});
  return run >= 4 && fastest_tile_dim(*l) == d && reg_stride(*l, shape, d) == 1 ? 4 : 1;
}

}  // namespace

Regs lower_random(Lowerer& L, const ir::Op& op, const Layout* l) {
  auto& b = L.b;
  Regs seeds = L.operand(op, 0, l), offsets = L.operand(op, 1, l);
  const ir::DType sd = op.operands[0]->type.dtype;
  if (op.kind != ir::OpKind::Rand && op.kind != ir::OpKind::RandN)
    ir::unexpected_op(__FILE__, __LINE__, "lower_random", op.kind);
  const bool is_rand = op.kind == ir::OpKind::Rand;
  const int64_t group = shared_call_group(L, op, l);
  const ir::Shape& shape = op.results[0]->type.shape;
  Regs out(offsets.size());
  for (size_t k = 0; k < offsets.size(); k += static_cast<size_t>(group)) {
    // key = (low, high) 32 bits of the seed widened to 64 bits as a signed integer
    llvm::Value* seed = sd.is_bool() ? b.CreateZExt(seeds[k], b.getInt64Ty()) : b.CreateSExtOrTrunc(seeds[k], b.getInt64Ty());
    llvm::Value* k0 = b.CreateTrunc(seed, b.getInt32Ty());
    llvm::Value* k1 = b.CreateTrunc(b.CreateLShr(seed, 32), b.getInt32Ty());
    llvm::Value* off = b.CreateSExtOrTrunc(offsets[k], b.getInt32Ty());
    Words w = philox(L, b.CreateLShr(off, 2), k0, k1);
    if (group == 4) {
      // Registers k..k+3 hold offsets o..o+3 with o % 4 == 0: word j serves register k+j.
      TESSEL_ASSERT(reg_dims(*l, shape, static_cast<int64_t>(k)).back() % 4 == 0, "misaligned Philox group");
      for (int j = 0; j < 4; ++j)
        out[k + j] = is_rand ? uniform(L, w.w[j])
                             : normal(L, w.w[j & 2], w.w[(j & 2) + 1], (j & 1) ? b.getTrue() : b.getFalse());
      continue;
    }
    llvm::Value* bit0 = b.CreateICmpNE(b.CreateAnd(off, 1), b.getInt32(0));
    llvm::Value* bit1 = b.CreateICmpNE(b.CreateAnd(off, 2), b.getInt32(0));
    if (is_rand) {
      llvm::Value* lo = b.CreateSelect(bit0, w.w[1], w.w[0]);
      llvm::Value* hi = b.CreateSelect(bit0, w.w[3], w.w[2]);
      out[k] = uniform(L, b.CreateSelect(bit1, hi, lo));
    } else {
      out[k] = normal(L, b.CreateSelect(bit1, w.w[2], w.w[0]), b.CreateSelect(bit1, w.w[3], w.w[1]), bit0);
    }
  }
  return out;
}

}  // namespace tessel::lowering
