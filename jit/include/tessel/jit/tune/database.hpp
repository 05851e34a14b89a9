// The tuning database: per (kernel, key, device, sm, version), one result per config, as JSON on disk.
#pragma once
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "tessel/jit/tune/config.hpp"
#include "tessel/jit/tune/timing.hpp"

namespace tessel::jit::tune {

enum class Status { Ok, Pruned, CompileError, LaunchError, WrongOutput };
std::string_view status_name(Status s);  // "ok", "pruned", "compile error", "launch error", "wrong output"
// The inverse of status_name; std::invalid_argument otherwise.
Status parse_status(std::string_view s);

struct ConfigResult {
  Config config;
  Status status = Status::Ok;
  Timing timing;       // meaningful for Ok only
  std::string reason;  // why it is not Ok
  friend bool operator==(const ConfigResult&, const ConfigResult&) = default;
};

struct DbKey {
  std::string kernel;   // registry name
  std::string key;      // KeySpec::key_string(...)
  std::string device;   // "NVIDIA H200"
  std::string sm;       // "sm_90"
  std::string version;  // tessel version
  friend auto operator<=>(const DbKey&, const DbKey&) = default;
  friend bool operator==(const DbKey&, const DbKey&) = default;
};

// Results ordered the way reports show them: Ok by median time, then the rest in the order given
// (a stable sort, so ties keep their order too).
std::vector<ConfigResult> rank(std::vector<ConfigResult> results);

class Database {
 public:
  // $TESSEL_TUNE_DB, else <cache dir>/tuning.json (the disk cache's directory, see cache.hpp);
  // empty when neither can be found.
  static std::filesystem::path default_path();
  // A missing file gives an empty database; an unreadable or malformed one a UserError naming the
  // file (the user's file, not a tessel bug).
  static Database load(const std::filesystem::path& p);
  // Atomic: under a lock file (<p>.lock) reads what is on disk now, merges this database into it
  // (ours wins per (key, config)), writes a temporary file next to `p` and renames it over `p`.
  // Readers see the old file or the new one, never half of one. UserError when it cannot be
  // written (std::system_error when the lock file cannot be made).
  void save(const std::filesystem::path& p) const;

  // Per config: a result for another config of the same key is kept.
  void record(const DbKey& k, const ConfigResult& r);
  // The fastest Ok config of `k` (among `among` when not empty); nullopt when none.
  std::optional<Config> best(const DbKey& k, const std::vector<Config>& among = {}) const;
  // Ranked (see rank()); empty for an unknown key.
  std::vector<ConfigResult> results(const DbKey& k) const;
  // The result of one config of `k`, if recorded.
  std::optional<ConfigResult> result(const DbKey& k, const Config& c) const;
  std::vector<DbKey> keys() const;  // sorted
  // other's results win per (key, config).
  void merge(const Database& other);
  bool empty() const { return entries_.empty(); }

  // The JSON text save() writes: keys sorted, results sorted by config text.
  std::string to_json() const;
  // Parses to_json() text; std::runtime_error naming `origin` when malformed.
  static Database from_json(std::string_view text, const std::string& origin);

 private:
  std::map<DbKey, std::map<std::string, ConfigResult>> entries_;  // config.str() -> result
};

}  // namespace tessel::jit::tune
