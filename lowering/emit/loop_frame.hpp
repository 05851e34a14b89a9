// The parts every runtime loop's emission shares, whatever its schedule (plan/kernel_plan.hpp's
// LoopSchedule): bounds and the step check, carried values, the header's phis, the latch and the
// exit.
//
//   pre:    br header
//   header: iv = phi [lo, pre], [iv + step, latch]; carried phis; br (iv < hi), body, exit
//   body:   ...; yield -> phi incomings; br header
//   exit:   results = the header's phis
// With leave_through_wait (a wgmma group in flight across trips), tested once before the loop
// and at the latch instead:
//   pre:    br (lo < hi), header, exit
//   header: phis; br body
//   latch:  br (iv + step < hi), header, last
//   last:   wait for the last trip's group; br exit
//   exit:   results = phi [initial values, pre], [the last trip's, last]
// The bounds are uniform scalars, so every thread runs the same trips (barriers inside the
// body, from layout conversions, are safe).
//
// A step <= 0 fails the launch (the interpreter raises; a GPU loop would never end): one
// compare at loop entry, before any prologue, calls __assertfail (see device_assert; a bare
// trap in kernels that issue wgmma) with the loop's file:line.
#pragma once
#include <functional>
#include <utility>
#include <vector>

#include "lowerer.hpp"
#include "tessel/ir/accessors.hpp"

namespace tessel::lowering {

struct PipelineState;  // pipeline.hpp

class LoopFrame {
 public:
  // Emits the bounds, the step check and the carried values' initial registers (those the role
  // keeps: Lowerer::producer_keeps) at the insert point.
  LoopFrame(Lowerer& L, const ir::Op& op);

  // Branches to the header, makes the induction variable's and the carried values' phis, then
  // `extra_phis` (a schedule's own), then the exit test; continues in the body.
  void open(const std::function<void()>& extra_phis = {});
  // Binds the induction variable and the carried values, emits the body (`pipe`: what its dot
  // reads, Lowerer::lower_block) and reads the yielded values.
  void lower_body(const PipelineState* pipe);
  // The latch: `extra_incomings(latch)` adds a schedule's own phi incomings, then the header's
  // incomings and the back edge; continues at the exit.
  void close(const std::function<void(llvm::BasicBlock*)>& extra_incomings = {});
  // Carries value i (a tile) as its first register only: the body and the results get all its
  // registers from `derive` (the first's phi in, the registers out), emitted at the body's
  // start and after the loop. Call before open().
  void carry_first(int i, std::function<Regs(llvm::Value*)> derive);
  // Carried value `in_flight` (a wgmma accumulator) is still in flight when a trip ends: the
  // loop is then tested once before it (no trip: straight to the exit) and at the latch, and
  // leaves after its last trip through that group's wait (see close). Call before open().
  void leave_through_wait(int in_flight);
  // Binds the loop's results: the header's phis (carried value `in_flight` after the last wgmma
  // group's wait, -1: none; with leave_through_wait, the values of the two ways out).
  void bind_results(int in_flight = -1);

  Lowerer& L;
  const ir::Op& op;
  ir::ForOp loop;
  llvm::Value* lo;
  llvm::Value* hi;
  llvm::Value* step;
  llvm::Type* ivt;
  llvm::PHINode* iv = nullptr;
  int nc;
  std::vector<bool> keep;                 // the role keeps carried value i
  std::vector<const Layout*> lay;         // its layout (null: a scalar)
  std::vector<Regs> init;                 // its initial registers
  // The header's phis of each carried value, and the registers the body and the results see.
  // f16/bf16 tiles are carried in pairs (<2 x half> phis, one 32-bit register each: a rotated
  // attention loop's P stays packed across the back edge, as the wgmma wants it); their
  // registers are the pairs' elements. Other values: one phi per register, `vals` the phis.
  std::vector<std::vector<llvm::PHINode*>> phis;
  std::vector<Regs> vals;
  llvm::BasicBlock* pre = nullptr;
  llvm::BasicBlock* exit = nullptr;

 private:
  std::vector<std::function<Regs(llvm::Value*)>> derive_;  // carry_first
  bool packed(int i) const;  // carried value i is an f16/bf16 tile of an even register count
  Regs pack(const Regs& r);  // its registers as pairs, at the insert point
  Regs unpack(int i, const Regs& r);  // value i's registers from its phis' (pairs when packed)
  std::vector<Regs> next_;
  int leave_waiting_ = -1;               // leave_through_wait's carried value
  llvm::BasicBlock* last_trip_ = nullptr;  // the way out after a last trip (its group waited for)
  // The carried values there (as the header's phis hold them), then (close) the exit's merged ones.
  std::vector<Regs> last_vals_;
  std::vector<Regs> entry_;                // the header's incoming values from before the loop
};

// The trip `k` trips after the one at `iv` (iv + k * step; it wraps when that trip does not
// run) and whether the loop runs it, counted as the interpreter counts (lower_control.cpp).
std::pair<llvm::Value*, llvm::Value*> trip_ahead(Lowerer& L, llvm::Value* iv, llvm::Value* step, int64_t k,
                                                 llvm::Value* hi);

// The schedules (lower_for dispatches on the plan's LoopSchedule for the role being emitted).
void lower_pipelined_loop(Lowerer& L, const ir::Op& op, const PipelinePlan& p);  // lower_pipelined_loop.cpp
void lower_ring_consumer_loop(Lowerer& L, const ir::Op& op, const PipelinePlan& p);  // lower_ring_loop.cpp
void lower_ring_producer_loop(Lowerer& L, const ir::Op& op, const PipelinePlan& p);  // lower_ring_loop.cpp

}  // namespace tessel::lowering
