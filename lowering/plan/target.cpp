// The table of known architectures, target parsing and per-architecture hardware limits.
#include "tessel/lowering/target.hpp"

#include <fmt/format.h>

#include <array>
#include <stdexcept>

namespace tessel::lowering {

namespace {
// Minimum PTX ISA versions: PTX ISA manual, "PTX ISA version / target" table.
constexpr std::array<KnownTarget, 6> kKnownTargets{{
    //  name     sm  arch_specific wgmma  tma    clusters min_ptx
    {"sm_80", 80, false, false, false, false, 70},
    {"sm_86", 86, false, false, false, false, 71},
    {"sm_87", 87, false, false, false, false, 74},
    {"sm_89", 89, false, false, false, false, 78},
    {"sm_90", 90, false, false, true, true, 78},
    {"sm_90a", 90, true, true, true, true, 80},
}};
}  // namespace

std::span<const KnownTarget> known_targets() { return kKnownTargets; }

std::vector<std::string> known_target_names() {
  std::vector<std::string> names;
  for (const KnownTarget& k : kKnownTargets) names.emplace_back(k.name);
  return names;
}

std::string known_targets_text() {
  std::string s;
  for (size_t i = 0; i < kKnownTargets.size(); ++i)
    s += fmt::format("{}{}", i == 0 ? "" : i + 1 == kKnownTargets.size() ? " or " : ", ", kKnownTargets[i].name);
  return s;
}

std::string Target::arch() const { return fmt::format("sm_{}{}", sm, accel ? "a" : ""); }

int default_ptx_version(int sm) { return 80; }
int max_ptx_version() { return 85; }

int Target::resolved_ptx() const { return ptx_version ? ptx_version : default_ptx_version(sm); }

std::string Target::ptx_feature() const { return fmt::format("+ptx{}", resolved_ptx()); }

const KnownTarget* Target::known() const {
  for (const KnownTarget& k : kKnownTargets)
    if (k.sm == sm && k.arch_specific == accel) return &k;
  return nullptr;
}

// A GPU outside the table (a device's own sm, e.g. 75) gets none of the optional features.
bool Target::has_wgmma() const { return known() && known()->wgmma; }
bool Target::has_tma() const { return known() && known()->tma; }
bool Target::has_clusters() const { return known() && known()->clusters; }
int Target::min_ptx() const { return known() ? known()->min_ptx : 70; }

Target Target::parse(std::string_view s) {
  for (const KnownTarget& k : kKnownTargets)
    if (k.name == s) {
      Target t;
      t.sm = k.sm;
      t.accel = k.arch_specific;
      return t;
    }
  throw std::invalid_argument(fmt::format("unknown GPU architecture '{}' (expected {})", s, known_targets_text()));
}

TargetInfo target_info(const Target& t) {
  TargetInfo i;
  switch (t.sm) {
    case 80: i.max_shared_per_block = 163 * 1024; i.shared_per_sm = 164 * 1024; break;
    case 87: i.max_shared_per_block = 163 * 1024; i.shared_per_sm = 164 * 1024; break;
    case 86:
    case 89: i.max_shared_per_block = 99 * 1024; i.shared_per_sm = 100 * 1024;
             i.max_threads_per_block = 1024; break;
    default: i.max_shared_per_block = 227 * 1024; i.shared_per_sm = 228 * 1024; break;
  }
  return i;
}

}  // namespace tessel::lowering
