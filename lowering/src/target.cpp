// Target parsing and per-architecture hardware limits.
#include "tessel/lowering/target.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace tessel::lowering {

std::string Target::arch() const { return fmt::format("sm_{}{}", sm, accel ? "a" : ""); }

int default_ptx_version(int sm) { return 80; }
int max_ptx_version() { return 85; }

int Target::resolved_ptx() const { return ptx_version ? ptx_version : default_ptx_version(sm); }

std::string Target::ptx_feature() const { return fmt::format("+ptx{}", resolved_ptx()); }

Target Target::parse(std::string_view s) {
  static constexpr int kKnown[] = {80, 86, 87, 89, 90};
  Target t;
  std::string_view rest = s;
  if (rest.substr(0, 3) != "sm_")
    throw std::invalid_argument(fmt::format("unknown GPU architecture '{}' (expected sm_80 .. sm_90a)", s));
  rest.remove_prefix(3);
  if (!rest.empty() && rest.back() == 'a') {
    t.accel = true;
    rest.remove_suffix(1);
  }
  int sm = 0;
  bool digits = !rest.empty() && rest.size() <= 3;
  for (char c : rest) {
    if (c < '0' || c > '9') digits = false;
    else sm = sm * 10 + (c - '0');
  }
  bool known = false;
  for (int k : kKnown) known |= digits && k == sm;
  if (!known || (t.accel && sm != 90))
    throw std::invalid_argument(fmt::format("unknown GPU architecture '{}' (expected sm_80, sm_86, "
                                            "sm_87, sm_89, sm_90 or sm_90a)", s));
  t.sm = sm;
  return t;
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
