// Shared pieces of the tuning commands: GPU check, tunable and size selection, database keys.
#include "tune_common.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "tessel/jit/device.hpp"
#include "tessel/jit/tune/autotune.hpp"
#include "tessel/jit/tune/database.hpp"
#include "names.hpp"

namespace tessel::cli {

void require_gpu(std::string_view command, bool interpret) {
  if (interpret) throw UsageError(fmt::format("{} needs a GPU: --interpret runs on the CPU interpreter", command));
  // Device::current() honours TESSEL_INTERPRET even when a GPU is present: say so first.
  if (const char* v = std::getenv("TESSEL_INTERPRET"); v && *v && std::string_view(v) != "0")
    throw UsageError(fmt::format("{} needs a GPU: TESSEL_INTERPRET={} selects the CPU interpreter", command, v));
  jit::Device& dev = jit::Device::current();
  if (dev.kind() == jit::BackendKind::Cuda) return;
  std::string why = jit::Device::gpu_unavailable_reason();
  if (why.empty()) why = fmt::format("kernels run on the {}", dev.describe());
  throw UsageError(fmt::format("{} needs a GPU: {}", command, why));
}

std::vector<const samples::Tunable*> every_tunable(bool probes) {
  std::vector<const samples::Tunable*> out;
  for (const auto& t : samples::all_tunables())
    if (probes || !t.probe) out.push_back(&t);
  for (const Name& n : all_names())  // names() made each workload's tunable once
    if (n.tunable && !n.probe && std::find(out.begin(), out.end(), n.tunable) == out.end()) out.push_back(n.tunable);
  return out;
}

std::vector<const samples::Tunable*> select_tunables(const std::vector<std::string>& names, bool all,
                                                     std::string_view command) {
  std::vector<const samples::Tunable*> out;
  if (all) {
    if (!names.empty()) throw UsageError(fmt::format("{}: give kernel names or --all, not both", command));
    return every_tunable(false);
  }
  if (names.empty()) throw UsageError(fmt::format("{}: name a kernel or give --all (see tessel tune --list)", command));
  for (const auto& n : names) {
    const samples::Tunable* t = &tunable_for(command, n);
    if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  }
  return out;
}

namespace {
// What --sizes takes for `t`: its size names and its first default size as the example.
std::string sizes_hint(const samples::Tunable& t) {
  if (t.size_names.size() == 1) return "a number of elements, e.g. --sizes 1M,16M";
  std::string example;
  if (!t.sizes.empty())
    for (size_t i = 0; i < t.sizes.front().dims.size(); ++i) example += fmt::format("{}{}", i ? "x" : "", t.sizes.front().dims[i]);
  std::string names;
  for (const std::string& n : t.size_names) {
    if (!names.empty()) names += 'x';
    for (char c : n) names += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return fmt::format("{} sizes, e.g. --sizes {}", names, example);
}
}  // namespace

std::vector<samples::SizeArgs> sizes_for(const samples::Tunable& t, const std::string& text, bool all) {
  if (text.empty()) return t.sizes;
  if (text.back() == ',' || text.front() == ',') throw UsageError(fmt::format("--sizes '{}': an empty size", text));
  std::vector<samples::SizeArgs> out;
  std::stringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    const size_t dims = static_cast<size_t>(std::count(item.begin(), item.end(), 'x')) + 1;
    std::vector<samples::SizeArgs> parsed;
    try {
      parsed = samples::parse_sizes(item, dims);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    if (dims == t.size_names.size()) out.insert(out.end(), parsed.begin(), parsed.end());
  }
  if (out.empty() && !all)
    throw UsageError(fmt::format("--sizes '{}': {} takes {}", text, t.name, sizes_hint(t)));
  return out.empty() ? t.sizes : out;
}

jit::tune::DbKey db_key(const std::string& kernel, const std::string& key) {
  return jit::tune::current_db_key(kernel, key);
}

std::filesystem::path db_path(const std::string& option) {
  std::filesystem::path p = option.empty() ? jit::tune::Database::default_path() : std::filesystem::path(option);
  if (p.empty()) throw UsageError("no tuning database path: set TESSEL_TUNE_DB or TESSEL_CACHE_DIR, or give --db");
  return p;
}

std::filesystem::path results_path(const std::filesystem::path& db) {
  return db.parent_path() / (db.stem().string() + "_results.json");
}

samples::report::ConfigRow row_of(const jit::tune::ConfigResult& r) {
  samples::report::ConfigRow row;
  row.config = r.config.str();
  row.status = std::string(jit::tune::status_name(r.status));
  row.median_ms = r.timing.median_ms;
  row.min_ms = r.timing.min_ms;
  row.max_ms = r.timing.max_ms;
  row.reps = r.timing.reps;
  row.reason = r.reason;
  return row;
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw UsageError(fmt::format("cannot read '{}'", p.string()));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_text(const std::filesystem::path& p, std::string_view text) {
  // Every failure here is the user's path or the machine (a missing or read-only directory, a
  // full disk): UsageError naming `p`, exit 1.
  std::error_code ec;
  if (p.has_parent_path()) {
    std::filesystem::create_directories(p.parent_path(), ec);
    if (ec)
      throw UsageError(fmt::format("cannot write '{}': cannot create its directory '{}': {} (expected a path in a "
                                   "writable directory)",
                                   p.string(), p.parent_path().string(), ec.message()));
  }
  std::filesystem::path tmp = p;
  tmp += fmt::format(".tmp{}", static_cast<long>(::getpid()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    const int open_errno = out ? 0 : errno;
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) {
      std::filesystem::remove(tmp, ec);  // never leave a half-written temporary behind
      throw UsageError(fmt::format("cannot write '{}'{}{} (expected a path in a writable directory)", p.string(),
                                   open_errno ? ": " : "", open_errno ? std::strerror(open_errno) : ""));
    }
  }
  // The rename is the one step that replaces `p`: it holds the old text or the new, never a mix.
  std::filesystem::rename(tmp, p, ec);
  if (ec) {
    std::error_code ec2;
    std::filesystem::remove(tmp, ec2);
    throw UsageError(fmt::format("cannot write '{}': {}", p.string(), ec.message()));
  }
}

}  // namespace tessel::cli
