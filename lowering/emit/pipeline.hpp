// Emitting a software-pipelined K loop (plan/pipeline_plan.hpp): issuing a stage's copies, the
// state the dot reads, and the mbarrier primitives of rings.
#pragma once
#include <functional>
#include <optional>
#include <vector>

#include "lowerer.hpp"
#include "plan/pipeline_plan.hpp"

namespace tessel::lowering {

// Issues the copies of the trip with induction value `iv` (masks evaluated at `iv`, every
// copy zero-filled, reading nothing, unless `runs`: the i1 that the loop runs that trip,
// computed by the caller as the interpreter counts trips) from pointer tiles `ptrs` (one per
// operand, in the carried layout) into the stage buffer at `base`, and commits them as one group.
// `commit` false: no commit_group (a producer signals the stage through an mbarrier instead).
// `by_class`: destinations addressed by class (RingPlan::lean_copies).
void issue_stage(Lowerer& L, const ir::Op& loop, const PipelinePlan& p, llvm::Value* base, llvm::Value* iv,
                 llvm::Value* runs, const std::vector<Regs>& ptrs, bool commit = true, bool by_class = false);

// What the dot of a pipelined or ring loop reads while the loop body is emitted (passed to it
// through Lowerer::lower_block).
struct PipelineState {
  const PipelinePlan* plan = nullptr;  // the loop's plan (null for single-dot rings)
  llvm::Value* base = nullptr;       // S stage buffers of stage_bytes each
  std::vector<llvm::Value*> resident;  // each resident operand's buffer (PipelinePlan::resident)
  llvm::Value* read_slot = nullptr;  // i32: the buffer of this trip's operands
  int stages = 1;
  int ahead = 1;                     // PipelinePlan::ahead
  int64_t stage_bytes = 0;
  std::function<void()> issue_next;  // issues trip i + ahead into buffer (i + ahead) mod S
  bool wgmma_in_flight = false;      // PipelinePlan::wgmma_in_flight >= 0
  // A ring filled by producer warps (LoopSchedule::Ring): the dot calls wait_ready before its wgmma
  // (the trip's stage has landed) and release after it (a stage no wgmma reads any more),
  // and neither waits for copies nor issues any. A ring of several dots also sets `plan` and
  // `resident`: its first dot calls wait_ready, no dot issues copies or calls release (the loop
  // releases the stage at the trip's end).
  // A pipelined loop whose stages mbarriers signal (PipelinePlan::mbarriers) sets wait_ready
  // only: its first dot calls it instead of waiting for cp.async groups and a barrier.
  bool ring = false;
  std::function<void()> wait_ready, release;
};

// One cp.async of `bytes` (4, 8 or 16; .cg for 16, else .ca) from global `src` to shared
// `dst`; where `mask` and `guard` (i1 each, null: true) are not both true the source is ignored
// and the bytes zero-filled (the ignore-src predicate: no select of a size per copy).
void cp_async(Lowerer& L, llvm::Value* dst, llvm::Value* src, int64_t bytes, llvm::Value* mask, llvm::Value* guard);

// A prefetched load (PipelinedOperand::prefetch, po.load): its copies into the stage at
// `base` (pointers `ptrs` and mask registers in the load's layout; `guard`: the trip exists),
// and its registers read back from there in the trip, after this thread's wait for the trip's
// copies (a dense one after a barrier, also binding the layouts po.reads) (lower_memory.cpp).
void prefetch_copy(Lowerer& L, const PipelinedOperand& po, llvm::Value* base, const Regs& ptrs, const Regs& mask,
                   llvm::Value* guard);
Regs read_prefetched(Lowerer& L, const PipelinedOperand& po, llvm::Value* base);

// A pipelined or ring loop's resident operands (PipelinePlan::resident), before its first trip:
// each staged into a buffer of its own (`own`, pinned here), or, when an earlier loop of the
// block staged and kept it, read there; their bases in plan order, after one barrier (a proxy
// fence first for wgmma). release_residents, after the loop, unpins those no later loop reads
// and hands the kept ones on (lower_pipelined_loop.cpp).
std::vector<llvm::Value*> stage_residents(Lowerer& L, const PipelinePlan& p, std::vector<Lowerer::SmemBuffer>& own);
void release_residents(Lowerer& L, const PipelinePlan& p, const std::vector<Lowerer::SmemBuffer>& own);

// Compact copy pointers (PipelinedOperand::strides): each operand's runtime strides (i32
// elements, null for constant ones; empty for operands that are not compact), computed once
// before the loop, and the registers of an operand's pointer tile in layout `l` from its first
// register's pointer `ptr0` (lower_pipelined_loop.cpp). `sink`: each address is computed just
// before its first use (RingPlan::lean_copies).
std::vector<std::vector<llvm::Value*>> runtime_strides(Lowerer& L, const PipelinePlan& p);
Regs expand_pointers(Lowerer& L, const PipelinedOperand& po, const Layout& l, const ir::Shape& shape,
                     const std::vector<llvm::Value*>& stride, llvm::Value* ptr0, bool sink = false);

// Stages operand `operand` of `dot` (a tile computed before the loop, in registers) into the
// resident buffer at `base` in its dot's staging layout (lower_dot_mma.cpp).
void stage_resident(Lowerer& L, const ir::Op& dot, const MmaPlan& p, int operand, llvm::Value* base);

// Waits until at most `younger` wgmma groups of this warpgroup are still running (the groups
// committed after those whose accumulators `acc` are); `acc` pass through the wait, so nothing
// reads them earlier. Returns the values after it.
Regs wgmma_wait(Lowerer& L, const Regs& acc, int younger);
inline Regs wgmma_wait_all(Lowerer& L, const Regs& acc) { return wgmma_wait(L, acc, 0); }

// mbarrier primitives of the warp-specialised rings (warp_roles.cpp). `bar`: a shared pointer.
void mbarrier_wait(Lowerer& L, llvm::Value* bar, llvm::Value* parity);  // until that phase completed
// Each calling warp arrives once (its lanes converged; one elected lane arrives).
void mbarrier_arrive_warp(Lowerer& L, llvm::Value* bar);
void copies_arrive(Lowerer& L, llvm::Value* bar);  // when this thread's cp.asyncs land (noinc)

// Use n of S stages, counted across every run of a loop (Lowerer::ring_counter): its stage
// n mod S and its phase's parity (n / S) & 1; take_use reads the counter and moves it on by one
// (lower_ring_loop.cpp; rings and signalled pipelined loops count alike).
llvm::Value* stage_of_use(Lowerer& L, llvm::Value* n, int stages);
llvm::Value* parity_of_use(Lowerer& L, llvm::Value* n, int stages);
llvm::Value* take_use(Lowerer& L, llvm::Value* counter);

// fence.proxy.async.shared::cta: this thread's generic-proxy shared-memory writes, and those
// it has observed, become visible to the async proxy wgmma reads through.
void fence_proxy_async(Lowerer& L);

}  // namespace tessel::lowering
