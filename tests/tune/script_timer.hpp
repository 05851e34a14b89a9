// A scripted timer for the launch_tuned tests (autotune_test.cpp, autotune_api_test.cpp): the
// factory's timers return times by call and really run the kernel, recording what they were asked.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <random>
#include <vector>

#include "tessel/tessel.hpp"

namespace tune_test {

inline std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-50.0f, 50.0f);
  std::vector<float> v(n);
  for (float& f : v) f = d(rng);
  return v;
}

inline std::vector<tessel::jit::tune::Config> block_configs(std::initializer_list<int64_t> bs, int warps = 4) {
  std::vector<tessel::jit::tune::Config> cs;
  for (int64_t b : bs) cs.push_back(tessel::jit::tune::Config{tessel::jit::Meta{{"BLOCK", b}}, {warps, 1}});
  return cs;
}

// Times by call: the i-th time() across all timers made by the factory returns times[i % size]
// after really running (reset, run) `reps` times; the options of each call are kept in order.
struct Script {
  std::vector<double> times;
  std::atomic<int> made{0}, calls{0}, runs{0};
  int reps = 2;
  std::mutex mu;
  std::vector<tessel::jit::tune::TimerOptions> opts;
};

class ScriptTimer final : public tessel::jit::tune::Timer {
 public:
  explicit ScriptTimer(Script& s) : s_(s) {}
  tessel::jit::tune::Timing time(const std::function<void()>& run, const std::function<void()>& reset,
                                 const tessel::jit::tune::TimerOptions& o) override {
    {
      std::lock_guard lock(s_.mu);
      s_.opts.push_back(o);
    }
    const double t = s_.times[s_.calls++ % s_.times.size()];
    for (int i = 0; i < s_.reps; ++i) {
      if (reset) reset();
      run();
      ++s_.runs;
    }
    return tessel::jit::tune::summarize({t});
  }

 private:
  Script& s_;
};

// Installs a factory of ScriptTimers for the scope.
struct ScopedFactory {
  explicit ScopedFactory(Script& s) {
    tessel::jit::tune::set_timer_factory([&s] {
      ++s.made;
      return std::make_unique<ScriptTimer>(s);
    });
  }
  ~ScopedFactory() { tessel::jit::tune::set_timer_factory(nullptr); }
};

inline tessel::jit::Grid grid_for(int64_t n, const tessel::jit::Meta& m) {
  return tessel::jit::Grid{tessel::jit::cdiv(n, m["BLOCK"])};
}

}  // namespace tune_test
