// The emitter's side of the planned shared memory (KernelPlan::shared, plan/shared_walk.hpp):
// the steps it takes (a slot taken, pinned, unpinned or read again, a barrier, a loop's begin,
// latch and exit) are checked one by one against the plan's, and the decisions it needs on the
// way (a request's slot and whether a barrier comes first, a latch's barrier, a conversion's
// budget) are read from the plan in the order it asks. A step the plan does not have is an
// internal error naming both (the plan's walk and the emitter went apart: a lowering bug).
#pragma once
#include <cstddef>
#include <string>

#include "plan/shared_slots.hpp"

namespace tessel::lowering {

class SharedSteps {
 public:
  SharedSteps(const SharedPlan& plan, std::string kernel) : plan_(plan), kernel_(std::move(kernel)) {}

  SharedSlots::Choice next_request();  // the next request's slot, and whether a barrier comes first
  bool next_latch_barrier();           // whether the next loop latch needs a barrier
  int64_t next_budget();               // the next layout conversion's budget
  void step(const SharedSlots::Event& e);  // the emitter takes step `e`: it must be the plan's next
  void finish() const;                     // after the kernel: every planned step was taken

 private:
  [[noreturn]] void differ(const std::string& what) const;
  const SharedPlan& plan_;
  std::string kernel_;
  size_t event_ = 0, request_ = 0, latch_ = 0, budget_ = 0;
};

}  // namespace tessel::lowering
