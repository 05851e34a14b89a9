// Event: cuEvent create/record/synchronize and elapsed time.
#include "tessel/runtime/event.hpp"

#include <utility>

#include "release.hpp"
#include "tessel/runtime/driver.hpp"
#include "tessel/runtime/error.hpp"

namespace tessel::rt {

Event::Event(unsigned flags) { check(cu().EventCreate(&event_, flags), "cuEventCreate"); }

// Destroy errors are noted, never thrown: destructors cannot throw and the handle is unusable anyway.
static void destroy_event(CUevent e) noexcept {
  if (e != nullptr) detail::release_call("cuEventDestroy", [&](const DriverApi& api) { return api.EventDestroy(e); });
}

Event::~Event() { destroy_event(event_); }

Event::Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    destroy_event(event_);
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

void Event::record(CUstream stream) { check(cu().EventRecord(event_, stream), "cuEventRecord"); }

void Event::synchronize() const { check(cu().EventSynchronize(event_), "cuEventSynchronize"); }

float Event::elapsed_ms(const Event& start, const Event& stop) {
  float ms = 0.0f;
  check(cu().EventElapsedTime(&ms, start.event_, stop.event_), "cuEventElapsedTime");
  return ms;
}

}  // namespace tessel::rt
