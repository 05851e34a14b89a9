// The global kernel registry.
#include "tessel/jit/registry.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace tessel::jit {

void check_workload(const std::string& kernel, const Workload& w) {
  auto bad = [&](const std::string& why) { throw std::invalid_argument("kernel '" + kernel + "': workload " + why); };
  if (w.size_names.empty()) bad("has no size names (e.g. {\"n\"})");
  if (w.sizes.empty()) bad("has no default sizes");
  for (const auto& s : w.sizes) {
    if (s.size() != w.size_names.size())
      bad("size with " + std::to_string(s.size()) + " values for " + std::to_string(w.size_names.size()) + " size names");
    for (int64_t v : s)
      if (v < 1) bad("size value " + std::to_string(v) + " is not positive");
  }
  if (!w.make_problem) bad("has no make_problem");
}

Registry& Registry::global() {
  static Registry r;
  return r;
}

void Registry::add(KernelEntry e) {
  if (find(e.name)) throw std::invalid_argument("kernel '" + e.name + "' is registered twice");
  entries_.push_back(std::move(e));
}

const KernelEntry* Registry::find(std::string_view name) const {
  for (const auto& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

std::vector<const KernelEntry*> Registry::list() const {
  std::vector<const KernelEntry*> out;
  for (const auto& e : entries_) out.push_back(&e);
  std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->name < b->name; });
  return out;
}

}  // namespace tessel::jit
