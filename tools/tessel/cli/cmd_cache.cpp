// `tessel cache list|info|clear|verify|warm`: inspect, check, empty and fill the disk kernel cache.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "tessel/jit/targets.hpp"
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

// The directory every cache subcommand works on: --dir, else the environment's. A --dir that does
// not exist is a mistake (a typo must not read as an empty cache), except for `warm`
// (`may_create`), which makes it; the environment's directory may not exist yet (nothing was
// cached so far): it reads as empty.
cache::Store open_store(const std::string& dir_opt, bool may_create = false) {
  cache::fs::path dir = dir_opt.empty() ? cache::Settings::dir_from_env() : cache::fs::path(dir_opt);
  if (dir.empty()) throw UsageError("no cache directory: set TESSEL_CACHE_DIR (or HOME), or pass --dir");
  std::error_code ec;
  cache::fs::file_status st = cache::fs::status(dir, ec);
  if (cache::fs::exists(st) && !cache::fs::is_directory(st))
    throw UsageError(fmt::format("cache directory {} is not a directory", dir.string()));
  if (!cache::fs::exists(st) && !dir_opt.empty() && !may_create)
    throw UsageError(fmt::format("no cache directory {} (--dir must name an existing directory)", dir.string()));
  return cache::Store(dir);
}

// How verify and info name a problem: damage, or a file that could not be read (not damage).
std::string problem_text(const cache::EntryCheck& c) {
  if (c.kind == cache::EntryCheck::Intact) return "ok";
  return (c.kind == cache::EntryCheck::Unreadable ? "unreadable: " : "corrupt: ") + c.problem;
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
  cache::EntryCheck check = store.check(key);
  if (as_json) {
    json j = info.meta ? meta_json(*info.meta) : json::object();
    j["path"] = info.path.string();
    j["hits"] = info.hits;
    j["bytes"] = info.bytes;
    j["status"] = problem_text(check);
    fmt::print("{}\n", j.dump(2));
    return;
  }
  fmt::print("key:            {}\n", key);
  fmt::print("path:           {}\n", info.path.string());
  fmt::print("status:         {}\n",
             check.kind == cache::EntryCheck::Intact ? "ok (every checksum matches)" : problem_text(check));
  if (!info.meta) return;
  const cache::EntryMeta& m = *info.meta;
  std::vector<std::string> params;
  for (const auto& p : m.params) params.push_back(p.name + ": " + p.type);
  fmt::print("kernel:         {}({})\n", m.kernel, fmt::join(params, ", "));
  fmt::print("entry symbol:   {}\n", m.entry());  // what ncu and nsys show for this variant
  std::vector<std::string> meta;
  for (const auto& [name, v] : m.meta_params) meta.push_back(fmt::format("{}={}", name, v));
  fmt::print("meta:           {}\n", meta.empty() ? "-" : fmt::format("{}", fmt::join(meta, " ")));
  fmt::print("specialisation: {}\n", m.specialisation.empty() ? "-" : m.specialisation);
  fmt::print("num_warps:      {}\n", m.num_warps);
  fmt::print("num_stages:     {}\n", m.num_stages);
  fmt::print("target:         {}, PTX ISA {}.{}\n", m.arch, m.ptx_version / 10, m.ptx_version % 10);
  fmt::print("cubin:          {}\n", m.cubin_arch.empty() ? "none (PTX only)" : m.cubin_arch + " by " + m.cubin_tool);
  fmt::print("shared memory:  {} bytes\n", m.launch.shared_bytes);
  fmt::print("launch:         {} threads per CTA{}, {} program{} per CTA, cluster of {}, {} tensor map{}\n",
             m.launch.threads, m.launch.producer_warps ? " (producer warpgroup included)" : "",
             m.launch.programs_per_cta, m.launch.programs_per_cta == 1 ? "" : "s", m.launch.cluster_ctas,
             m.launch.tensor_maps.size(), m.launch.tensor_maps.size() == 1 ? "" : "s");
  fmt::print("registers:      {}\n", figure(m.registers));
  fmt::print("local memory:   {} bytes per thread (spill stores: {})\n", figure(m.local_bytes), figure(m.spill_bytes));
  fmt::print("versions:       tessel {} (build {}), LLVM {}\n", m.tessel_version,
             m.tessel_build.empty() ? "unknown" : m.tessel_build, m.llvm_version);
  fmt::print("created:        {} ago\n", human_age(m.created));
  fmt::print("hits:           {}\n", info.hits);
  fmt::print("files:\n");
  for (const auto& [name, sum] : m.files) fmt::print("  {:<14} {:>10}  xxh3 {}\n", name, human_bytes(sum.size), sum.xxh3);
}

// Exit status 1 when any entry is corrupt or unreadable. --remove removes corrupt entries only: an
// unreadable one is not known to be damaged (fix its permissions, or `cache clear`).
int verify_all(cache::Store& store, bool remove, bool as_json) {
  json arr = json::array();
  size_t bad = 0, unreadable = 0, n = 0;
  for (const auto& e : store.list()) {
    ++n;
    cache::EntryCheck check = store.check(e.key);
    if (check.kind == cache::EntryCheck::Absent) {  // removed by another process meanwhile
      --n;
      continue;
    }
    const bool ok = check.kind == cache::EntryCheck::Intact;
    const bool corrupt = check.kind == cache::EntryCheck::Corrupt;
    std::string kernel = e.meta ? e.meta->kernel : "?";
    bool removed = false;
    bad += corrupt;
    unreadable += !ok && !corrupt;
    if (corrupt && remove) removed = store.remove(e.key);  // false in a read-only cache: say so
    if (as_json) {
      arr.push_back({{"key", e.key}, {"kernel", kernel}, {"ok", ok}, {"problem", check.problem},
                     {"unreadable", !ok && !corrupt}, {"removed", removed}});
    } else {
      std::string note = !corrupt || !remove ? "" : removed ? " (removed)" : " (could not be removed)";
      if (!ok && !corrupt && remove) note = " (not removed: it could not be read)";
      fmt::print("{}  {:<26} {}{}\n", e.key, kernel, ok ? "ok" : corrupt ? "CORRUPT: " + check.problem : "UNREADABLE: " + check.problem,
                 note);
    }
  }
  if (as_json)
    fmt::print("{}\n", json{{"dir", store.dir().string()}, {"entries", arr}, {"checked", n}, {"corrupt", bad},
                            {"unreadable", unreadable}}
                           .dump(2));
  else
    fmt::print("{} entr{} checked: {} ok, {} corrupt{}\n", n, n == 1 ? "y" : "ies", n - bad - unreadable, bad,
               unreadable ? fmt::format(", {} unreadable", unreadable) : "");
  return bad || unreadable ? 1 : 0;
}

}  // namespace

void add_cache(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand("cache", "Inspect, verify, empty or fill the disk kernel cache");
  cmd->require_subcommand(1);
  static std::string dir;
  static bool as_json = false;
  cmd->add_option("--dir", dir,
                  "Cache directory, which must exist except for warm (default: TESSEL_CACHE_DIR, else "
                  "$XDG_CACHE_HOME/tessel)");
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

  auto* clear = cmd->add_subcommand("clear", "Remove every entry (files that are not tessel's are left alone)");
  clear->add_flag("--json", as_json, "JSON output");
  clear->callback([&rc] {
    cache::Store store = open_store(dir);
    uint64_t bytes = 0;
    for (const auto& e : store.list()) bytes += e.bytes;
    cache::ClearResult r = store.clear();
    const size_t n = r.removed;
    // Only what is gone counts as removed (a read-only cache keeps its entries).
    std::vector<cache::EntryInfo> left = store.list();
    for (const auto& e : left) bytes -= std::min(bytes, e.bytes);
    if (!left.empty())
      throw UsageError(fmt::format("cache clear: removed {} entr{}, but {} could not be removed from {} (read-only?)", n,
                                   n == 1 ? "y" : "ies", left.size(), store.dir().string()));
    // The user's own files in the cache directory are never removed: say they were left.
    std::string foreign = r.foreign == 0 ? ""
                                         : fmt::format("; left {} file{} or folder{} that {} not tessel's", r.foreign,
                                                       r.foreign == 1 ? "" : "s", r.foreign == 1 ? "" : "s",
                                                       r.foreign == 1 ? "is" : "are");
    if (as_json)
      fmt::print("{}\n", json{{"dir", store.dir().string()}, {"removed", n}, {"bytes", bytes}, {"foreign_left", r.foreign}}
                             .dump(2));
    else
      fmt::print("removed {} entr{} ({}) from {}{}\n", n, n == 1 ? "y" : "ies", human_bytes(bytes),
                 store.dir().string(), foreign);
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
  warm->add_option("--arch", arch, "GPU architecture")->check(CLI::IsMember(jit::known_archs()));
  warm->add_option("--num-warps", num_warps, "Warps per program")->check(CLI::IsMember({1, 2, 4, 8, 16, 32}));
  warm->add_option("--num-stages", num_stages, "Pipelining depth")->check(CLI::Range(1, 8));
  warm->add_option("-D", defines, "Meta-parameter NAME=VALUE (repeatable)");
  warm->add_flag("--aligned", aligned, "Specialise as a launch whose pointers and integers are all divisible by 16");
  warm->add_flag("--no-cubin", no_cubin, "Store PTX only");
  warm->add_flag("--json", as_json, "JSON output");
  warm->callback([&rc] {
    cache::Store store = open_store(dir, /*may_create=*/true);
    auto f = trace_registered(kernel, defines, aligned);
    cache::Entry e = cache::compile_entry(*f, jit::CompileOptions{num_warps, num_stages}, arch, !no_cubin);
    const std::string k = e.meta.key;
    const std::string cubin = e.cubin.empty() ? "no cubin" : "cubin by " + e.meta.cubin_tool;
    // An existing entry counts only when it verifies: a damaged one is rebuilt in its place, an
    // unreadable one (permissions) is the user's to fix.
    cache::EntryCheck before = store.check(k);
    if (before.kind == cache::EntryCheck::Unreadable)
      throw UsageError(fmt::format("cache warm: the entry {} in {} cannot be read ({})", k, store.dir().string(),
                                   before.problem));
    const bool damaged = before.kind == cache::EntryCheck::Corrupt;
    std::string failure;
    cache::StoreResult r = store.store(std::move(e), /*replace=*/damaged, &failure);
    // A full or read-only cache directory is the user's environment, not a tessel bug.
    if (r == cache::StoreResult::Failed)
      throw UsageError(fmt::format("cache warm: cannot write to the cache directory {}: {}", store.dir().string(), failure));
    const char* what = r == cache::StoreResult::Exists ? "already cached" : damaged ? "rebuilt" : "stored";
    if (as_json) {
      json j{{"key", k}, {"kernel", kernel}, {"arch", arch}, {"result", what}, {"cubin", cubin}};
      if (damaged) j["damage"] = before.problem;
      fmt::print("{}\n", j.dump(2));
    } else {
      fmt::print("{} {} ({} for {}, {}){}\n", what, k, kernel, arch, cubin,
                 damaged ? fmt::format(": the cached entry was damaged ({})", before.problem) : "");
    }
    rc = 0;
  });
}

}  // namespace tessel::cli
