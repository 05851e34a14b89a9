// Export of tunable kernels: bundle config names and the tuned table from the tuning database.
#pragma once
#include <string>
#include <vector>

#include "tessel/jit/registry.hpp"
#include "tessel/jit/tune/database.hpp"
#include "tessel/runtime/bundle_manifest.hpp"

namespace tessel::jit::bundle_tuned {

// A bundle config name for `c` that is also usable in file names: "BLOCK1024_w4_s1".
std::string config_name(const tune::Config& c);

// The device whose results are exported for `e`: `wanted` when given, else the only device the
// database has results of e for ("" when none); CompileError naming them when there are several.
std::string pick_device(const KernelEntry& e, const tune::Database& db, const std::string& wanted);

// One rule per tuned key of `e` on `device` whose key parses with e.key and whose signature is
// `signature`: the key's bucket ranges -> the name (names[i] for e.configs[i]) of its fastest Ok
// config among e.configs. Results of this tessel version win over older ones for the same key.
rt::TunedTable tuned_table(const KernelEntry& e, const std::vector<std::string>& names, const std::string& signature,
                           const tune::Database& db, const std::string& device);

}  // namespace tessel::jit::bundle_tuned
