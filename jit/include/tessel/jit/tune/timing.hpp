// Timing a kernel launch: results, options, the Timer interface and the GPU timer.
#pragma once
#include <functional>
#include <memory>
#include <vector>

namespace tessel::jit::tune {

struct Timing {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  int reps = 0;
  double spread() const;  // (max - min) / median; 0 when median is 0
  friend bool operator==(const Timing&, const Timing&) = default;
};

struct TimerOptions {
  double budget_ms = 200;  // repetitions until this much GPU time (reset, flush, run) is spent, at least min_reps...
  int min_reps = 5;
  int max_reps = 1000;     // ...and at most this many
  int warmup = 2;          // untimed runs first (also estimate the time per run)
  bool flush_l2 = true;    // clear the L2 cache before each repetition
};

// What the tuner times with; tests use a fake one.
class Timer {
 public:
  virtual ~Timer() = default;
  // Times `run` repeatedly (calling `reset` before each repetition, outside the timed region,
  // when given) and returns median/min/max. Throws what `run` throws.
  virtual Timing time(const std::function<void()>& run, const std::function<void()>& reset,
                      const TimerOptions& opts) = 0;
};

// CUDA events on the stream jit launches on (the legacy default stream); the L2 is flushed (a
// memset of a buffer of twice the L2 size) before each repetition. Throws std::runtime_error
// when the current Device is not the GPU.
std::unique_ptr<Timer> make_gpu_timer();

// Host wall-clock time around run() + Device::synchronize(), for the CPU interpreter (or any
// device). Coarse; no L2 flush.
std::unique_ptr<Timer> make_host_timer();

// The median, minimum and maximum of samples (ms); reps = samples.size(). Empty -> all zero.
Timing summarize(std::vector<double> samples_ms);

}  // namespace tessel::jit::tune
