// Shared helpers of the autotuner tests: temp dirs, scoped env vars, a scripted fake timer.
#pragma once
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include "tessel/jit/tune/timing.hpp"

namespace tune_test {

namespace fs = std::filesystem;
namespace tune = tessel::jit::tune;

// A fresh directory, removed with its contents at scope exit.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "tessel-tune-test-XXXXXX").string();
    if (!::mkdtemp(t.data())) throw std::runtime_error("mkdtemp failed");
    path = t;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// Sets (or unsets, with nullopt) an environment variable and restores it at scope exit.
struct EnvVar {
  std::string name;
  std::optional<std::string> old;
  EnvVar(std::string n, std::optional<std::string> value) : name(std::move(n)) {
    if (const char* v = std::getenv(name.c_str())) old = v;
    if (value) ::setenv(name.c_str(), value->c_str(), 1);
    else ::unsetenv(name.c_str());
  }
  ~EnvVar() {
    if (old) ::setenv(name.c_str(), old->c_str(), 1);
    else ::unsetenv(name.c_str());
  }
};

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
