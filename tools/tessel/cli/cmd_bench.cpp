// `tessel bench`: time the tuned config (from the database) against the untuned default, per size.
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "tessel/jit/device.hpp"
#include "tessel/jit/tune/tuner.hpp"
#include "tessel/report/report_table.hpp"
#include "tune_common.hpp"

namespace tessel::cli {
namespace {
namespace tune = jit::tune;
namespace report = samples::report;

struct BenchArgs {
  std::vector<std::string> names;
  bool all = false, as_json = false, interpret = false;
  std::string sizes, db;
  double budget = 0;
  int device = 0;           // --device
  bool host_timer = false;  // hidden, for tests: wall-clock timing on any device (the interpreter too)
};

struct Measured {
  tune::Config config;
  tune::Timing timing;
  std::vector<double> output;
};

Measured measure(const tune::Problem& p, const tune::Config& c, tune::Timer& timer, const tune::TimerOptions& o) {
  p.compile(c);
  Measured m{c, timer.time([&] { p.launch(c); }, p.reset, o), {}};
  if (p.output) m.output = p.output();
  return m;
}

// The first index where the outputs differ beyond the problem's tolerance, or -1.
int64_t first_difference(const tune::Problem& p, const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return 0;
  for (size_t i = 0; i < a.size(); ++i)
    if (!tune::value_matches(b[i], a[i], tune::tolerance_at({}, i, a[i], p.rtol, p.atol))) return static_cast<int64_t>(i);
  return -1;
}

nlohmann::ordered_json timing_json(const Measured& m, const tune::Problem& p) {
  return {{"config", m.config.str()},
          {"median_ms", m.timing.median_ms},
          {"min_ms", m.timing.min_ms},
          {"max_ms", m.timing.max_ms},
          {"reps", m.timing.reps},
          {"gbs", report::gbs(p.bytes, m.timing.median_ms)},
          {"gflops", report::gflops(p.flops, m.timing.median_ms)}};
}

int run_bench(const BenchArgs& a) {
  std::vector<const samples::Tunable*> tunables = select_tunables(a.names, a.all, "bench");
  std::vector<std::vector<samples::SizeArgs>> sizes;
  for (const auto* t : tunables) sizes.push_back(sizes_for(*t, a.sizes, a.all));
  if (!a.host_timer) require_gpu("bench", a.interpret);
  else if (a.interpret) jit::Device::select(jit::BackendKind::Interpreter);
  use_device(a.device);
  const std::filesystem::path dbp = db_path(a.db);
  tune::Database db = tune::Database::load(dbp);
  std::unique_ptr<tune::Timer> timer = a.host_timer ? tune::make_host_timer() : tune::make_gpu_timer();
  tune::TimerOptions o;
  if (a.budget > 0) o.budget_ms = a.budget * 1e3 / 2;  // split between the two configs

  std::FILE* info = a.as_json ? stderr : stdout;
  fmt::print(info, "device: {}\ndatabase: {}\n", jit::Device::current().describe(), dbp.string());
  if (!a.as_json)
    fmt::print("{:<26} {:<20} {:>10} {:>10} {:>8}  {}\n", "kernel", "size", "default", "tuned", "speedup",
               "tuned config");
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  int rc = 0;
  for (size_t i = 0; i < tunables.size(); ++i) {
    const samples::Tunable& t = *tunables[i];
    for (const auto& size : sizes[i]) {
      tune::Problem p = t.make_problem(size);
      const tune::DbKey key = db_key(p.kernel, p.key);
      std::optional<tune::Config> tuned = db.best(key);
      Measured d = measure(p, t.default_config(size), *timer, o);
      nlohmann::ordered_json row{{"kernel", t.name}, {"size", t.size_str(size)}, {"key", p.key},
                                 {"default", timing_json(d, p)}};
      if (!tuned) {
        row["tuned"] = nullptr;
        if (!a.as_json)
          fmt::print("{:<26} {:<20} {:>10} {:>10} {:>8}  not tuned: run tessel tune {} --sizes {}\n", t.name,
                     t.size_str(size), report::format_ms(d.timing.median_ms), "-", "-", t.name,
                     fmt::join(size.dims, "x"));
      } else {
        Measured m = measure(p, *tuned, *timer, o);
        const double speedup = m.timing.median_ms > 0 ? d.timing.median_ms / m.timing.median_ms : 0;
        const int64_t diff = first_difference(p, d.output, m.output);
        row["tuned"] = timing_json(m, p);
        row["speedup"] = speedup;
        row["same_output"] = diff < 0;
        if (diff >= 0) rc = 3;
        if (!a.as_json)
          fmt::print("{:<26} {:<20} {:>10} {:>10} {:>7.2f}x  {}{}\n", t.name, t.size_str(size),
                     report::format_ms(d.timing.median_ms), report::format_ms(m.timing.median_ms), speedup,
                     m.config.str(), diff < 0 ? "" : fmt::format("  OUTPUT DIFFERS at [{}]", diff));
      }
      out.push_back(std::move(row));
    }
  }
  if (a.as_json) fmt::print("{}\n", out.dump(2));
  return rc;
}

}  // namespace

void add_bench(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand("bench", "Time each kernel's tuned config (from the database) against its default");
  static BenchArgs a;
  cmd->add_option("kernels", a.names, "Tunable kernels (see tessel tune --list)");
  cmd->add_flag("--all", a.all, "Every sample kernel");
  cmd->add_option("--sizes", a.sizes, "Problem sizes, as for tessel tune");
  cmd->add_option("--budget", a.budget, "Seconds of GPU time per kernel and size")->check(CLI::Range(0.0, 3600.0));
  cmd->add_flag("--json", a.as_json, "Print JSON on stdout");
  cmd->add_option("--db", a.db, "Tuning database (default: TESSEL_TUNE_DB, else tuning.json in the cache directory)");
  cmd->add_flag("--interpret", a.interpret, "Use the CPU interpreter (bench then refuses: it needs a GPU)");
  add_device_option(cmd, a.device);
  cmd->add_flag("--host-timer", a.host_timer, "Time with the host clock on any device (for tests)")->group("");
  cmd->callback([&rc] { rc = run_bench(a); });
}

}  // namespace tessel::cli
