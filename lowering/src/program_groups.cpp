// Several programs per CTA (Options::programs_per_cta = 2): turn-taking of their K loops.
//
// The programs of a CTA share the SM's tensor cores. Left alone they run in step: both main
// loops at half speed, then both epilogues with the tensor cores idle. Here a program's wgmma
// K loop waits for its turn before its first trip and hands the turn on after its last, so
// one program's main loop runs at full speed while the other's epilogue (bias, activation,
// stores) and next prologue copies run beside it: CUTLASS's "ping-pong" schedule, without a
// producer warp (each program copies its own operands with cp.async, the copies of the
// prologue issued before it waits).
//
// The turn is an mbarrier per program in shared memory after the programs' regions: program g
// waits on barrier g and, when done, every thread of it arrives on barrier (g + 1) mod P
// (expected count: one program's threads). Program 0 goes first. Each thread counts its turns
// in a register (an alloca that LLVM promotes), so the phase parity it waits for is
// (turn + (g == 0)) & 1: for program 0 turn k needs the other program's k-th hand-over (k >= 1;
// turn 0 passes at once), for program 1 turn k needs program 0's (k + 1)-th.
//
// The turns pair up when the programs of a CTA run their K loops equally often, or program 0
// once more (a persistent loop over tiles from program_id with step num_programs). Other
// kernels still finish: a wait gives up after 2^20 polls (the turns are a schedule, nothing
// depends on them for correctness).
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "lowerer.hpp"

namespace tessel::lowering {

namespace {
llvm::Value* shared_address(Lowerer& L, llvm::Value* p) {
  return L.b.CreateTrunc(L.b.CreatePtrToInt(p, L.b.getInt64Ty()), L.b.getInt32Ty());
}
}  // namespace

llvm::Value* Lowerer::turn_barrier(llvm::Value* g) {
  if (!turn_var_)
    turn_var_ = new llvm::GlobalVariable(*mod_, b.getInt8Ty(), false, llvm::GlobalValue::InternalLinkage,
                                         llvm::UndefValue::get(b.getInt8Ty()), "tessel_turns_placeholder", nullptr,
                                         llvm::GlobalValue::NotThreadLocal, 3);
  return b.CreateGEP(b.getInt64Ty(), turn_var_, g);
}

void Lowerer::mainloop_acquire() {
  if (!turn_count_) {
    turn_count_ = pb_.CreateAlloca(b.getInt32Ty(), nullptr, "turns");
    pb_.CreateStore(pb_.getInt32(0), turn_count_);
  }
  llvm::Value* k = b.CreateLoad(b.getInt32Ty(), turn_count_);
  b.CreateStore(b.CreateAdd(k, i32(1)), turn_count_);
  llvm::Value* first = b.CreateZExt(b.CreateICmpEQ(group(), i32(0)), b.getInt32Ty());
  llvm::Value* parity = b.CreateAnd(b.CreateAdd(k, first), i32(1));
  llvm::Value* bar = shared_address(*this, turn_barrier(group()));
  const char* text =
      "{\n"
      ".reg .pred p;\n"
      ".reg .b32 n;\n"
      "mov.b32 n, 0;\n"
      "tessel_turn_${:uid}:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [$0], $1;\n"
      "@p bra tessel_go_${:uid};\n"
      "add.u32 n, n, 1;\n"
      "setp.lt.u32 p, n, 1048576;\n"
      "@p bra tessel_turn_${:uid};\n"
      "tessel_go_${:uid}:\n"
      "}";
  auto* fty = llvm::FunctionType::get(b.getVoidTy(), {b.getInt32Ty(), b.getInt32Ty()}, false);
  b.CreateCall(llvm::InlineAsm::get(fty, text, "r,r,~{memory}", true), {bar, parity});
}

void Lowerer::mainloop_release() {
  const int P = opts.programs_per_cta;
  llvm::Value* next = b.CreateAdd(group(), i32(1));
  next = b.CreateSelect(b.CreateICmpEQ(next, i32(P)), i32(0), next);
  intrinsic(llvm::Intrinsic::nvvm_mbarrier_arrive_shared, {}, {turn_barrier(next)});
}

}  // namespace tessel::lowering
