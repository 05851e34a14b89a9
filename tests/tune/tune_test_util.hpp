// Shared helpers of the autotuner tests: temp dirs, scoped env vars, a scripted fake timer.
#pragma once
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include "../common/scoped_fs_env.hpp"
#include "tessel/jit/tune/timing.hpp"

namespace tune_test {

namespace fs = std::filesystem;
namespace tune = tessel::jit::tune;

using tessel_test::EnvVar;
using tessel_test::TempDir;

// Returns scripted times: `next` is asked which time the run being timed takes (the tests set it
// from the config launched last), and run() and reset() are really called, `reps` times.
class FakeTimer final : public tune::Timer {
 public:
  std::function<double()> next;  // the time of the current config
  int calls = 0, runs = 0, resets = 0;
  int reps = 3;
  tune::Timing time(const std::function<void()>& run, const std::function<void()>& reset,
                    const tune::TimerOptions& opts) override {
    ++calls;
    last_opts = opts;
    std::vector<double> samples;
    for (int i = 0; i < reps; ++i) {
      if (reset) {
        reset();
        ++resets;
      }
      run();
      ++runs;
      samples.push_back(next() * (1.0 + 0.01 * i));
    }
    return tune::summarize(samples);
  }
  tune::TimerOptions last_opts;
};

}  // namespace tune_test
