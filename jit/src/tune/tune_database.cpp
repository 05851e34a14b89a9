// The tuning database: results per key and config, JSON text, atomic merging saves.
#include "tessel/jit/tune/database.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <system_error>

#include "cache/cache_io.hpp"
#include "tessel/ir/error.hpp"
#include "tessel/jit/cache.hpp"

namespace tessel::jit::tune {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kFormat = 1;
constexpr Status kAll[] = {Status::Ok, Status::Pruned, Status::CompileError, Status::LaunchError, Status::WrongOutput};

// An exclusive lock on <p>.lock for one load-merge-write, so concurrent savers (other processes
// tuning other kernels) do not drop each other's results.
class FileLock {
 public:
  explicit FileLock(const fs::path& p) {
    fs::path lock = p;
    lock += ".lock";
    fd_ = ::open(lock.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
    if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "tuning database: open " + lock.string());
    while (::flock(fd_, LOCK_EX) != 0)
      if (errno != EINTR) {
        ::close(fd_);
        throw std::system_error(errno, std::generic_category(), "tuning database: lock " + lock.string());
      }
  }
  ~FileLock() { ::close(fd_); }  // closing releases the lock
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

json result_to_json(const ConfigResult& r) {
  json j;
  j["config"] = r.config.str();
  j["status"] = status_name(r.status);
  if (r.status == Status::Ok) {
    j["median_ms"] = r.timing.median_ms;
    j["min_ms"] = r.timing.min_ms;
    j["max_ms"] = r.timing.max_ms;
    j["reps"] = r.timing.reps;
  } else {
    j["reason"] = r.reason;
  }
  return j;
}

ConfigResult result_from_json(const json& j) {
  ConfigResult r;
  r.config = Config::parse(j.at("config").get<std::string>());
  r.status = parse_status(j.at("status").get<std::string>());
  if (r.status == Status::Ok) {
    r.timing.median_ms = j.at("median_ms").get<double>();
    r.timing.min_ms = j.at("min_ms").get<double>();
    r.timing.max_ms = j.at("max_ms").get<double>();
    r.timing.reps = j.at("reps").get<int>();
  } else {
    r.reason = j.at("reason").get<std::string>();
  }
  return r;
}

}  // namespace

std::string_view status_name(Status s) {
  switch (s) {
    case Status::Ok: return "ok";
    case Status::Pruned: return "pruned";
    case Status::CompileError: return "compile error";
    case Status::LaunchError: return "launch error";
    case Status::WrongOutput: return "wrong output";
  }
  return "?";
}

Status parse_status(std::string_view s) {
  for (Status st : kAll)
    if (status_name(st) == s) return st;
  throw std::invalid_argument(fmt::format("unknown tuning status '{}'", s));
}

std::vector<ConfigResult> rank(std::vector<ConfigResult> rs) {
  std::stable_sort(rs.begin(), rs.end(), [](const ConfigResult& a, const ConfigResult& b) {
    const bool ao = a.status == Status::Ok, bo = b.status == Status::Ok;
    if (ao != bo) return ao;
    if (ao && a.timing.median_ms != b.timing.median_ms) return a.timing.median_ms < b.timing.median_ms;
    return false;  // ties and failures keep the order given
  });
  return rs;
}

fs::path Database::default_path() {
  if (const char* p = std::getenv("TESSEL_TUNE_DB"); p && *p) return p;
  fs::path dir = cache::Settings::dir_from_env();
  return dir.empty() ? fs::path() : dir / "tuning.json";
}

void Database::record(const DbKey& k, const ConfigResult& r) { entries_[k][r.config.str()] = r; }

std::optional<ConfigResult> Database::result(const DbKey& k, const Config& c) const {
  auto it = entries_.find(k);
  if (it == entries_.end()) return std::nullopt;
  auto r = it->second.find(c.str());
  if (r == it->second.end()) return std::nullopt;
  return r->second;
}

std::optional<Config> Database::best(const DbKey& k, const std::vector<Config>& among) const {
  auto it = entries_.find(k);
  if (it == entries_.end()) return std::nullopt;
  const ConfigResult* best = nullptr;
  for (const auto& [text, r] : it->second) {  // sorted by text: ties go to the first, deterministically
    if (r.status != Status::Ok) continue;
    if (!among.empty() && std::find(among.begin(), among.end(), r.config) == among.end()) continue;
    if (!best || r.timing.median_ms < best->timing.median_ms) best = &r;
  }
  if (!best) return std::nullopt;
  return best->config;
}

std::vector<ConfigResult> Database::results(const DbKey& k) const {
  std::vector<ConfigResult> out;
  auto it = entries_.find(k);
  if (it == entries_.end()) return out;
  for (const auto& [text, r] : it->second) out.push_back(r);
  return rank(std::move(out));
}

std::vector<DbKey> Database::keys() const {
  std::vector<DbKey> out;
  for (const auto& [k, rs] : entries_) out.push_back(k);
  return out;
}

void Database::merge(const Database& other) {
  for (const auto& [k, rs] : other.entries_)
    for (const auto& [text, r] : rs) entries_[k][text] = r;
}

std::string Database::to_json() const {
  json entries = json::array();
  for (const auto& [k, rs] : entries_) {
    json e;
    e["kernel"] = k.kernel;
    e["key"] = k.key;
    e["device"] = k.device;
    e["sm"] = k.sm;
    e["version"] = k.version;
    json results = json::array();
    for (const auto& [text, r] : rs) results.push_back(result_to_json(r));
    e["results"] = std::move(results);
    entries.push_back(std::move(e));
  }
  json root;
  root["format"] = kFormat;
  root["entries"] = std::move(entries);
  return root.dump(1) + "\n";
}

Database Database::from_json(std::string_view text, const std::string& origin) {
  Database db;
  try {
    json root = json::parse(text);
    const int format = root.at("format").get<int>();
    if (format != kFormat)
      throw std::runtime_error(fmt::format("format {} (this tessel reads format {})", format, kFormat));
    for (const json& e : root.at("entries")) {
      DbKey k{e.at("kernel").get<std::string>(), e.at("key").get<std::string>(), e.at("device").get<std::string>(),
              e.at("sm").get<std::string>(), e.at("version").get<std::string>()};
      for (const json& r : e.at("results")) db.record(k, result_from_json(r));
    }
  } catch (const std::exception& e) {
    // json errors, a bad config text (CompileError), an unknown status: all mean a damaged file,
    // which is the user's (or their disk's), not a tessel bug: UserError, exit 1 in the CLI.
    throw UserError(fmt::format("tuning database {} is malformed: {} (expected the JSON object that tessel tune "
                                "writes, format {}; move the file away to start a new database)",
                                origin, e.what(), kFormat));
  }
  return db;
}

Database Database::load(const fs::path& p) {
  std::error_code ec;
  if (!fs::exists(p, ec)) return {};
  std::optional<std::string> text = cache::io::read(p);
  if (!text)
    throw UserError(fmt::format("tuning database {} cannot be read (expected a readable regular file)", p.string()));
  return from_json(*text, p.string());
}

void Database::save(const fs::path& p) const {
  if (p.empty()) throw UserError("tuning database: no path (set TESSEL_TUNE_DB or TESSEL_CACHE_DIR)");
  try {
    if (p.has_parent_path()) fs::create_directories(p.parent_path());
  } catch (const fs::filesystem_error& e) {
    throw UserError(fmt::format("tuning database {}: {} (expected a path in a writable directory)", p.string(),
                                e.what()));
  }
  FileLock lock(p);
  Database merged = load(p);
  merged.merge(*this);
  fs::path tmp = p;
  tmp += ".tmp-" + cache::io::unique_suffix();
  try {
    cache::io::write_synced(tmp, merged.to_json());
    fs::rename(tmp, p);
  } catch (const std::exception& e) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw UserError(fmt::format("tuning database {} not saved: {}", p.string(), e.what()));
  }
  cache::io::sync_dir(p.has_parent_path() ? p.parent_path() : fs::path("."));
}

}  // namespace tessel::jit::tune
