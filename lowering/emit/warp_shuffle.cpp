// Warp shuffles (shfl.sync) of values of any register type.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "lowerer.hpp"

namespace tessel::lowering {
namespace {

enum class Mode { Bfly, Up, Idx };

// One 32-bit shuffle: i32 or f32.
llvm::Value* shfl32(Lowerer& L, Mode mode, llvm::Value* v, llvm::Value* arg) {
  const bool f = v->getType()->isFloatTy();
  llvm::Intrinsic::ID id{};
  switch (mode) {
    case Mode::Bfly: id = f ? llvm::Intrinsic::nvvm_shfl_sync_bfly_f32 : llvm::Intrinsic::nvvm_shfl_sync_bfly_i32; break;
    case Mode::Up: id = f ? llvm::Intrinsic::nvvm_shfl_sync_up_f32 : llvm::Intrinsic::nvvm_shfl_sync_up_i32; break;
    case Mode::Idx: id = f ? llvm::Intrinsic::nvvm_shfl_sync_idx_f32 : llvm::Intrinsic::nvvm_shfl_sync_idx_i32; break;
  }
  // The c operand packs the clamp lane (bits 0-4) and segment mask (bits 8-12): a whole-warp
  // segment; `up` clamps at lane 0 (lanes below delta read themselves), the others at 31.
  llvm::Value* c = L.i32(mode == Mode::Up ? 0 : 0x1f);
  return L.intrinsic(id, {}, {L.i32(-1), v, arg, c});
}

llvm::Value* shfl(Lowerer& L, Mode mode, llvm::Value* v, llvm::Value* arg) {
  auto& b = L.b;
  llvm::Type* t = v->getType();
  if (t->isFloatTy() || t->isIntegerTy(32)) return shfl32(L, mode, v, arg);
  if (t->isPointerTy()) {
    llvm::Value* i = b.CreatePtrToInt(v, b.getInt64Ty());
    return b.CreateIntToPtr(shfl(L, mode, i, arg), t);
  }
  const unsigned bits = t->getPrimitiveSizeInBits();
  TESSEL_ASSERT(bits > 0 && bits <= 64, "shuffle of an unsupported type");
  llvm::Type* it = b.getIntNTy(bits);
  llvm::Value* i = t->isIntegerTy() ? v : b.CreateBitCast(v, it);
  llvm::Value* r;
  if (bits < 32) {
    r = b.CreateTrunc(shfl32(L, mode, b.CreateZExt(i, b.getInt32Ty()), arg), it);
  } else {
    TESSEL_ASSERT(bits == 64, "shuffle of an unsupported type");
    llvm::Value* lo = b.CreateTrunc(i, b.getInt32Ty());
    llvm::Value* hi = b.CreateTrunc(b.CreateLShr(i, 32), b.getInt32Ty());
    lo = b.CreateZExt(shfl32(L, mode, lo, arg), it);
    hi = b.CreateZExt(shfl32(L, mode, hi, arg), it);
    r = b.CreateOr(lo, b.CreateShl(hi, 32));
  }
  return t->isIntegerTy() ? r : b.CreateBitCast(r, t);
}

}  // namespace

llvm::Value* shfl_xor(Lowerer& L, llvm::Value* v, int lane_mask) { return shfl(L, Mode::Bfly, v, L.i32(lane_mask)); }

llvm::Value* shfl_up(Lowerer& L, llvm::Value* v, int delta) { return shfl(L, Mode::Up, v, L.i32(delta)); }

llvm::Value* shfl_idx(Lowerer& L, llvm::Value* v, llvm::Value* src_lane) { return shfl(L, Mode::Idx, v, src_lane); }

}  // namespace tessel::lowering
