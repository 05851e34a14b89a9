// tune(): compile a kernel's configs in parallel, benchmark them in order, check and rank them.
#pragma once
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessel/jit/tune/config.hpp"
#include "tessel/jit/tune/database.hpp"
#include "tessel/jit/tune/timing.hpp"

namespace tessel::jit::tune {

// Thrown by Problem::compile or Problem::launch for a config that is no failure but must not be
// used here (its code spills registers to local memory): tune() reports it as Status::Pruned with
// what() as the reason, as it does a ResourceLimitError.
class ConfigPruned : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a correct run leaves in Problem::output, computed on the host without running any
// config: the reference every config's output is checked against.
struct Expected {
  std::vector<double> values;  // one per value Problem::output returns, in the same order
  // Optional, one per value: the largest |output - value| accepted there, for bounds that are not
  // atol + rtol * |value| (a dot product's error grows with sum |a_k b_k|; f32 statistics next to
  // f16 storage). Empty: Problem::atol + Problem::rtol * |value| everywhere.
  std::vector<double> tolerance;
};

// One tuning problem: a kernel at one size with inputs allocated on the current Device.
struct Problem {
  std::string kernel;                            // registry name
  std::string key;                               // KeySpec::key_string(...) for this size
  std::function<void(const Config&)> compile;    // compile only (thread-safe; called from worker threads)
  std::function<void(const Config&)> launch;     // launch once (compiles if needed), asynchronous
  std::function<void()> reset;                   // restore inputs/outputs that runs modify (may be empty)
  std::function<std::vector<double>()> output;   // the outputs after one run, for the check (may be empty)
  // The host reference for output() (may be empty): called once, on the calling thread, before
  // the first checked run, while no config has run yet.
  std::function<Expected()> reference;
  // Fills the output buffers with values no correct run leaves (NaN), so a config that writes only
  // part of its output cannot pass on what an earlier config wrote. Called before each checked
  // run, before reset (may be empty).
  std::function<void()> poison;
  // The check's tolerance, atol + rtol * |expected| (where the reference gives no per-value
  // tolerance), also used between two configs' outputs (the majority check, tessel bench).
  double rtol = 1e-5, atol = 1e-6;
  double bytes = 0, flops = 0;                   // per run, for GB/s, TFLOP/s and the roofline
  // The kernel's own prune at this problem (Autotune::prune with this problem's ProblemInfo; may
  // be empty: keep every config). tune() does not call it: callers put it in TuneOptions::prune.
  std::function<bool(const Config&)> keep;
  // Whatever the functions above use and the caller does not hold (a workload's random inputs):
  // kept alive as long as the problem (may be empty).
  std::shared_ptr<const void> inputs;
};

struct Progress {
  int done = 0, total = 0;
  const ConfigResult* last = nullptr;  // the config just finished (valid during the callback)
};

struct TuneOptions {
  double budget_s = 0;        // 0: `timer` per config (its budget_ms); else split evenly across configs
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
// (never a crash). Before a config is timed, one checked run (poison, reset, launch, output)
// decides whether its output is right:
// - with Problem::reference, each config's output is compared with the host reference; one that
//   differs beyond the tolerance is WrongOutput (the reason names the first differing index, both
//   values and how many differ), never timed and never chosen. No config is a reference for another.
// - without one (Problem::output only), configs are compared with each other and a config is
//   accepted only when its output agrees with a strict majority of the configs that ran: the
//   others are WrongOutput; when no output has a majority (two configs that disagree), every
//   config that ran is WrongOutput and found is false. A config is timed once its group's
//   majority is certain, so progress still reports each config once, in order, final.
// - without output, nothing is checked.
// Duplicate configs, a reference without an output, or a reference whose tolerance list does not
// match its values are an std::invalid_argument; a reference that throws stops the tuning (its
// error, with the kernel's name, as std::runtime_error).
TuneReport tune(const Problem& p, const std::vector<Config>& configs, Timer& timer, const TuneOptions& opts = {});

// The output check's rule for one value, shared by tune(), `tessel run` and `tessel bench`:
// equal values (infinities included) and two NaNs match; otherwise |got - want| <= tolerance
// (a NaN on one side never does).
bool value_matches(double got, double want, double tolerance);
// The tolerance at value i: `per_value[i]` when given (Expected::tolerance), else atol + rtol * |want|.
inline double tolerance_at(const std::vector<double>& per_value, size_t i, double want, double rtol, double atol) {
  return per_value.empty() ? atol + rtol * (want < 0 ? -want : want) : per_value[i];
}

// Records every result of `r` for `k` in `db`.
void record(Database& db, const DbKey& k, const TuneReport& r);

}  // namespace tessel::jit::tune
