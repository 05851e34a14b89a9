// for loops: the plan's schedule for the role being emitted picks the emitter.
//   Sequential: one trip after another (loop_frame.hpp shows the blocks).
//   Pipelined (num_stages = S >= 2, plan/pipeline_plan.hpp): the dot's operand copies run S - 1
//     trips ahead through S cp.async stage buffers (lower_pipelined_loop.cpp).
//   Ring (warp specialisation): producer warps fill a ring of stages the programs' warps drain
//     (lower_ring_loop.cpp); the producers run every other loop sequentially, carrying only what
//     they need.
#include "loop_frame.hpp"
#include "pipeline.hpp"

namespace tessel::lowering {
namespace {

void lower_sequential_loop(Lowerer& L, const ir::Op& op) {
  LoopFrame f(L, op);
  f.open();
  f.lower_body(nullptr);
  f.close();
  f.bind_results();
}

}  // namespace

void lower_for(Lowerer& L, const ir::Op& op) {
  const bool producer = L.role == Lowerer::Role::Producer;
  switch (L.plan.schedule(op)) {
    case LoopSchedule::Sequential:
      return lower_sequential_loop(L, op);
    case LoopSchedule::Pipelined:
      if (producer) return lower_sequential_loop(L, op);
      return lower_pipelined_loop(L, op, *L.plan.pipeline(op));
    case LoopSchedule::Ring:
      if (producer) return lower_ring_producer_loop(L, op, *L.plan.pipeline(op));
      return lower_ring_consumer_loop(L, op, *L.plan.pipeline(op));
  }
  internal_error(__FILE__, __LINE__, "unknown loop schedule");
}

}  // namespace tessel::lowering
