// A kernel registered with a jit::Workload (a plugin's, or the application's own) as a Tunable,
// so `tessel tune` and `tessel bench` treat it like a built-in sample.
#include <deque>
#include <mutex>

#include "tessel/samples/tunables.hpp"

namespace tessel::samples {

Tunable tunable_of(const jit::KernelEntry& e) {
  if (!e.workload) throw std::invalid_argument("kernel '" + e.name + "' has no workload");
  const jit::Workload& w = *e.workload;
  Tunable t;
  t.name = e.name;
  t.kernel = e.name;
  t.description = e.description;
  t.size_names = w.size_names;
  for (const auto& s : w.sizes) t.sizes.push_back(SizeArgs{s});
  t.configs = [configs = e.configs](const SizeArgs&) { return configs; };
  t.default_config = [first = e.configs.front()](const SizeArgs&) { return first; };
  // The kernel's own prune travels with each problem (Problem::keep): the CLI applies it.
  t.key = e.key;
  t.make_problem = [make = w.make_problem](const SizeArgs& s) { return make(s.dims); };
  t.group = e.name;
  return t;
}

const Tunable* find_tunable_or_workload(std::string_view name, const jit::Registry& r) {
  if (const Tunable* t = find_tunable(name)) return t;
  const jit::KernelEntry* e = r.find(name);
  if (!e || !e->workload) return nullptr;
  // Made once per entry and kept for the life of the process (callers hold pointers).
  static std::mutex mu;
  static std::deque<std::pair<const jit::KernelEntry*, Tunable>> made;
  std::lock_guard lock(mu);
  for (const auto& [entry, t] : made)
    if (entry == e) return &t;
  return &made.emplace_back(e, tunable_of(*e)).second;
}

}  // namespace tessel::samples
