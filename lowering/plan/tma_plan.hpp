// TMA copies for warp-specialised rings: which pipelined loads a tensor map can serve, the
// coordinates of each trip's boxes, and how the boxes are dealt to the producer warps.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "plan/affine.hpp"
#include "plan/pipeline_plan.hpp"
#include "tessel/options/launch_spec.hpp"

namespace tessel::lowering {


// One pipelined operand copied by TMA: the tensor map, and per trip the box coordinates
// (column, row of the tile's first element) as polynomials in the loop's induction variable.
struct TmaOperand {
  TensorMapRecipe map;
  Poly col, row;   // at induction value iv (an atom of both)
  const ir::Value* iv = nullptr;
  int map_index = -1;  // KernelPlan::launch.tensor_maps
  // A row-permuted A operand also gets a view map (a nonempty view, launch_spec.hpp) that
  // copies the whole tile in one box per column block when the tile lies inside the rows.
  TensorMapRecipe view;
  int view_index = -1;
  // The load is marked multicast (lang::multicast): both CTAs of a 2-CTA cluster copy the same
  // tile here, so each issues half of its boxes into both CTAs' stages (.multicast::cluster).
  bool multicast = false;
};

// The TMA copies of a ring loop's operands (in PipelinePlan::operands order) when every
// operand qualifies: f16/bf16, a carried pointer tile base + row * stride + col (stride a
// 16-aligned integer parameter, columns contiguous, the base pointer 16-aligned) stepping by
// a loop-invariant amount, an induction variable with a constant step, zero (or no) `other`,
// and a mask bounding both dimensions by parameters only (row < M, col < K - k, ...), staged
// in a swizzled tile whose blocks TMA boxes can fill. Otherwise nullopt and `why` names the
// first operand that does not and the reason: cp.async copies.
std::optional<std::vector<TmaOperand>> plan_tma(const ir::Function& f, const ir::Op& loop, const PipelinePlan& p,
                                                std::string& why);

// Every box of a trip: operand, destination, column and row offsets; `view`: one box of the
// operand's view map for a whole column block.
struct Box {
  size_t op;
  int64_t dst, dcol, drow, bytes;
  bool view;
};
std::vector<Box> stage_boxes(const PipelinePlan& p, const std::vector<TmaOperand>& ops, bool views);
bool has_view(const std::vector<TmaOperand>& ops);

// The producer warps that issue a trip's boxes, after every producer warp of the program
// waited for the stage: the first tma_issuers() of those warps, at most as many as the trip has
// boxes on either path (view or 8-row boxes), so that each announces a nonzero byte count; one
// elected lane of each announces its bytes on full[s] and issues its boxes. full[s] therefore
// expects tma_issuers() arrivals. (A zero-byte expect_tx arrival from a warp without a box hung
// the kernel on the H200.)
int tma_issuers(const PipelinePlan& p, const std::vector<TmaOperand>& ops, int producer_warps);

}  // namespace tessel::lowering
