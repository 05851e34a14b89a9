// Process-wide counts of what the JIT has done: what a test or a service checks to see that a
// kernel was lowered once per architecture and loaded once per device.
#pragma once
#include <cstdint>

namespace tessel::jit {

struct JitCounters {
  uint64_t lowered = 0;          // kernels lowered to PTX (LLVM run) in this process
  uint64_t disk_cache_hits = 0;  // compiled variants read from the disk cache
  uint64_t memory_hits = 0;      // compiled variants taken from another device's compile in this process
  uint64_t modules_loaded = 0;   // GPU modules loaded (one per variant and device context)
};

// A snapshot of the counters (safe to call from any thread).
JitCounters jit_counters();

}  // namespace tessel::jit
