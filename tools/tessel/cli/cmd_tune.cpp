// `tessel tune`: benchmark the config space of sample kernels per problem size on the GPU, print
// the ranked configs against the measured roofline, and store the winners in the database.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

#include <unistd.h>

#include "commands.hpp"
#include "tessel/jit/device.hpp"
#include "tessel/jit/tune/tuner.hpp"
#include "tessel/report/report_json.hpp"
#include "tessel/report/report_progress.hpp"
#include "tessel/report/report_table.hpp"
#include "tune_common.hpp"

namespace tessel::cli {
namespace {
namespace tune = jit::tune;
namespace report = samples::report;

// Why a tuning found no config: every config that ran gave a wrong output, or none ran.
std::string no_winner_reason(const tune::TuneReport& r) {
  size_t wrong = 0;
  for (const tune::ConfigResult& c : r.ranked) wrong += c.status == tune::Status::WrongOutput;
  if (wrong == 0) return "no config ran";
  return fmt::format("no config is correct ({} of {} gave a wrong output)", wrong, r.ranked.size());
}

struct TuneArgs {
  std::vector<std::string> names;
  bool all = false, as_json = false, interpret = false, list = false;
  std::string sizes, plot, db;
  double budget = 0;
  double config_budget = 0;  // seconds per config (TimerOptions::budget_ms); 0: its default
  int threads = 0;
  int device = 0;           // --device
  bool host_timer = false;  // hidden, for tests: wall-clock timing on any device (the interpreter too)
  bool remeasure = false;   // --remeasure-roofline
};

void print_tunables() {
  fmt::print("tunable kernels (tessel tune NAME, tessel bench NAME):\n");
  for (const samples::Tunable* tp : every_tunable(true)) {
    const samples::Tunable& t = *tp;
    const samples::SizeArgs& s0 = t.sizes.front();
    std::vector<std::string> sizes;
    for (const auto& s : t.sizes) sizes.push_back(t.size_str(s));
    fmt::print("  {:<26} {}{}\n", t.name, t.description, t.probe ? " (roofline probe)" : "");
    fmt::print("  {:<26}   sizes: {}; {} configs at {} (default {})\n", "", fmt::join(sizes, " "),
               t.configs(s0).size(), t.size_str(s0), t.default_config(s0).str());
  }
}

// "BLOCK=1024 num_warps=4 num_stages=1 12.3 us" / "... compile error"
std::string progress_note(const tune::ConfigResult* r) {
  if (!r) return "";
  if (r->status == tune::Status::Ok) return fmt::format("{}  {}", r->config.str(), report::format_ms(r->timing.median_ms));
  return fmt::format("{}  {}", r->config.str(), tune::status_name(r->status));
}

report::SizeResult tune_one(const samples::Tunable& t, const samples::SizeArgs& size, tune::Timer& timer,
                            const TuneArgs& a, std::FILE* progress, bool tty, tune::Database& db) {
  tune::Problem p = t.make_problem(size);
  tune::TuneOptions o;
  o.budget_s = a.budget;
  if (a.config_budget > 0) o.timer.budget_ms = a.config_budget * 1e3;
  o.compile_threads = a.threads;
  // The tunable's prune at this size and the kernel's own (a workload's Problem::keep).
  o.prune = [&t, &p, size](const tune::Config& c) { return (!t.keep || t.keep(c, size)) && (!p.keep || p.keep(c)); };
  report::ProgressPrinter pp(progress, tty, fmt::format("{} {}", t.name, t.size_str(size)));
  o.on_progress = [&pp](const tune::Progress& pr) { pp.update(pr.done, pr.total, progress_note(pr.last)); };
  tune::TuneReport r = tune::tune(p, t.configs(size), timer, o);
  pp.done(fmt::format("tuned in {:.2f} s (compiling {:.2f} s): {}", r.seconds, r.compile_seconds,
                      r.found ? "best " + r.best.str() : no_winner_reason(r)));
  tune::record(db, db_key(p.kernel, p.key), r);

  report::SizeResult s;
  s.size = t.size_str(size);
  s.key = p.key;
  s.bytes = p.bytes;
  s.flops = p.flops;
  s.seconds = r.seconds;
  s.compile_seconds = r.compile_seconds;
  s.best = r.found ? r.best.str() : "";
  s.default_config = t.default_config(size).str();
  for (const auto& c : r.ranked) s.configs.push_back(row_of(c));
  report::rank_rows(s.configs);
  return s;
}

int run_tune(const TuneArgs& a) {
  if (a.list) {
    print_tunables();
    return 0;
  }
  // --plot alone draws what earlier runs stored: no GPU needed.
  if (a.names.empty() && !a.all && !a.plot.empty()) {
    std::filesystem::path rp = results_path(db_path(a.db));
    if (!std::filesystem::exists(rp))
      throw UsageError(fmt::format("no tuning results at '{}' to plot (tune some kernels first)", rp.string()));
    write_report_svg(load_results(rp), a.plot);
    return 0;
  }
  std::vector<const samples::Tunable*> tunables = select_tunables(a.names, a.all, "tune");
  std::vector<std::vector<samples::SizeArgs>> sizes;
  for (const auto* t : tunables) sizes.push_back(sizes_for(*t, a.sizes, a.all));
  if (!a.host_timer) require_gpu("tune", a.interpret);
  else if (a.interpret) jit::Device::select(jit::BackendKind::Interpreter);
  use_device(a.device);
  const std::filesystem::path dbp = db_path(a.db);
  // Read before the probes and the tuning: a malformed database is reported in a second, not
  // after minutes of measurements that could not be saved.
  tune::Database db = tune::Database::load(dbp);

  // With --json stdout carries only the JSON; progress goes to stderr.
  std::FILE* progress = a.as_json ? stderr : stdout;
  const bool tty = ::isatty(::fileno(progress)) == 1;
  std::unique_ptr<tune::Timer> timer = a.host_timer ? tune::make_host_timer() : tune::make_gpu_timer();
  report::Results results;
  results.device = jit::Device::current().describe();
  fmt::print(progress, "device: {}\ndatabase: {}\n", results.device, dbp.string());
  // The results the report draws accumulate across runs on the same device; their ceilings
  // (measured by an earlier run here, tensor cores included) are reused unless asked again.
  const std::filesystem::path rp = results_path(dbp);
  report::Results kept = load_results(rp);
  if (kept.device != results.device) kept = {};
  if (!a.remeasure && kept.roofline.known() && !kept.roofline.tensor.empty()) {
    results.roofline = kept.roofline;
    fmt::print(progress, "roofline {} (measured earlier, stored in {}; --remeasure-roofline measures again)\n",
               report::format_ceilings(results.roofline), rp.string());
  } else {
    tune::TuneOptions o;
    o.compile_threads = a.threads;
    o.budget_s = a.budget;
    if (a.config_budget > 0) o.timer.budget_ms = a.config_budget * 1e3;
    report::ProgressPrinter pp(progress, tty, "roofline probes");
    o.on_progress = [&pp](const tune::Progress& pr) { pp.update(pr.done, pr.total, progress_note(pr.last)); };
    results.roofline = samples::measure_roofline(*timer, o, a.host_timer ? 4096 : 0);
    pp.done(report::format_ceilings(results.roofline) + " (measured)");
  }

  int rc = 0;
  for (size_t i = 0; i < tunables.size(); ++i) {
    const samples::Tunable& t = *tunables[i];
    report::KernelResult k{t.name, t.group, t.fused, {}};
    for (const auto& size : sizes[i]) {
      report::SizeResult s = tune_one(t, size, *timer, a, progress, tty, db);
      if (s.best.empty()) rc = 3;
      if (!a.as_json)
        fmt::print("\n{} {}: {:.3g} MB and {:.3g} MFLOP per run, key {}\n{}\n", t.name, s.size, s.bytes / 1e6,
                   s.flops / 1e6, s.key, report::format_table(s, results.roofline));
      k.sizes.push_back(std::move(s));
    }
    results.kernels.push_back(std::move(k));
    db.save(dbp);  // per kernel: an interrupted --all keeps what it finished
  }
  fmt::print(progress, "saved the results of {} kernels to {}\n", tunables.size(), dbp.string());

  report::merge_results(kept, results);
  write_text(rp, report::results_to_json(kept));
  if (a.as_json) fmt::print("{}\n", report::results_to_json(results));
  if (!a.plot.empty()) write_report_svg(kept, a.plot, progress);
  if (rc != 0) fmt::print(stderr, "tessel: some kernel sizes had no config that ran (see the reasons above)\n");
  return rc;
}

}  // namespace

void add_tune(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand("tune", "Autotune kernels (samples, chains, plugins' workloads) on the GPU: rank configs per size, store the winners");
  static TuneArgs a;
  cmd->add_option("kernels", a.names, "Tunable kernels (see --list)");
  cmd->add_flag("--all", a.all, "Tune every sample kernel");
  cmd->add_flag("--list", a.list, "List the tunable kernels, their sizes and config spaces");
  cmd->add_option("--sizes", a.sizes,
                  "Problem sizes, comma-separated: elements (1M, 2^24, 16777216), ROWSxCOLS (8192x4096) or MxNxK (matmul)");
  cmd->add_option("--budget", a.budget, "Seconds of GPU time per kernel and size, split across its configs")
      ->check(CLI::Range(0.0, 3600.0));
  cmd->add_option("--config-budget", a.config_budget, "Seconds of GPU time per config (default 0.2)")
      ->check(CLI::Range(0.0, 3600.0))
      ->excludes("--budget");
  cmd->add_option("--threads", a.threads, "Compile threads (default: hardware concurrency)")->check(CLI::Range(0, 256));
  cmd->add_flag("--json", a.as_json, "Print the results as JSON on stdout (progress goes to stderr)");
  cmd->add_option("--plot", a.plot, "Write the report SVG (roofline, config time per size); alone: from stored results");
  cmd->add_option("--db", a.db, "Tuning database (default: TESSEL_TUNE_DB, else tuning.json in the cache directory)");
  cmd->add_flag("--interpret", a.interpret, "Use the CPU interpreter (tuning then refuses: it needs a GPU)");
  add_device_option(cmd, a.device);
  cmd->add_flag("--remeasure-roofline", a.remeasure,
                "Measure the card's ceilings (copy, FMA, tensor cores) again instead of reusing those an earlier "
                "tune stored beside the database");
  cmd->add_flag("--host-timer", a.host_timer, "Time with the host clock on any device (for tests)")->group("");
  cmd->callback([&rc] { rc = run_tune(a); });
}

}  // namespace tessel::cli
