// The GPU timer: CUDA events around each run on the launch stream, L2 flushed between runs.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "tessel/jit/device.hpp"
#include "tessel/jit/tune/timing.hpp"

#ifdef TESSEL_HAS_LOWERING
#include "tessel/runtime/runtime.hpp"
#endif

namespace tessel::jit::tune {

#ifdef TESSEL_HAS_LOWERING
namespace {

// CudaKernel::launch (cuda_device.cpp) launches on the legacy default stream, so the events are
// recorded there too: they then bracket exactly the work run() enqueues.
constexpr CUstream kLaunchStream = nullptr;

class GpuTimer final : public Timer {
 public:
  explicit GpuTimer(int ordinal) : ctx_(ordinal, /*make_current=*/false) {
    rt::ScopedContext scope(ctx_.handle());
    span_.resize(2);
    const int l2 = ctx_.device().l2_bytes();
    // Twice the L2 evicts everything a run left there; 256 MiB when the driver does not say.
    flush_ = rt::DeviceBuffer(l2 > 0 ? 2 * static_cast<size_t>(l2) : size_t{256} << 20);
  }

  ~GpuTimer() override {
    try {  // freed in the device's context, the caller's put back
      rt::ScopedContext scope(ctx_.handle());
      events_.clear();
      span_.clear();
      flush_ = rt::DeviceBuffer();
    } catch (...) {
    }
  }

  Timing time(const std::function<void()>& run, const std::function<void()>& reset, const TimerOptions& o) override {
    rt::ScopedContext scope(ctx_.handle());  // the caller may be any thread, with any context current
    // Warm-up runs, timed as a whole: the GPU time one repetition really costs (reset, L2 flush
    // and run) sets the number of repetitions, so the budget bounds the tuning time, not just
    // the kernel's share of it (a flush can cost more than a small kernel).
    const int warm = std::max(o.warmup, 1);
    reserve(warm);
    span_[0].record(kLaunchStream);
    for (int i = 0; i < warm; ++i) once(run, reset, o, i);
    span_[1].record(kLaunchStream);
    span_[1].synchronize();
    const double est = std::max<double>(rt::Event::elapsed_ms(span_[0], span_[1]) / warm, 1e-4);

    const int lo = std::max(o.min_reps, 1);
    const int hi = std::max(o.max_reps, lo);
    const int reps = std::clamp(static_cast<int>(std::ceil(o.budget_ms / est)), lo, hi);
    reserve(reps);
    for (int i = 0; i < reps; ++i) once(run, reset, o, i);
    events_[2 * (reps - 1) + 1].synchronize();
    std::vector<double> samples(reps);
    for (int i = 0; i < reps; ++i) samples[i] = rt::Event::elapsed_ms(events_[2 * i], events_[2 * i + 1]);
    return summarize(std::move(samples));
  }

 private:
  void reserve(int reps) {
    while (events_.size() < 2 * static_cast<size_t>(reps)) events_.emplace_back();
  }
  void once(const std::function<void()>& run, const std::function<void()>& reset, const TimerOptions& o, int i) {
    if (reset) reset();
    if (o.flush_l2) rt::check(rt::cu().MemsetD8(flush_.ptr(), static_cast<unsigned char>(i), flush_.size()), "cuMemsetD8");
    events_[2 * i].record(kLaunchStream);
    run();
    events_[2 * i + 1].record(kLaunchStream);
  }

  rt::Context ctx_;
  rt::DeviceBuffer flush_;
  std::vector<rt::Event> events_;  // start, stop per repetition, reused across calls
  std::vector<rt::Event> span_;    // around the warm-up (two, made in the device's context)
};

}  // namespace

std::unique_ptr<Timer> make_gpu_timer() {
  Device& dev = Device::current();
  if (dev.kind() != BackendKind::Cuda)
    throw std::runtime_error(fmt::format("the GPU timer needs the GPU; the current device is the {}", dev.describe()));
  return std::make_unique<GpuTimer>(dev.ordinal());
}

#else

std::unique_ptr<Timer> make_gpu_timer() {
  throw std::runtime_error("the GPU timer needs the GPU; this build of tessel has no GPU backend");
}

#endif

}  // namespace tessel::jit::tune
