// GPU benchmarks of the reduction samples: softmax, LayerNorm (fp16), cross-entropy.
// Prints a table and writes JSON (argv[1]); compare with bench/reductions_ref.py in the same run.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "bench_timer.hpp"
#include "tessel/runtime/runtime.hpp"
#include "tessel/samples/reduction_kernels.hpp"
#include "tessel/samples/sample.hpp"

using namespace tessel;
using jit::Array;
using jit::Grid;

namespace {

double time_ms(const std::function<void()>& fn, int warmup = 10, int reps = 50) {
  static bench::Timer timer;
  return timer.median_ms([&](int) { fn(); }, warmup, reps);
}

// f32 -> IEEE binary16 bits, round to nearest even (inputs here are small normals).
uint16_t to_f16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  int32_t e = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t m = x & 0x7fffffu;
  if (e <= 0) return static_cast<uint16_t>(sign);
  uint32_t h = sign | (static_cast<uint32_t>(e) << 10) | (m >> 13);
  uint32_t rest = m & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(h);
}

std::vector<uint16_t> random_f16(size_t n, uint64_t seed) {
  auto f = samples::random_floats(n, seed);
  std::vector<uint16_t> h(n);
  for (size_t i = 0; i < n; ++i) h[i] = to_f16(f[i]);
  return h;
}

int64_t next_pow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

struct Row {
  std::string name;
  double ms, bytes;
  int warps;
  std::string variant = "";  // which sample/config a "best of" row is
  double gbps() const { return bytes / (ms * 1e-3) / 1e9; }
};

}  // namespace

int main(int argc, char** argv) {
  std::string json_path = argc > 1 ? argv[1] : "tessel_bench_reductions.json";
  jit::Device& dev = jit::Device::current();
  fmt::print("device: {}\n", dev.describe());
  if (dev.kind() != jit::BackendKind::Cuda) {
    fmt::print(stderr, "bench_reductions needs a GPU\n");
    return 1;
  }
  std::vector<Row> rows;
  bool failed = false;  // a kernel failed
  auto best = [&](const std::string& name, double bytes, const std::function<void(int)>& launch,
                  const std::vector<int>& warps = {2, 4, 8, 16}) {
    Row r{name, 1e30, bytes, 0};
    for (int w : warps) {
      try {
        double ms = time_ms([&] { launch(w); });
        if (ms < r.ms) r.ms = ms, r.warps = w;
      } catch (const std::exception& e) {  // report and go on with the other kernels
        fmt::print("{} (num_warps={}): error: {}\n", name, w, e.what());
        failed = true;
      }
    }
    rows.push_back(r);
    fmt::print("{:<34} {:>9.4f} ms {:>8.0f} GB/s  (num_warps={})\n", r.name, r.ms, r.gbps(), r.warps);
  };

  // The fastest of the rows from `first` on, reported as `name` (its variant named).
  auto add_best = [&](const std::string& name, size_t first) {
    Row r = *std::min_element(rows.begin() + static_cast<std::ptrdiff_t>(first), rows.end(),
                              [](const Row& a, const Row& c) { return a.ms < c.ms; });
    r.variant = r.name.substr(name.size() + 1);
    r.name = name;
    rows.push_back(r);
    fmt::print("{:<34} {:>9.4f} ms {:>8.0f} GB/s  (best: {}, num_warps={})\n", r.name, r.ms, r.gbps(), r.variant,
               r.warps);
  };

  // Softmax fp32 8192 x 4096, the row in one tile: one row per program, and persistent programs.
  {
    const int64_t R = 8192, C = 4096;
    Array<float> x(samples::random_floats(R * C, 1)), out(R * C);
    const jit::Meta meta{{"BLOCK", C}};
    const std::string name = "softmax_f32_8192x4096";
    const size_t first = rows.size();
    best(name + "_row", 2.0 * 4 * R * C, [&](int w) {
      samples::k_softmax.launch(Grid{static_cast<uint32_t>(R)}, meta, jit::CompileOptions{w, 1}, x, out, C, C, C);
    });
    for (int per_sm : {1, 2})
      best(fmt::format("{}_persistent_x{}", name, per_sm), 2.0 * 4 * R * C, [&](int w) {
        samples::k_softmax_persistent.launch(Grid{static_cast<uint32_t>(per_sm * dev.multiprocessors())}, meta,
                                             jit::CompileOptions{w, 1}, x, out, R, C, C, C);
      }, {4, 8, 16, 32});
    add_best(name, first);
  }
  // LayerNorm fp16 storage, fp32 math: 4096 x N. Three samples: the row kept in registers
  // (layernorm_f16, BLOCK = the row), three passes over column blocks that re-read x from the
  // caches (layernorm_looped_f16, fewer registers, more programs per SM), and persistent
  // programs that keep the next row's load in flight (layernorm_persistent_f16, 1 or 2
  // programs per SM); the fastest is reported.
  for (int64_t N : {1024, 4096, 16384}) {
    const int64_t R = 4096;
    Array<uint16_t> x(random_f16(R * N, 2)), w(random_f16(N, 3)), b(random_f16(N, 4)), y(R * N);
    Array<float> mean(R), rstd(R);
    const std::string name = fmt::format("layernorm_f16_4096x{}", N);
    const size_t first = rows.size();
    best(name + "_row", 2.0 * 2 * R * N, [&](int wp) {
      samples::k_layernorm_f16.launch(Grid{static_cast<uint32_t>(R)}, jit::Meta{{"BLOCK", next_pow2(N)}},
                                      jit::CompileOptions{wp, 1}, x, w, b, y, mean, rstd, N, N, 1e-5f);
    });
    for (int64_t blk = next_pow2(N); blk >= 1024; blk /= 2)
      best(fmt::format("{}_looped_b{}", name, blk), 2.0 * 2 * R * N, [&](int wp) {
        samples::k_layernorm_looped_f16.launch(Grid{static_cast<uint32_t>(R)}, jit::Meta{{"BLOCK", blk}},
                                               jit::CompileOptions{wp, 1}, x, w, b, y, mean, rstd, N, N, 1e-5f);
      });
    for (int per_sm : {1, 2})
      best(fmt::format("{}_persistent_x{}", name, per_sm), 2.0 * 2 * R * N, [&](int wp) {
        samples::k_layernorm_persistent_f16.launch(
            Grid{static_cast<uint32_t>(per_sm * dev.multiprocessors())}, jit::Meta{{"BLOCK", next_pow2(N)}},
            jit::CompileOptions{wp, 1}, x, w, b, y, mean, rstd, R, N, N, 1e-5f);
      }, {4, 8, 16, 32});
    add_best(name, first);
  }
  // Cross-entropy fp32, 8192 rows x 32000 vocabulary: logits read once.
  {
    const int64_t R = 8192, V = 32000;
    Array<float> logits(samples::random_floats(R * V, 5)), loss(R);
    std::vector<int32_t> ht(R);
    std::mt19937 gen(6);
    for (auto& t : ht) t = static_cast<int32_t>(gen() % V);
    Array<int32_t> targets(ht);
    for (int64_t blk : {1024, 2048, 4096}) {
      const jit::Meta meta{{"BLOCK", blk}};
      best(fmt::format("cross_entropy_8192x32000_b{}", blk), 4.0 * R * V, [&](int w) {
        samples::k_cross_entropy.launch(Grid{static_cast<uint32_t>(R)}, meta, jit::CompileOptions{w, 1}, logits,
                                        targets, loss, V, V);
      });
    }
  }

  std::FILE* js = std::fopen(json_path.c_str(), "w");
  fmt::print(js, "{{\n  \"device\": \"{}\",\n  \"kernels\": {{\n", dev.describe());
  for (size_t i = 0; i < rows.size(); ++i)
    fmt::print(js, "    \"{}\": {{\"ms\": {:.5f}, \"GBps\": {:.1f}, \"num_warps\": {}, \"variant\": \"{}\"}}{}\n",
               rows[i].name, rows[i].ms, rows[i].gbps(), rows[i].warps, rows[i].variant, i + 1 < rows.size() ? "," : "");
  fmt::print(js, "  }}\n}}\n");
  std::fclose(js);
  return failed ? 1 : 0;
}
