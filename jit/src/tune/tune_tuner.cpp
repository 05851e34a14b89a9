// tune(): parallel compilation on worker threads, in-order benchmarking on the calling thread.
#include "tessel/jit/tune/tuner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "tessel/ir/error.hpp"
#include "tessel/jit/device.hpp"

namespace tessel::jit::tune {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The message of the exception in flight, with the kind of error where it says something.
std::string describe_current_exception() {
  try {
    throw;
  } catch (const CompileError& e) {
    return e.what();
  } catch (const InternalError& e) {
    return std::string("internal error: ") + e.what();
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

// Compile outcomes shared between the workers and the benchmarking thread.
struct CompileBoard {
  enum State { Pending, Done, Failed, Skipped, TooLarge };
  std::mutex mu;
  std::condition_variable cv;
  std::vector<State> state;
  std::vector<std::string> error;
  Clock::time_point last_end;
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
};

// Workers take configs in order, so the one benchmarked next is compiled first.
void compile_worker(const Problem& p, const std::vector<Config>& configs, const std::vector<size_t>& todo,
                    CompileBoard& b) {
  while (!b.stop) {
    const size_t t = b.next++;
    if (t >= todo.size()) return;
    const size_t i = todo[t];
    CompileBoard::State s = CompileBoard::Done;
    std::string err;
    try {
      if (p.compile) p.compile(configs[i]);
    } catch (const ResourceLimitError& e) {
      // Not a failure: a config whose tiles cannot fit the registers is one a predicate would
      // have pruned (large blocks on few warps), found out by the compiler instead.
      s = CompileBoard::TooLarge;
      err = e.what();
    } catch (const ConfigPruned& e) {  // spills (Autotune::prune_spills): pruned, not failed
      s = CompileBoard::TooLarge;
      err = e.what();
    } catch (...) {
      s = CompileBoard::Failed;
      err = describe_current_exception();
    }
    std::lock_guard lock(b.mu);
    b.state[i] = s;
    b.error[i] = std::move(err);
    b.last_end = Clock::now();
    b.cv.notify_all();
  }
}

// Joins the workers on every way out of tune(), telling them to stop taking new configs.
struct Workers {
  CompileBoard& board;
  std::vector<std::thread> threads;
  ~Workers() {
    board.stop = true;
    for (auto& t : threads) t.join();
  }
};

}  // namespace

bool value_matches(double got, double want, double tolerance) {
  if ((std::isnan(got) && std::isnan(want)) || got == want) return true;  // equal infinities too
  return std::abs(got - want) <= tolerance;                              // NaN differs
}

namespace {

// "" when `got` matches `want` within tolerance (tol[i] when given, else atol + rtol * |want[i]|),
// else how many values differ and the first one: "differs from <whom> at 3 of 1001 values; the
// first at index 17: 1.5 here, 2.25 <there> (tolerance 2.3e-07)".
std::string describe_difference(const std::vector<double>& got, const std::vector<double>& want,
                                const std::vector<double>& tol, double rtol, double atol, const std::string& whom,
                                const char* there) {
  if (got.size() != want.size()) return fmt::format("output has {} values, {} {}", got.size(), whom, want.size());
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!value_matches(got[i], want[i], tolerance_at(tol, i, want[i], rtol, atol)) && bad++ == 0) first = i;
  if (bad == 0) return "";
  const double t = tolerance_at(tol, first, want[first], rtol, atol);
  return fmt::format("differs from {} at {} of {} values; the first at index {}: {} here, {} {} (tolerance {:.3g})",
                     whom, bad, got.size(), first, got[first], want[first], there, t);
}

// Judges the checked runs' outputs. With a host reference each output is compared with it as it
// comes. Without one, outputs that agree form groups, and a config is accepted only once its
// group holds a strict majority of the configs that ran or may still run: no single config,
// the first included, is ever the yardstick for the others.
class OutputJudge {
 public:
  OutputJudge(const Problem& p, std::vector<ConfigResult>& results, std::vector<bool>& decided)
      : p_(p), results_(results), decided_(decided), group_of_(results.size(), -1) {}

  bool by_majority() const { return !p_.reference && p_.output; }

  // Calls the reference once (before the first checked run changes anything).
  void prepare() {
    if (!p_.reference || expected_) return;
    Expected e;
    try {
      e = p_.reference();
    } catch (...) {
      throw std::runtime_error(
          fmt::format("tune {}: the host reference failed: {}", p_.kernel, describe_current_exception()));
    }
    if (!e.tolerance.empty() && e.tolerance.size() != e.values.size())
      throw std::invalid_argument(fmt::format("tune {}: the host reference has {} values but {} tolerances",
                                              p_.kernel, e.values.size(), e.tolerance.size()));
    expected_ = std::make_unique<Expected>(std::move(e));
  }

  // The output of config i's checked run. Decides it now, except by majority (see resolve).
  void judge(size_t i, std::vector<double> out) {
    ConfigResult& r = results_[i];
    if (expected_) {
      std::string diff = describe_difference(out, expected_->values, expected_->tolerance, p_.rtol, p_.atol,
                                             "the host reference", "expected");
      if (!diff.empty()) {
        r.status = Status::WrongOutput;
        r.reason = std::move(diff);
      }
      decided_[i] = true;
      return;
    }
    if (!by_majority()) {
      decided_[i] = true;
      return;
    }
    for (size_t g = 0; g < groups_.size(); ++g)
      if (describe_difference(out, groups_[g].output, {}, p_.rtol, p_.atol, "", "").empty()) {
        group_of_[i] = static_cast<int>(g);
        ++groups_[g].members;
        return;
      }
    group_of_[i] = static_cast<int>(groups_.size());
    groups_.push_back({std::move(out), i, 1});
  }

  // Decides the configs judged by majority that can be decided now, `remaining` configs (not
  // pruned) being still to run. A group holding more than half of all that ran or may run wins;
  // once none may run, no majority rejects every config that ran.
  void resolve(size_t remaining) {
    if (!by_majority()) return;
    size_t ran = 0;
    for (const Group& g : groups_) ran += g.members;
    const size_t potential = ran + remaining;
    int winner = -1;
    for (size_t g = 0; g < groups_.size(); ++g)
      if (2 * groups_[g].members > potential) winner = static_cast<int>(g);
    if (winner < 0 && remaining > 0) return;
    for (size_t i = 0; i < results_.size(); ++i) {
      if (group_of_[i] < 0 || decided_[i]) continue;
      decided_[i] = true;
      const int g = group_of_[i];
      if (g == winner) continue;
      ConfigResult& r = results_[i];
      r.status = Status::WrongOutput;
      if (winner >= 0) {
        const Group& w = groups_[static_cast<size_t>(winner)];
        r.reason = "no host reference; " +
                   describe_difference(groups_[static_cast<size_t>(g)].output, w.output, {}, p_.rtol, p_.atol,
                                       fmt::format("the majority's output ({}: {} of the configs agree)",
                                                   results_[w.first].config.str(), w.members),
                                       "there");
      } else {
        // Compared with the largest other group: some other output, to say how they differ.
        size_t other = g == 0 ? 1 : 0;
        for (size_t h = 0; h < groups_.size(); ++h)
          if (static_cast<int>(h) != g && groups_[h].members > groups_[other].members) other = h;
        r.reason = fmt::format(
            "no host reference and no majority: the {} configs that ran gave {} different outputs; this one {}", ran,
            groups_.size(),
            describe_difference(groups_[static_cast<size_t>(g)].output, groups_[other].output, {}, p_.rtol, p_.atol,
                                results_[groups_[other].first].config.str(), "there"));
      }
    }
  }

 private:
  struct Group {
    std::vector<double> output;  // its first member's
    size_t first;                // that member
    size_t members;
  };
  const Problem& p_;
  std::vector<ConfigResult>& results_;
  std::vector<bool>& decided_;
  std::unique_ptr<Expected> expected_;
  std::vector<Group> groups_;
  std::vector<int> group_of_;  // -1: not judged by majority
};

}  // namespace

TuneReport tune(const Problem& p, const std::vector<Config>& configs, Timer& timer, const TuneOptions& opts) {
  const auto t0 = Clock::now();
  for (size_t i = 0; i < configs.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (configs[i] == configs[j])
        throw std::invalid_argument(fmt::format("tune {}: config '{}' is given twice", p.kernel, configs[i].str()));
  if (!p.launch) throw std::invalid_argument(fmt::format("tune {}: the problem has no launch function", p.kernel));
  if (p.reference && !p.output)
    throw std::invalid_argument(fmt::format("tune {}: the problem has a reference but no output to check", p.kernel));

  const size_t n = configs.size();
  std::vector<ConfigResult> results(n);
  CompileBoard board;
  board.state.assign(n, CompileBoard::Pending);
  board.error.assign(n, "");
  board.last_end = t0;
  std::vector<size_t> todo;
  for (size_t i = 0; i < n; ++i) {
    results[i].config = configs[i];
    if (opts.prune && !opts.prune(configs[i])) {
      board.state[i] = CompileBoard::Skipped;
      results[i].status = Status::Pruned;
      results[i].reason = "pruned by the kernel's predicate";
    } else {
      todo.push_back(i);
    }
  }

  TimerOptions topts = opts.timer;
  if (opts.budget_s > 0 && !todo.empty()) topts.budget_ms = opts.budget_s * 1000.0 / static_cast<double>(todo.size());

  Workers workers{board, {}};
  int threads = opts.compile_threads > 0 ? opts.compile_threads : static_cast<int>(std::thread::hardware_concurrency());
  threads = std::clamp<int>(threads, 1, std::max<int>(1, static_cast<int>(todo.size())));
  // The workers compile for the caller's current device (a thread starts on device 0).
  Device& device = Device::current();
  if (!todo.empty())
    for (int t = 0; t < threads; ++t)
      workers.threads.emplace_back([&, dev = &device] {
        Device::set_current(*dev);
        compile_worker(p, configs, todo, board);
      });

  std::vector<bool> decided(n, false);  // the status is final (timing aside)
  OutputJudge judge(p, results, decided);
  Progress progress{0, static_cast<int>(n), nullptr};
  size_t reported = 0;  // configs [0, reported) are timed and reported
  // Times the decided configs in order, from the first not yet reported, and reports them.
  auto report_decided = [&] {
    for (; reported < n && decided[reported]; ++reported) {
      ConfigResult& r = results[reported];
      if (r.status == Status::Ok) {
        try {
          r.timing = timer.time([&] { p.launch(r.config); }, p.reset, topts);
        } catch (const ConfigPruned& e) {
          r.status = Status::Pruned;
          r.reason = e.what();
        } catch (...) {
          r.status = Status::LaunchError;
          r.reason = describe_current_exception();
        }
      }
      if (r.status != Status::Ok) r.timing = {};
      ++progress.done;
      progress.last = &r;
      if (opts.on_progress) opts.on_progress(progress);
    }
  };
  size_t remaining = todo.size();  // configs not pruned whose checked run is still to come
  for (size_t i = 0; i < n; ++i) {
    ConfigResult& r = results[i];
    CompileBoard::State state;
    {
      std::unique_lock lock(board.mu);
      board.cv.wait(lock, [&] { return board.state[i] != CompileBoard::Pending; });
      state = board.state[i];
      if (state == CompileBoard::Failed || state == CompileBoard::TooLarge) r.reason = board.error[i];
    }
    decided[i] = true;  // unless the majority decides it
    if (state == CompileBoard::Failed) {
      r.status = Status::CompileError;
    } else if (state == CompileBoard::TooLarge) {
      r.status = Status::Pruned;
    } else if (state == CompileBoard::Done) {
      // One checked run first: a launch error surfaces here, and its output is judged.
      judge.prepare();  // outside the try: a failing reference is the problem's fault, not this config's
      std::vector<double> out;
      bool launched = false;
      try {
        if (p.poison) p.poison();
        if (p.reset) p.reset();
        p.launch(r.config);
        Device::current().synchronize();
        if (p.output) out = p.output();
        launched = true;
      } catch (const ConfigPruned& e) {
        r.status = Status::Pruned;
        r.reason = e.what();
      } catch (...) {
        r.status = Status::LaunchError;
        r.reason = describe_current_exception();
      }
      if (launched) {
        decided[i] = false;
        judge.judge(i, std::move(out));
      }
    }
    if (state != CompileBoard::Skipped) --remaining;
    judge.resolve(remaining);
    report_decided();
  }
  judge.resolve(0);
  report_decided();

  TuneReport rep;
  {
    std::lock_guard lock(board.mu);
    rep.compile_seconds = todo.empty() ? 0.0 : std::chrono::duration<double>(board.last_end - t0).count();
  }
  rep.ranked = rank(std::move(results));
  if (!rep.ranked.empty() && rep.ranked.front().status == Status::Ok) {
    rep.best = rep.ranked.front().config;
    rep.found = true;
  }
  rep.seconds = seconds_since(t0);
  return rep;
}

void record(Database& db, const DbKey& k, const TuneReport& r) {
  for (const ConfigResult& c : r.ranked) db.record(k, c);
}

}  // namespace tessel::jit::tune
