// The JIT's counters (tessel/jit/counters.hpp), incremented where the events happen.
#pragma once
#include <atomic>
#include <cstdint>

namespace tessel::jit::detail {

struct CounterCells {
  std::atomic<uint64_t> lowered{0}, disk_cache_hits{0}, memory_hits{0}, modules_loaded{0};
};
CounterCells& counter_cells();

}  // namespace tessel::jit::detail
