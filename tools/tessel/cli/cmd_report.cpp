// `tessel report FILE.svg`: draw the roofline and config-time picture from stored tuning results
// (no GPU needed: it reads what `tessel tune` measured).
#include <fmt/format.h>

#include <filesystem>
#include <string>
#include <vector>

#include "commands.hpp"
#include "tessel/report/report_json.hpp"
#include "tessel/report/report_svg.hpp"
#include "tessel/report/report_table.hpp"
#include "tune_common.hpp"

namespace tessel::cli {

samples::report::Results load_results(const std::filesystem::path& p) {
  if (!std::filesystem::exists(p)) return {};
  try {
    return samples::report::results_from_json(read_text(p));
  } catch (const std::runtime_error& e) {
    throw UsageError(fmt::format("{}: {}", p.string(), e.what()));
  }
}

void write_report_svg(const samples::report::Results& r, const std::filesystem::path& out, std::FILE* note) {
  write_text(out, samples::report::render_svg(r));
  size_t sizes = 0;
  for (const auto& k : r.kernels) sizes += k.sizes.size();
  fmt::print(note, "wrote {} ({} kernels, {} problem sizes{})\n", out.string(), r.kernels.size(), sizes,
             r.roofline.known() ? "" : "; no measured roofline, so no ceilings");
}

namespace {
// Refuses to write `out` over one of the command's inputs (the results read, the tuning database
// and its results file): the SVG would replace the data it was drawn from.
void refuse_output_over_input(const std::filesystem::path& out, const std::filesystem::path& src, const std::string& db) {
  std::vector<std::filesystem::path> inputs{src};
  try {
    std::filesystem::path dbp = db_path(db);
    inputs.push_back(dbp);
    inputs.push_back(results_path(dbp));
  } catch (const UsageError&) {  // no database location known: nothing there to protect
  }
  for (const auto& in : inputs) {
    std::error_code ec;
    if (std::filesystem::equivalent(out, in, ec))
      throw UsageError(fmt::format("report: '{}' is an input ({}); write the SVG to another file", out.string(),
                                   in.string()));
  }
}
}  // namespace

void add_report(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand("report", "Draw stored tuning results as an SVG: roofline and config time per size");
  static std::string out, from, db;
  static bool table = false;
  cmd->add_option("file", out, "The SVG file to write")->required();
  cmd->add_option("--from", from,
                  "Tuning results JSON (tessel tune --json output; default: the results kept next to the database)");
  cmd->add_option("--db", db, "Tuning database whose results file to read (default: TESSEL_TUNE_DB or the cache's)");
  cmd->add_flag("--table", table, "Also print each kernel's ranked table");
  cmd->callback([&rc] {
    std::filesystem::path src = from.empty() ? results_path(db_path(db)) : std::filesystem::path(from);
    if (!std::filesystem::exists(src))
      throw UsageError(fmt::format("no tuning results at '{}' (run tessel tune first, or give --from)", src.string()));
    refuse_output_over_input(out, src, db);
    samples::report::Results r = load_results(src);
    if (table)
      for (const auto& k : r.kernels)
        for (const auto& s : k.sizes)
          fmt::print("{} {}\n{}", k.name, s.size, samples::report::format_table(s, r.roofline));
    write_report_svg(r, out);
    rc = 0;
  });
}

}  // namespace tessel::cli
