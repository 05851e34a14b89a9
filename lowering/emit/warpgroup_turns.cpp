// Warpgroup turns (PipelinePlan::warpgroup_turns): the warpgroups of a program take turns
// issuing each trip's wgmma, so that the tensor cores run one warpgroup's products while the
// others run their softmax (FlashAttention-3's ping-pong of two consumer warpgroups).
//
// Warpgroup g's turn is named barrier B_g (ids after the programs' own barriers) with 2 x 128
// threads: g's bar.sync and g - 1's bar.arrive (mod G). Before its first wgmma of a trip g syncs
// on B_g; once its products are issued it arrives on B_{g+1}: before it first waits for a wgmma
// group, passes a barrier or ends the trip, or after the trip's last dot, whichever comes first.
// Before the loop warpgroup G - 1 arrives on B_0 (warpgroup 0 goes first); after it warpgroup 0
// syncs on B_0, taking warpgroup G - 1's last hand-over, and then all warpgroups meet at the
// program's barrier, so each run of the loop leaves every barrier at a whole phase (a loop of
// no trips: the arrive and that sync) before the next run can open. A warpgroup is at most one
// hand-over ahead of the next, so the phases pair up trip by trip.
//
// The holder never waits for another warpgroup while it holds the turn: a barrier or a wgmma
// wait passes the turn on first, and a trip's copies (whose empty[s] wait needs every warp done
// with an older stage) are issued after the hand-over (turn_take's `after_pass`).
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "lowerer.hpp"

namespace tessel::lowering {

namespace {
constexpr int kTurnThreads = 2 * 128;  // the syncing warpgroup and the one handing over

void named_sync(Lowerer& L, int id) {
  L.intrinsic(llvm::Intrinsic::nvvm_barrier_sync_cnt, {}, {L.i32(id), L.i32(kTurnThreads)});
}

// The hand-over, ending a basic block ptxas keeps (Lowerer::block_boundary's branch, in the same
// asm so that nothing comes between): ptxas sinks a bar.arrive to the end of its block, below the
// work after it (the softmax), and the next warpgroup would then wait for that work.
void named_arrive(Lowerer& L, int id) {
  L.kept_block_end("bar.arrive $0, $1;\n", "tessel_pass", {L.i32(id), L.i32(kTurnThreads)}, "n,n");
}
}  // namespace

int Lowerer::turn_barrier_id(int g) const {
  // 0: the CTA; 1 + group: each program's own warps; 1 + P + group: producer warps.
  return 1 + 2 * opts.programs_per_cta + g;
}

llvm::Value* Lowerer::warpgroup_index() {  // (num_warps / 4: a power of two)
  return b.CreateAnd(b.CreateLShr(warp_uniform(), i32(2)), i32(turn_groups_ - 1));
}

// Named barrier `id(g)` for this thread's warpgroup g, sync or arrive: a warp-uniform branch per
// warpgroup, so each instruction names its barrier as a constant (ptxas then counts the barriers
// the kernel uses instead of assuming all 16).
void Lowerer::turn_barrier(const std::function<int(int)>& id, bool arrive) {
  llvm::Value* g = warpgroup_index();
  for (int k = 0; k < turn_groups_; ++k)
    if_then(b.CreateICmpEQ(g, i32(k)), [&] { arrive ? named_arrive(*this, id(k)) : named_sync(*this, id(k)); });
}

void Lowerer::turns_open(int warpgroups) {
  TESSEL_ASSERT(warpgroups >= 2 && turn_groups_ == 0, "warpgroup turns: two warpgroups or more, one loop at a time");
  turn_groups_ = warpgroups;
  if_then(b.CreateICmpEQ(warpgroup_index(), i32(warpgroups - 1)), [&] { named_arrive(*this, turn_barrier_id(0)); });
}

void Lowerer::turns_close() {
  TESSEL_ASSERT(turn_groups_ > 0 && !turn_held_, "warpgroup turns closed while a turn is held");
  if_then(b.CreateICmpEQ(warpgroup_index(), i32(0)), [&] { named_sync(*this, turn_barrier_id(0)); });
  turn_groups_ = 0;
  // Every warpgroup waits here until warpgroup 0 has taken the last hand-over. Otherwise the
  // last warpgroup, done with its trip, could open the next loop of turns (its arrival on B_0)
  // before warpgroup 0's sync above: a named barrier counts threads, not phases, so its last
  // hand-over and that arrival would complete B_0's phase without warpgroup 0, whose sync would
  // then wait for a phase that never completes (a loop of no trips makes the two arrivals
  // back to back: causal attention's first query block).
  barrier();
}

void Lowerer::turn_take(std::function<void()> after_pass) {
  TESSEL_ASSERT(turn_groups_ > 0 && !turn_held_, "a warpgroup turn taken outside its loop or twice in a trip");
  turn_barrier([&](int g) { return turn_barrier_id(g); }, /*arrive=*/false);
  turn_held_ = true;
  turn_after_ = std::move(after_pass);
}

void Lowerer::turn_pass() {
  if (!turn_held_) return;
  turn_held_ = false;
  turn_barrier([&](int g) { return turn_barrier_id((g + 1) % turn_groups_); }, /*arrive=*/true);
  if (turn_after_) {
    std::function<void()> after = std::move(turn_after_);
    turn_after_ = nullptr;
    after();
  }
}

}  // namespace tessel::lowering
