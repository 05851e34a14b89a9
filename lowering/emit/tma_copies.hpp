// Emitting a ring trip's TMA copies (plan/tma_plan.hpp plans them).
#pragma once
#include "lowerer.hpp"
#include "plan/kernel_plan.hpp"

namespace tessel::lowering {

// Evaluates `p` with the lowered values of its atoms (`iv` bound to `iv_value`), as i32.
llvm::Value* emit_poly(Lowerer& L, const Poly& p, const ir::Value* iv, llvm::Value* iv_value);

// The producer's copies of one trip of ring `r` (loop plan `p`) through TMA, after every producer
// warp of the program waited for the stage: the trip's boxes are dealt to the first
// r.full_arrivals of those warps (`warp`: the warp's index among them, warp-uniform); one
// elected lane of each announces its bytes on `full` and issues its boxes (tma_issuers).
void issue_stage_tma(Lowerer& L, const PipelinePlan& p, const RingPlan& r, llvm::Value* stage, llvm::Value* full,
                     llvm::Value* iv, llvm::Value* warp);

}  // namespace tessel::lowering
