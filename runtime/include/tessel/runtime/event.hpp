// Event: an owned CUevent for ordering and GPU-side timing.
#pragma once
#include <cuda.h>

namespace tessel::rt {

// A CUDA event of the current context. Movable, not copyable. Created with timing
// enabled unless flags say CU_EVENT_DISABLE_TIMING.
class Event {
 public:
  explicit Event(unsigned flags = CU_EVENT_DEFAULT);
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  void record(CUstream stream = nullptr);
  void synchronize() const;
  CUevent handle() const { return event_; }

  // Milliseconds between two recorded, completed events (start recorded first).
  static float elapsed_ms(const Event& start, const Event& stop);

 private:
  CUevent event_ = nullptr;
};

}  // namespace tessel::rt
