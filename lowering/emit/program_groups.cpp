// Several programs per CTA (Options::programs_per_cta = 2): turn-taking of their K loops.
//
// The programs of a CTA share the SM's tensor cores. Left alone they run in step: both main
// loops at half speed, then both epilogues with the tensor cores idle. Here a program's wgmma
// K loop waits for its turn before its first trip and hands the turn on once its last trip's
// group is issued (before waiting for that group, so the next program's first group queues
// behind it at the tensor cores), so
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
// once more (a persistent loop over tiles from program_id with step num_programs). A program
// that leaves the kernel arrives on its retired mbarrier (expected count 1, thread 0; the
// arrive releases), and a wait also ends when the previous program's retired barrier has
// completed its first phase (mbarrier.test_wait, which acquires), so kernels whose programs run
// their loops unequally often finish too. (A st.release / ld.acquire flag orders the same way,
// but compute-sanitizer's racecheck does not model release/acquire and reports every such pair
// as a hazard; mbarriers it understands: bench/sanitizer/handoff_demo.cu shows both.) Without producer warps the turns are only a schedule, and a wait
// also gives up after 2^20 polls.
//
// With producer warps (warp_roles.cpp) the programs share one ring of P x S stages, so the
// turns are needed for correctness: consumers and producers each take turns (a turn mbarrier
// and a retired word per role and program), and a run of the ring loop starts from the trip
// count the previous run of either program ended at (ring_trips_word, one i32 per role after
// the ring's mbarriers; read after the turn is won, written by thread 0 between two barriers
// of the role's threads before the turn is handed on). So stage n mod PS and parity (n / PS)
// & 1 stay consistent across both programs' runs. The turn words: consumer turn mbarriers (8 P
// bytes), consumer retired mbarriers (8 P), and with a shared ring producer turn mbarriers (8 P)
// and producer retired mbarriers (8 P).
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "lowerer.hpp"

namespace tessel::lowering {

namespace {
llvm::Value* shared_address(Lowerer& L, llvm::Value* p) {
  return L.b.CreateTrunc(L.b.CreatePtrToInt(p, L.b.getInt64Ty()), L.b.getInt32Ty());
}
}  // namespace

llvm::Value* Lowerer::turn_word(int64_t offset, llvm::Value* index, int64_t scale) {
  if (!turn_var_)
    turn_var_ = new llvm::GlobalVariable(*mod_, b.getInt8Ty(), false, llvm::GlobalValue::InternalLinkage,
                                         llvm::UndefValue::get(b.getInt8Ty()), "tessel_turns_placeholder", nullptr,
                                         llvm::GlobalValue::NotThreadLocal, 3);
  return b.CreateGEP(b.getInt8Ty(), turn_var_, b.CreateAdd(i32(offset), b.CreateMul(index, i32(scale))));
}

// The turn words: the consumers' P turn mbarriers and P retired mbarriers; with a shared ring,
// the producers' from byte 16 P on.
llvm::Value* Lowerer::turn_barrier(llvm::Value* g, Role r) {
  return turn_word(r == Role::Producer ? 16 * opts.programs_per_cta : 0, g, 8);
}

llvm::Value* Lowerer::retired_barrier(Role r, llvm::Value* g) {
  const int P = opts.programs_per_cta;
  return turn_word(r == Role::Producer ? 24 * P : 8 * P, g, 8);
}

void Lowerer::wait_turn(Role r) {
  if (!turn_count_) {
    turn_count_ = pb_.CreateAlloca(b.getInt32Ty(), nullptr, "turns");
    pb_.CreateStore(pb_.getInt32(0), turn_count_);
  }
  // A thread runs one role, so one counter serves both.
  llvm::Value* k = b.CreateLoad(b.getInt32Ty(), turn_count_);
  b.CreateStore(b.CreateAdd(k, i32(1)), turn_count_);
  const int P = opts.programs_per_cta;
  llvm::Value* g = group();
  llvm::Value* first = b.CreateZExt(b.CreateICmpEQ(g, i32(0)), b.getInt32Ty());
  llvm::Value* parity = b.CreateAnd(b.CreateAdd(k, first), i32(1));
  llvm::Value* bar = shared_address(*this, turn_barrier(g, r));
  llvm::Value* prev = b.CreateURem(b.CreateAdd(g, i32(P - 1)), i32(P));
  llvm::Value* retired = shared_address(*this, retired_barrier(r, prev));
  // The turn comes when the previous program hands it over or has retired. Without a shared
  // ring the turns are only a schedule, and a wait also gives up after 2^20 polls.
  std::string text =
      "{\n"
      ".reg .pred p;\n"
      ".reg .b32 n;\n"
      "mov.b32 n, 0;\n"
      "tessel_turn_${:uid}:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [$0], $1;\n"
      "@p bra tessel_go_${:uid};\n"
      "mbarrier.test_wait.parity.acquire.cta.shared::cta.b64 p, [$2], 0;\n"
      "@p bra tessel_go_${:uid};\n";
  text += shared_ring() ? "bra.uni tessel_turn_${:uid};\n"
                        : "add.u32 n, n, 1;\n"
                          "setp.lt.u32 p, n, 1048576;\n"
                          "@p bra tessel_turn_${:uid};\n";
  text += "tessel_go_${:uid}:\n}";
  auto* fty = llvm::FunctionType::get(b.getVoidTy(), {b.getInt32Ty(), b.getInt32Ty(), b.getInt32Ty()}, false);
  b.CreateCall(llvm::InlineAsm::get(fty, text, "r,r,r,~{memory}", true), {bar, parity, retired});
}

void Lowerer::mainloop_acquire() { wait_turn(Role::Consumer); }

void Lowerer::mainloop_release() {
  const int P = opts.programs_per_cta;
  llvm::Value* next = b.CreateAdd(group(), i32(1));
  next = b.CreateSelect(b.CreateICmpEQ(next, i32(P)), i32(0), next);
  intrinsic(llvm::Intrinsic::nvvm_mbarrier_arrive_shared, {}, {turn_barrier(next, role == Role::Producer ? Role::Producer : Role::Consumer)});
}

void Lowerer::ring_acquire(const ir::Op& loop, const Ring& r) {
  const Role mine = role == Role::Producer ? Role::Producer : Role::Consumer;
  wait_turn(mine);
  // The previous run (of either program) left the trip count this one starts from.
  b.CreateStore(b.CreateLoad(b.getInt32Ty(), ring_trips_word(r, mine)), ring_counter(loop));
}

void Lowerer::ring_release(const ir::Op& loop, const Ring& r) {
  const Role mine = role == Role::Producer ? Role::Producer : Role::Consumer;
  // Every thread of the program's role has read the start (one barrier) before its thread 0
  // writes where the next run starts; the hand-over's phase completes after that write (thread
  // 0 arrives after it), and the second barrier lets this program's own threads see it too
  // (a retired other program lets them start their next run at once). The hand-over sits
  // between the barriers so that ptxas cannot schedule the epilogue's arithmetic before it.
  const int P = opts.programs_per_cta;
  llvm::Value* id = b.CreateAdd(group(), i32(mine == Role::Producer ? 1 + P : 1));
  const int threads = mine == Role::Producer ? producer_threads() : program_threads();
  intrinsic(llvm::Intrinsic::nvvm_barrier_sync_cnt, {}, {id, i32(threads)});
  llvm::Value* n = b.CreateLoad(b.getInt32Ty(), ring_counter(loop));
  if_then(b.CreateICmpEQ(tid(), i32(0)), [&] { b.CreateStore(n, ring_trips_word(r, mine)); });
  mainloop_release();
  intrinsic(llvm::Intrinsic::nvvm_barrier_sync_cnt, {}, {id, i32(threads)});
}

void Lowerer::retire() {
  if (!turn_var_) return;
  const Role mine = role == Role::Producer ? Role::Producer : Role::Consumer;
  if_then(b.CreateICmpEQ(tid(), i32(0)), [&] {
    auto* fty = llvm::FunctionType::get(b.getVoidTy(), {b.getInt32Ty()}, false);
    b.CreateCall(llvm::InlineAsm::get(fty, "mbarrier.arrive.release.cta.shared::cta.b64 _, [$0];", "r,~{memory}", true),
                 {shared_address(*this, retired_barrier(mine, group()))});
  });
}

}  // namespace tessel::lowering
