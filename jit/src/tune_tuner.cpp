// tune(): parallel compilation on worker threads, in-order benchmarking on the calling thread.
#include "tessel/jit/tune/tuner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
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
  enum State { Pending, Done, Failed, Skipped };
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

// "" when `got` matches `want` within tolerance, else where and how it differs.
std::string compare_outputs(const std::vector<double>& got, const std::vector<double>& want, double rtol, double atol,
                            const Config& reference) {
  if (got.size() != want.size())
    return fmt::format("output has {} values, the first Ok config ({}) gave {}", got.size(), reference.str(),
                       want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    const bool both_nan = std::isnan(g) && std::isnan(w);
    if (both_nan || g == w) continue;  // equal infinities too
    if (!(std::abs(g - w) <= atol + rtol * std::abs(w)))
      return fmt::format("output differs at index {}: {} here, {} with the first Ok config ({})", i, g, w,
                         reference.str());
  }
  return "";
}

}  // namespace

TuneReport tune(const Problem& p, const std::vector<Config>& configs, Timer& timer, const TuneOptions& opts) {
  const auto t0 = Clock::now();
  for (size_t i = 0; i < configs.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (configs[i] == configs[j])
        throw std::invalid_argument(fmt::format("tune {}: config '{}' is given twice", p.kernel, configs[i].str()));
  if (!p.launch) throw std::invalid_argument(fmt::format("tune {}: the problem has no launch function", p.kernel));

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
  if (!todo.empty())
    for (int t = 0; t < threads; ++t)
      workers.threads.emplace_back(compile_worker, std::cref(p), std::cref(configs), std::cref(todo), std::ref(board));

  std::vector<double> reference;  // the first Ok config's output
  const Config* reference_config = nullptr;
  Progress progress{0, static_cast<int>(n), nullptr};
  for (size_t i = 0; i < n; ++i) {
    ConfigResult& r = results[i];
    CompileBoard::State state;
    {
      std::unique_lock lock(board.mu);
      board.cv.wait(lock, [&] { return board.state[i] != CompileBoard::Pending; });
      state = board.state[i];
      if (state == CompileBoard::Failed) r.reason = board.error[i];
    }
    if (state == CompileBoard::Failed) {
      r.status = Status::CompileError;
    } else if (state == CompileBoard::Done) {
      // One checked run first: a launch error surfaces here, and its output is compared.
      std::vector<double> out;
      bool launched = false;
      try {
        if (p.reset) p.reset();
        p.launch(r.config);
        Device::current().synchronize();
        if (p.output) out = p.output();
        launched = true;
      } catch (...) {
        r.status = Status::LaunchError;
        r.reason = describe_current_exception();
      }
      if (launched && p.output) {
        if (!reference_config) {
          reference = std::move(out);
          reference_config = &r.config;
        } else if (std::string diff = compare_outputs(out, reference, p.rtol, p.atol, *reference_config);
                   !diff.empty()) {
          r.status = Status::WrongOutput;
          r.reason = std::move(diff);
        }
      } else if (launched && !reference_config) {
        reference_config = &r.config;
      }
      if (launched && r.status == Status::Ok) {
        try {
          r.timing = timer.time([&] { p.launch(r.config); }, p.reset, topts);
        } catch (...) {
          r.status = Status::LaunchError;
          r.reason = describe_current_exception();
        }
      }
    }
    if (r.status != Status::Ok) r.timing = {};
    ++progress.done;
    progress.last = &r;
    if (opts.on_progress) opts.on_progress(progress);
  }

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
