// Software pipelining of a K loop (num_stages >= 2): which loads are issued ahead, and the state the dot reads.
#pragma once
#include <functional>
#include <optional>
#include <vector>

#include "lowerer.hpp"

namespace tessel::lowering {

// A dot operand whose load is issued S - 1 trips ahead: the load reads the carried pointer
// tile `carried`, which the loop advances by the loop-invariant offset tile `step` each trip.
struct PipelinedOperand {
  const ir::Op* load = nullptr;
  int carried = -1;
  const ir::Value* step = nullptr;
  SmemTile tile;
  int64_t offset = 0;  // byte offset of its staging inside one stage's buffer
};

struct PipelinePlan {
  const ir::Op* dot = nullptr;
  int stages = 1;
  int64_t stage_bytes = 0;              // one stage's buffer (both operands), a multiple of stage_align
  int64_t stage_align = 128;            // 1024 for wgmma: its swizzle atoms start 1024-aligned
  std::vector<PipelinedOperand> operands;
  std::vector<const ir::Op*> mask_ops;  // body ops the loads' masks are computed from (block order)
  std::vector<const ir::Op*> step_ops;  // body ops the pointer steps are computed from (block order)
  // A wgmma dot whose result only feeds the next trip's accumulator: the carried value's
  // index. Each trip then waits only for the previous trip's wgmma group (wait_group 1), so
  // the tensor cores run across trips, and issues its copies after that wait (the buffer they
  // overwrite was read by the group just waited for; with several warpgroups after a barrier
  // past every warpgroup's wait); the exit waits for the last group. -1: every trip waits for
  // its own group.
  int wgmma_in_flight = -1;
  // How many trips ahead the copies run: S - 1.
  int ahead = 1;
};

// The plan for a for loop when options ask for num_stages >= 2 and the loop matches: exactly
// one dot in its body, on tensor cores, both operands loads copied by cp.async
// (dot_stages_load) from carried pointer tiles yielded as `carried + step` with `step` not
// depending on the trip, masks depending on the induction variable and loop-invariant values
// only through pure ops, and nothing in the body that writes memory or loops. Otherwise
// nullopt: the loop is lowered single-stage.
std::optional<PipelinePlan> plan_pipeline(Lowerer& L, const ir::Op& loop);

// Issues the copies of the trip with induction value `iv` (masks evaluated at `iv`, every
// copy zero-filled, reading nothing, unless `runs`: the i1 that the loop runs that trip,
// computed by the caller as the interpreter counts trips) from pointer tiles `ptrs` (one per
// operand, in the carried layout) into the stage buffer at `base`, and commits them as one group.
// `commit` false: no commit_group (a producer signals the stage through an mbarrier instead).
void issue_stage(Lowerer& L, const ir::Op& loop, const PipelinePlan& p, llvm::Value* base, llvm::Value* iv,
                 llvm::Value* runs, const std::vector<Regs>& ptrs, bool commit = true);

// Is this plan's loop lowered as a ring with a producer (Options::warp_specialize, a wgmma
// dot)? warp_roles.cpp.
bool uses_ring(Lowerer& L, const PipelinePlan& p);
// The producer copies a ring loop's operands in its own layouts: each pointer tile must keep
// one layout through the loop and give 16-byte copies there; else a CompileError.
void check_producer_copies(Lowerer& L, const ir::Op& loop, const PipelinePlan& p);
// Does `load`'s layout give every thread 16 contiguous bytes per register group (cp.async 16)?
bool copies_16_bytes(Lowerer& L, const ir::Op& load);

// What the pipelined dot reads while its loop body is lowered (Lowerer::pipelined_dots).
struct PipelineState {
  llvm::Value* base = nullptr;       // S stage buffers of stage_bytes each
  llvm::Value* read_slot = nullptr;  // i32: the buffer of this trip's operands
  int stages = 1;
  int ahead = 1;                     // PipelinePlan::ahead
  int64_t stage_bytes = 0;
  std::function<void()> issue_next;  // issues trip i + ahead into buffer (i + ahead) mod S
  bool wgmma_in_flight = false;      // PipelinePlan::wgmma_in_flight >= 0
  // A ring filled by producer warps (uses_ring): the dot calls wait_ready before its wgmma
  // (the trip's stage has landed) and release after it (a stage no wgmma reads any more),
  // and neither waits for copies nor issues any.
  bool ring = false;
  std::function<void()> wait_ready, release;
};

// Waits for every wgmma group of this warpgroup; `acc` (the accumulators those groups write)
// pass through the wait, so nothing reads them earlier. Returns the values after it.
Regs wgmma_wait_all(Lowerer& L, const Regs& acc);

// mbarrier primitives of the warp-specialised rings (warp_roles.cpp). `bar`: a shared pointer.
void mbarrier_wait(Lowerer& L, llvm::Value* bar, llvm::Value* parity);  // until that phase completed
// Each calling warp arrives once (its lanes converged; one elected lane arrives).
void mbarrier_arrive_warp(Lowerer& L, llvm::Value* bar);
void copies_arrive(Lowerer& L, llvm::Value* bar);  // when this thread's cp.asyncs land (noinc)

// fence.proxy.async.shared::cta: this thread's generic-proxy shared-memory writes, and those
// it has observed, become visible to the async proxy wgmma reads through.
void fence_proxy_async(Lowerer& L);

}  // namespace tessel::lowering
