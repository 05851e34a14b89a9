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
  int64_t stage_bytes = 0;              // one stage's buffer (both operands), 128-byte multiple
  std::vector<PipelinedOperand> operands;
  std::vector<const ir::Op*> mask_ops;  // body ops the loads' masks are computed from (block order)
  std::vector<const ir::Op*> step_ops;  // body ops the pointer steps are computed from (block order)
};

// The plan for a for loop when options ask for num_stages >= 2 and the loop matches: exactly
// one dot in its body, on tensor cores, both operands loads copied by cp.async
// (dot_stages_load) from carried pointer tiles yielded as `carried + step` with `step` not
// depending on the trip, masks depending on the induction variable and loop-invariant values
// only through pure ops, and nothing in the body that writes memory or loops. Otherwise
// nullopt: the loop is lowered single-stage.
std::optional<PipelinePlan> plan_pipeline(Lowerer& L, const ir::Op& loop);

// Issues the copies of the trip with induction value `iv` (masks evaluated at `iv`, every
// copy zero-filled unless iv < hi) from pointer tiles `ptrs` (one per operand, in the carried
// layout) into the stage buffer at `base`, and commits them as one group.
void issue_stage(Lowerer& L, const ir::Op& loop, const PipelinePlan& p, llvm::Value* base, llvm::Value* iv,
                 llvm::Value* hi, const std::vector<Regs>& ptrs);

// What the pipelined dot reads while its loop body is lowered (Lowerer::pipelined_dots).
struct PipelineState {
  llvm::Value* base = nullptr;       // S stage buffers of stage_bytes each
  llvm::Value* read_slot = nullptr;  // i32: the buffer of this trip's operands
  int stages = 1;
  int64_t stage_bytes = 0;
  std::function<void()> issue_next;  // issues trip i + S - 1 into the buffer read last trip
};

}  // namespace tessel::lowering
