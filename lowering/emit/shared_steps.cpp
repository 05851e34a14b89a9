#include "shared_steps.hpp"

#include <fmt/format.h>

#include "tessel/ir/error.hpp"

namespace tessel::lowering {

void SharedSteps::differ(const std::string& what) const {
  internal_error(__FILE__, __LINE__, fmt::format("kernel '{}': the emitter's shared-memory use left the plan's: {}", kernel_, what));
}

SharedSlots::Choice SharedSteps::next_request() {
  if (request_ >= plan_.requests.size()) differ(fmt::format("request {} is not planned", request_));
  return plan_.requests[request_++];
}

bool SharedSteps::next_latch_barrier() {
  if (latch_ >= plan_.latch_barriers.size()) differ(fmt::format("loop latch {} is not planned", latch_));
  return plan_.latch_barriers[latch_++];
}

int64_t SharedSteps::next_budget() {
  if (budget_ >= plan_.budgets.size()) differ(fmt::format("conversion budget {} is not planned", budget_));
  return plan_.budgets[budget_++];
}

void SharedSteps::step(const SharedSlots::Event& e) {
  if (event_ < plan_.events.size() && plan_.events[event_] == e) {
    ++event_;
    return;
  }
  differ(fmt::format("step {} of {} is '{}' in the plan, '{}' in the emitter", event_, plan_.events.size(),
                     event_ < plan_.events.size() ? plan_.events[event_].str() : "(none)", e.str()));
}

void SharedSteps::finish() const {
  if (event_ != plan_.events.size() || request_ != plan_.requests.size() || latch_ != plan_.latch_barriers.size() ||
      budget_ != plan_.budgets.size())
    differ(fmt::format("the emitter took {} of {} steps, {} of {} requests, {} of {} latches, {} of {} budgets", event_,
                       plan_.events.size(), request_, plan_.requests.size(), latch_, plan_.latch_barriers.size(),
                       budget_, plan_.budgets.size()));
}

}  // namespace tessel::lowering
