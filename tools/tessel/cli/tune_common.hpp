// What `tessel tune`, `tessel bench` and `tessel report` share: the GPU check, choosing
// tunables and sizes, database keys and paths, tuner results as report rows.
#pragma once
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "commands.hpp"
#include "tessel/jit/tune/database.hpp"
#include "tessel/samples/report_results.hpp"
#include "tessel/samples/tunables.hpp"

namespace tessel::cli {

// UsageError "<command> needs a GPU: <reason>" unless kernels run on the GPU (--interpret, or
// no usable CUDA driver, says why).
void require_gpu(std::string_view command, bool interpret);

// Every tunable: the built-in ones in their fixed order (roofline probes too when `probes`), then
// the kernels registered with a workload (plugins).
std::vector<const samples::Tunable*> every_tunable(bool probes);

// The tunables named (built-in ones and kernels registered with a workload; UsageError for
// another name), or every tunable but the probes with `all`.
std::vector<const samples::Tunable*> select_tunables(const std::vector<std::string>& names, bool all,
                                                     std::string_view command);

// The sizes for `t`: its defaults when `text` is empty; else the entries of `text` of t's shape
// (one number for elementwise kernels, ROWSxCOLS for row kernels, MxNxK for matmul). With
// `all`, a tunable given no entry of its shape keeps its defaults; otherwise a UsageError.
std::vector<samples::SizeArgs> sizes_for(const samples::Tunable& t, const std::string& text, bool all);

// The database key of `kernel` at `key` on the current GPU, for this tessel version (the key
// launch_tuned looks up).
jit::tune::DbKey db_key(const std::string& kernel, const std::string& key);

// --db, else tune::Database::default_path(); UsageError when neither names a file.
std::filesystem::path db_path(const std::string& option);
// Where `tessel tune` keeps the results the report draws: next to the database,
// "<stem>_results.json" (tuning.json -> tuning_results.json).
std::filesystem::path results_path(const std::filesystem::path& db);

samples::report::ConfigRow row_of(const jit::tune::ConfigResult& r);

// The text of a file; UsageError naming it when it cannot be read.
std::string read_text(const std::filesystem::path& p);
// Writes `text` to `p` through a temporary file and a rename; std::runtime_error on failure.
void write_text(const std::filesystem::path& p, std::string_view text);

}  // namespace tessel::cli

namespace tessel::cli {
// The results `tessel tune` keeps at results_path(db) (empty when there is none yet);
// UsageError naming the file when it is malformed.
samples::report::Results load_results(const std::filesystem::path& p);
// Renders `r` as the report SVG into `out` and says so on `note` (stdout by default).
void write_report_svg(const samples::report::Results& r, const std::filesystem::path& out, std::FILE* note = stdout);
}  // namespace tessel::cli
