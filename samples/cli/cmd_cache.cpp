// `tessel cache list|info|clear|verify|warm`: inspect, check, empty and fill the disk kernel cache.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "tessel/jit/cache.hpp"

namespace tessel::cli {
namespace {

using json = nlohmann::json;
namespace cache = jit::cache;

std::string human_bytes(uint64_t b) {
  if (b < 1024) return fmt::format("{} B", b);
  if (b < 1024 * 1024) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{:.1f} MiB", b / (1024.0 * 1024.0));
}

int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string human_age(int64_t created) {
  int64_t s = std::max<int64_t>(0, now_seconds() - created);
  if (s < 120) return fmt::format("{}s", s);
  if (s < 7200) return fmt::format("{}m", s / 60);
  if (s < 2 * 86400) return fmt::format("{}h", s / 3600);
  return fmt::format("{}d", s / 86400);
}

std::string figure(int v) { return v < 0 ? "unknown" : std::to_string(v); }

json meta_json(const cache::EntryMeta& m) {
  // Round-trips through meta.json's own text so `info --json` shows exactly what is on disk.
  return json::parse(cache::meta_to_json(m));
}

// The directory every cache subcommand works on: --dir, else the environment's.
cache::Store open_store(const std::string& dir_opt) {
  cache::fs::path dir = dir_opt.empty() ? cache::Settings::dir_from_env() : cache::fs::path(dir_opt);
  if (dir.empty()) throw UsageError("no cache directory: set TESSEL_CACHE_DIR (or HOME), or pass --dir");
  return cache::Store(dir);
}

void print_list(const cache::Store& store, bool as_json) {
  std::vector<cache::EntryInfo> entries = store.list();
  uint64_t total = 0;
  for (const auto& e : entries) total += e.bytes;
  if (as_json) {
    json arr = json::array();
    for (const auto& e : entries) {
      json j = {{"key", e.key}, {"bytes", e.bytes}, {"hits", e.hits}, {"ok", e.meta.has_value()}};
      if (e.meta) {
        j["kernel"] = e.meta->kernel;
        j["arch"] = e.meta->arch;
        j["created"] = e.meta->created;
        j["age_s"] = std::max<int64_t>(0, now_seconds() - e.meta->created);
      } else {
        j["problem"] = e.problem;
      }
      arr.push_back(std::move(j));
    }
    fmt::print("{}\n", json{{"dir", store.dir().string()}, {"entries", arr}, {"total_bytes", total}}.dump(2));
    return;
  }
  fmt::print("{:<32}  {:<26} {:<7} {:>10} {:>6} {:>5}\n", "KEY", "KERNEL", "ARCH", "SIZE", "HITS", "AGE");
  for (const auto& e : entries) {
    if (e.meta)
      fmt::print("{:<32}  {:<26} {:<7} {:>10} {:>6} {:>5}\n", e.key, e.meta->kernel, e.meta->arch,
                 human_bytes(e.bytes), e.hits, human_age(e.meta->created));
    else
      fmt::print("{:<32}  ({})\n", e.key, e.problem);
  }
  fmt::print("{} entr{}, {} in {}\n", entries.size(), entries.size() == 1 ? "y" : "ies", human_bytes(total),
             store.dir().string());
}

void print_info(const cache::Store& store, const std::string& prefix, bool as_json) {
  std::string key;
  try {
    key = store.resolve(prefix);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  cache::EntryInfo info;
  for (auto& e : store.list())
    if (e.key == key) info = std::move(e);
  std::string problem = store.verify(key);
  if (as_json) {
    json j = info.meta ? meta_json(*info.meta) : json::object();
    j["path"] = info.path.string();
    j["hits"] = info.hits;
    j["bytes"] = info.bytes;
    j["status"] = problem.empty() ? "ok" : "corrupt: " + problem;
    fmt::print("{}\n", j.dump(2));
    return;
  }
  fmt::print("key:            {}\n", key);
  fmt::print("path:           {}\n", info.path.string());
  fmt::print("status:         {}\n", problem.empty() ? "ok (every checksum matches)" : "corrupt: " + problem);
  if (!info.meta) return;
  const cache::EntryMeta& m = *info.meta;
  std::vector<std::string> params;
  for (const auto& p : m.params) params.push_back(p.name + ": " + p.type);
  fmt::print("kernel:         {}({})\n", m.kernel, fmt::join(params, ", "));
  fmt::print("specialisation: {}\n", m.specialisation.empty() ? "-" : m.specialisation);
  fmt::print("num_warps:      {}\n", m.num_warps);
  fmt::print("num_stages:     {}\n", m.num_stages);
  fmt::print("target:         {}, PTX ISA {}.{}\n", m.arch, m.ptx_version / 10, m.ptx_version % 10);
  fmt::print("cubin:          {}\n", m.cubin_arch.empty() ? "none (PTX only)" : m.cubin_arch + " by " + m.cubin_tool);
  fmt::print("shared memory:  {} bytes\n", m.shared_bytes);
  fmt::print("registers:      {}\n", figure(m.registers));
  fmt::print("local memory:   {} bytes per thread (spill stores: {})\n", figure(m.local_bytes), figure(m.spill_bytes));
  fmt::print("versions:       tessel {} (build {}), LLVM {}\n", m.tessel_version,
             m.tessel_build.empty() ? "unknown" : m.tessel_build, m.llvm_version);
  fmt::print("created:        {} ago\n", human_age(m.created));
  fmt::print("hits:           {}\n", info.hits);
  fmt::print("files:\n");
  for (const auto& [name, sum] : m.files) fmt::print("  {:<14} {:>10}  xxh3 {}\n", name, human_bytes(sum.size), sum.xxh3);
}

// Exit status 1 when any entry is corrupt.
int verify_all(cache::Store& store, bool remove, bool as_json) {
  json arr = json::array();
  size_t bad = 0, n = 0;
  for (const auto& e : store.list()) {
    ++n;
    std::string problem = store.verify(e.key);
    std::string kernel = e.meta ? e.meta->kernel : "?";
    bool removed = false;
    if (!problem.empty()) {
      ++bad;
      if (remove) removed = store.remove(e.key);  // false in a read-only cache: say so
    }
    if (as_json)
      arr.push_back({{"key", e.key}, {"kernel", kernel}, {"ok", problem.empty()}, {"problem", problem},
                     {"removed", removed}});
    else
      fmt::print("{}  {:<26} {}{}\n", e.key, kernel, problem.empty() ? "ok" : "CORRUPT: " + problem,
                 problem.empty() || !remove ? "" : removed ? " (removed)" : " (could not be removed)");
  }
  if (as_json)
    fmt::print("{}\n", json{{"dir", store.dir().string()}, {"entries", arr}, {"checked", n}, {"corrupt", bad}}.dump(2));
  else
    fmt::print("{} entr{} checked: {} ok, {} corrupt\n", n, n == 1 ? "y" : "ies", n - bad, bad);
  return bad ? 1 : 0;
}

}  // namespace

void add_cache(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand("cache", "Inspect, verify, empty or fill the disk kernel cache");
  cmd->require_subcommand(1);
  static std::string dir;
  static bool as_json = false;
  cmd->add_option("--dir", dir, "Cache directory (default: TESSEL_CACHE_DIR, else $XDG_CACHE_HOME/tessel)");
  cmd->add_flag("--json", as_json, "JSON output instead of tables");

  auto* list = cmd->add_subcommand("list", "Entries: key, kernel, arch, size, hits, age");
  list->add_flag("--json", as_json, "JSON output");
  list->callback([&rc] {
    print_list(open_store(dir), as_json);
    rc = 0;
  });

  static std::string key;
  auto* info = cmd->add_subcommand("info", "One entry's metadata (a unique key prefix is enough)");
  info->add_option("key", key, "Entry key or a unique prefix of it")->required();
  info->add_flag("--json", as_json, "JSON output");
  info->callback([&rc] {
    print_info(open_store(dir), key, as_json);
    rc = 0;
  });

  auto* clear = cmd->add_subcommand("clear", "Remove every entry");
  clear->add_flag("--json", as_json, "JSON output");
  clear->callback([&rc] {
    cache::Store store = open_store(dir);
    uint64_t bytes = 0;
    for (const auto& e : store.list()) bytes += e.bytes;
    size_t n = store.clear();
    // Only what is gone counts as removed (a read-only cache keeps its entries).
    std::vector<cache::EntryInfo> left = store.list();
    for (const auto& e : left) bytes -= std::min(bytes, e.bytes);
    if (!left.empty())
      throw UsageError(fmt::format("cache clear: removed {} entr{}, but {} could not be removed from {} (read-only?)", n,
                                   n == 1 ? "y" : "ies", left.size(), store.dir().string()));
    if (as_json)
      fmt::print("{}\n", json{{"dir", store.dir().string()}, {"removed", n}, {"bytes", bytes}}.dump(2));
    else
      fmt::print("removed {} entr{} ({}) from {}\n", n, n == 1 ? "y" : "ies", human_bytes(bytes), store.dir().string());
    rc = 0;
  });

  static bool remove_bad = false;
  auto* verify = cmd->add_subcommand("verify", "Check every entry's checksums; exit status 1 if any is corrupt");
  verify->add_flag("--remove", remove_bad, "Also remove the corrupt entries");
  verify->add_flag("--json", as_json, "JSON output");
  verify->callback([&rc] {
    cache::Store store = open_store(dir);
    rc = verify_all(store, remove_bad, as_json);
  });

  // Offline warming: compile for an arch on a machine without a GPU (a cubin when ptxas exists),
  // so a GPU process with the same cache directory starts from hits.
  static std::string kernel, arch = "sm_90";
  static std::vector<std::string> defines;
  static int num_warps = 4, num_stages = 1;
  static bool aligned = false, no_cubin = false;
  auto* warm = cmd->add_subcommand("warm", "Compile a kernel into the cache (no GPU needed; cubin via ptxas)");
  warm->add_option("kernel", kernel, "Kernel name (see tessel list)")->required();
  warm->add_option("--arch", arch, "GPU architecture")->check(CLI::IsMember({"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"}));
  warm->add_option("--num-warps", num_warps, "Warps per program")->check(CLI::IsMember({1, 2, 4, 8, 16, 32}));
  warm->add_option("--num-stages", num_stages, "Pipelining depth")->check(CLI::Range(1, 8));
  warm->add_option("-D", defines, "Meta-parameter NAME=VALUE (repeatable)");
  warm->add_flag("--aligned", aligned, "Specialise as a launch whose pointers and integers are all divisible by 16");
  warm->add_flag("--no-cubin", no_cubin, "Store PTX only");
  warm->add_flag("--json", as_json, "JSON output");
  warm->callback([&rc] {
    cache::Store store = open_store(dir);
    auto f = trace_registered(kernel, defines, aligned);
    cache::Entry e = cache::compile_entry(*f, jit::CompileOptions{num_warps, num_stages}, arch, !no_cubin);
    const std::string k = e.meta.key;
    const std::string cubin = e.cubin.empty() ? "no cubin" : "cubin by " + e.meta.cubin_tool;
    cache::StoreResult r = store.store(std::move(e));
    if (r == cache::StoreResult::Failed) throw std::runtime_error("could not write the cache entry (see above)");
    const char* what = r == cache::StoreResult::Stored ? "stored" : "already cached";
    if (as_json)
      fmt::print("{}\n", json{{"key", k}, {"kernel", kernel}, {"arch", arch}, {"result", what}, {"cubin", cubin}}.dump(2));
    else
      fmt::print("{} {} ({} for {}, {})\n", what, k, kernel, arch, cubin);
    rc = 0;
  });
}

}  // namespace tessel::cli
