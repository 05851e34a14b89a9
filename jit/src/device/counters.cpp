// The JIT's process-wide counters.
#include "tessel/jit/counters.hpp"

#include "counters_internal.hpp"

namespace tessel::jit {

detail::CounterCells& detail::counter_cells() {
  static CounterCells cells;
  return cells;
}

JitCounters jit_counters() {
  const detail::CounterCells& c = detail::counter_cells();
  return {c.lowered.load(), c.disk_cache_hits.load(), c.memory_hits.load(), c.modules_loaded.load()};
}

}  // namespace tessel::jit
