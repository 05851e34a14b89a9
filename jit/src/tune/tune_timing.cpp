// Timing summaries and the host wall-clock timer.
#include <algorithm>
#include <chrono>

#include "tessel/jit/device.hpp"
#include "tessel/jit/tune/timing.hpp"

namespace tessel::jit::tune {

double Timing::spread() const { return median_ms > 0 ? (max_ms - min_ms) / median_ms : 0.0; }

Timing summarize(std::vector<double> s) {
  Timing t;
  if (s.empty()) return t;
  std::sort(s.begin(), s.end());
  const size_t n = s.size();
  t.median_ms = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
  t.min_ms = s.front();
  t.max_ms = s.back();
  t.reps = static_cast<int>(n);
  return t;
}

namespace {

// Times each repetition on the host around run() and a device synchronize, so asynchronous
// launches are counted to completion.
class HostTimer final : public Timer {
 public:
  Timing time(const std::function<void()>& run, const std::function<void()>& reset, const TimerOptions& o) override {
    using Clock = std::chrono::steady_clock;
    Device& dev = Device::current();
    auto once = [&] {
      if (reset) reset();
      dev.synchronize();
      const auto t0 = Clock::now();
      run();
      dev.synchronize();
      return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    };
    for (int i = 0; i < o.warmup; ++i) once();
    std::vector<double> samples;
    double spent = 0;
    while (static_cast<int>(samples.size()) < std::max(o.min_reps, 1) ||
           (spent < o.budget_ms && static_cast<int>(samples.size()) < o.max_reps)) {
      samples.push_back(once());
      spent += samples.back();
    }
    return summarize(std::move(samples));
  }
};

}  // namespace

std::unique_ptr<Timer> make_host_timer() { return std::make_unique<HostTimer>(); }

}  // namespace tessel::jit::tune
