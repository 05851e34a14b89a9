// The global kernel registry.
#include "tessel/jit/registry.hpp"

#include <algorithm>
#include <stdexcept>

namespace tessel::jit {

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
