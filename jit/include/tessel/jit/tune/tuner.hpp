// tune(): compile a kernel's configs in parallel, benchmark them in order, check and rank them.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "tessel/jit/tune/config.hpp"
#include "tessel/jit/tune/database.hpp"
#include "tessel/jit/tune/timing.hpp"

namespace tessel::jit::tune {

// One tuning problem: a kernel at one size with inputs allocated on the current Device.
struct Problem {
  std::string kernel;                            // registry name
  std::string key;                               // KeySpec::key_string(...) for this size
  std::function<void(const Config&)> compile;    // compile only (thread-safe; called from worker threads)
  std::function<void(const Config&)> launch;     // launch once (compiles if needed), asynchronous
  std::function<void()> reset;                   // restore inputs/outputs that runs modify (may be empty)
  std::function<std::vector<double>()> output;   // the outputs after one run, for the cross-config check (may be empty)
  double rtol = 1e-5, atol = 1e-6;               // cross-config comparison tolerance
  double bytes = 0, flops = 0;                   // per run, for GB/s, TFLOP/s and the roofline
};

struct Progress {
  int done = 0, total = 0;
  const ConfigResult* last = nullptr;  // the config just finished (valid during the callback)
};

struct TuneOptions {
  double budget_s = 0;        // 0: TimerOptions as given per config; else split evenly across configs
  int compile_threads = 0;    // 0: hardware concurrency
  std::function<bool(const Config&)> prune;  // false -> Status::Pruned, reason "pruned by the kernel's predicate"
  std::function<void(const Progress&)> on_progress;  // once per config, in config order
  TimerOptions timer;
};

struct TuneReport {
  std::vector<ConfigResult> ranked;  // Ok by median time, then pruned/failed with reasons
  Config best;
  bool found = false;                // some config is Ok
  double seconds = 0, compile_seconds = 0;  // wall time of the whole tune, and until the last compile ended
};

// Compiles all configs in parallel on CPU threads while already-compiled ones are benchmarked in
// order on the calling thread; a config that fails to compile/launch gets that status and reason
// (never a crash); each Ok config's output is compared with the first Ok config's (WrongOutput,
// naming the first differing index and both values, when it differs beyond atol + rtol*|ref|).
// Duplicate configs are an std::invalid_argument.
TuneReport tune(const Problem& p, const std::vector<Config>& configs, Timer& timer, const TuneOptions& opts = {});

// Records every result of `r` for `k` in `db`.
void record(Database& db, const DbKey& k, const TuneReport& r);

}  // namespace tessel::jit::tune
