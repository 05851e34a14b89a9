// The PTX entry symbol of a kernel variant: the kernel's name, its meta-parameters and options,
// so ncu and nsys show which variant ran (every variant of a kernel used to share one symbol).
#include <fmt/format.h>

#include <cctype>
#include <cstdint>

#include "tessel/lowering/compile.hpp"

namespace tessel::lowering {
namespace {

// Only [A-Za-z0-9_] and no leading digit: valid in PTX and as a C identifier (ncu demangles
// nothing, so the symbol is shown as is).
std::string identifier_chars(std::string_view s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  return out;
}

// FNV-1a 64: stable across builds and hosts, so a long symbol's suffix never changes.
uint64_t fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

std::string entry_symbol(const ir::Function& f, const Options& o) {
  std::string s = identifier_chars(f.name);
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "k_" + s;
  for (const auto& [name, value] : f.meta)  // "m" for a minus sign: '-' is no identifier character
    s += fmt::format("_{}{}{}", identifier_chars(name), value < 0 ? "m" : "", value < 0 ? -value : value);
  s += fmt::format("_w{}_s{}", o.num_warps, o.num_stages);
  if (o.programs_per_cta != 1) s += fmt::format("_p{}", o.programs_per_cta);
  if (o.precise_math) s += "_precise";
  if (o.max_registers != 0) s += fmt::format("_r{}", o.max_registers);
  if (o.stage_mbarriers) s += "_mb";
  if (o.warpgroup_turns) s += "_wt";
  // Not warp_specialize or tma: a bundle compiles a config with them only where the target and
  // the variant's facts allow, and all images of a variant share one entry name.
  if (s.size() <= kMaxEntrySymbol) return s;
  // Too long for a profiler's column: a readable prefix and a hash of the whole.
  const std::string tail = fmt::format("_h{:016x}", fnv1a(s));
  return s.substr(0, kMaxEntrySymbol - tail.size()) + tail;
}

}  // namespace tessel::lowering
