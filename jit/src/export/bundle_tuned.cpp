// Export of tunable kernels: config names, the device to export for, the tuned table.
#ifdef TESSEL_HAS_LOWERING
#include "bundle_tuned.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "tessel/ir/error.hpp"
#include "tessel/jit/cache.hpp"

namespace tessel::jit::bundle_tuned {

std::string config_name(const tune::Config& c) {
  std::string s;
  for (const auto& [k, v] : c.meta.values()) s += fmt::format("{}{}_", k, v);
  // "w4_s1", then "_p2", "_ws", ...: each option's tag (and an int's value) where it is shown.
  for (const OptionInfo& o : option_table()) {
    const int64_t v = option_value(c.opts, o.name);
    if (!option_shown(o, v)) continue;
    if (o.name != option_table().front().name) s += '_';
    s += o.is_flag ? std::string(o.tag) : fmt::format("{}{}", o.tag, v);
  }
  for (char& ch : s)  // meta names are the user's strings; keep file names plain
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '-') ch = '_';
  return s;
}

std::string pick_device(const KernelEntry& e, const tune::Database& db, const std::string& wanted) {
  if (!wanted.empty()) return wanted;
  std::set<std::string> devices;
  for (const tune::DbKey& k : db.keys())
    if (k.kernel == e.name) devices.insert(k.device);
  if (devices.size() > 1)
    throw CompileError({}, fmt::format("export: the tuning database has results of '{}' for several devices ({}); "
                                       "choose one (ExportOptions::tune_device, --tune-device)",
                                       e.name, fmt::join(devices, ", ")));
  return devices.empty() ? std::string() : *devices.begin();
}

rt::TunedTable tuned_table(const KernelEntry& e, const std::vector<std::string>& names, const std::string& signature,
                           const tune::Database& db, const std::string& device) {
  rt::TunedTable t;
  if (device.empty() || e.key.params.empty()) return t;
  const std::string version = cache::tessel_version();
  // Per key string, the entry to use: this version's, else the newest recorded (keys are sorted).
  std::map<std::string, tune::DbKey> chosen;
  for (const tune::DbKey& k : db.keys()) {
    if (k.kernel != e.name || k.device != device) continue;
    auto [it, fresh] = chosen.emplace(k.key, k);
    if (!fresh && it->second.version != version) it->second = k;
  }
  for (const auto& [key, k] : chosen) {
    tune::KeySpec::Parsed parsed;
    try {
      parsed = e.key.parse_key(key);
    } catch (const std::invalid_argument&) {
      continue;  // recorded under another key declaration
    }
    if (parsed.signature != signature) continue;
    std::optional<tune::Config> best = db.best(k, e.configs);
    if (!best) continue;
    const size_t i = std::find(e.configs.begin(), e.configs.end(), *best) - e.configs.begin();
    rt::TunedRule r;
    for (size_t p = 0; p < e.key.params.size(); ++p)
      r.ranges.push_back(tune::KeySpec::bucket_range(e.key.params[p].bucket, parsed.values[p]));
    r.config = names[i];
    t.rules.push_back(std::move(r));
  }
  if (!t.rules.empty())
    for (const tune::KeyParam& p : e.key.params) t.key.push_back(p.name);
  return t;
}

}  // namespace tessel::jit::bundle_tuned
#endif
