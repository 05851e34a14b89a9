// Kernel timing for the benchmarks, measured the way Triton's do_bench measures.
#pragma once
#include <algorithm>
#include <functional>
#include <vector>

#include "tessel/runtime/context.hpp"
#include "tessel/runtime/runtime.hpp"

namespace tessel::bench {

// Median milliseconds of `fn(i)` (i = repetition index, for rotating inputs). As in do_bench,
// the repetitions are queued without waiting in between, so the host's launch latency is not
// part of the figure (the GPU runs them back to back), the L2 is flushed by a 256 MiB memset
// before each repetition (outside its events), and each repetition has its own event pair.
//
// The timer's own driver calls (the flush buffer, its memsets, the events) and the benchmark's
// (copies) run on device 0's primary context, the one the JIT launches on. The JIT leaves its
// caller's context as it found it (none, in a benchmark's main thread), so the timer makes the
// primary context current for its lifetime: without it the first cuMemAlloc failed with
// CUDA_ERROR_INVALID_CONTEXT (H200, 2026-11-27).
class Timer {
 public:
  Timer() : primary_(0), flush_(size_t{256} << 20) {}

  // do_bench's own durations: the repetition counts fill about `warmup_ms` and `rep_ms` of
  // GPU time (from a 5-run estimate), so a figure is taken under the same sustained load (and
  // the clocks that load settles at) as Triton's. Short kernels get more repetitions.
  double sustained_ms(const std::function<void(int)>& fn, double warmup_ms = 25, double rep_ms = 100) {
    rt::Event a, z;
    fn(0);
    a.record(nullptr);
    for (int i = 0; i < 5; ++i) {
      flush_.memset(static_cast<uint8_t>(i));
      fn(i);
    }
    z.record(nullptr);
    z.synchronize();
    const double est = std::max<double>(1e-3, rt::Event::elapsed_ms(a, z) / 5.0);
    auto count = [&](double ms) { return static_cast<int>(std::clamp(ms / est, 1.0, 5000.0)); };
    return median_ms(fn, count(warmup_ms), count(rep_ms));
  }

  double median_ms(const std::function<void(int)>& fn, int warmup = 10, int reps = 60) {
    for (int i = 0; i < warmup; ++i) fn(i);
    std::vector<rt::Event> start(reps), stop(reps);
    for (int i = 0; i < reps; ++i) {
      flush_.memset(static_cast<uint8_t>(i));
      start[i].record(nullptr);
      fn(i);
      stop[i].record(nullptr);
    }
    stop.back().synchronize();
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) t.push_back(rt::Event::elapsed_ms(start[i], stop[i]));
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }

 private:
  rt::Context primary_;  // first: made current before flush_ is allocated
  rt::DeviceBuffer flush_;
};

}  // namespace tessel::bench
