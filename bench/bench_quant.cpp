// GPU benchmarks of issue 27's samples: the int4 weight-only matmul (W4A16) at M = 1, 16 and 4096
// with N = K = 8192 (group 128), and the horizontal fusion sin/cos (one read, two writes) with
// the seeds' relu((x + 1) * 2)^2 and sigmoid(x) * tanh(x + 1), fused and unfused, on 2^26 f32.
// W4A16 sweeps a fixed set of tilings, spot-checks every config against a double host reference
// and keeps the fastest (bench_timer.hpp medians); GB/s count the bytes the kernel must read
// and write (int4 weights, scales, A, C), TFLOP/s 2 * M * N * K. bench/quant_ref.py times torch
// on the same shapes in the same GPU run (f16 matmul on the unquantised weight, eager and
// compiled pointwise). Prints a table and writes JSON (argv[1]).
// BENCH_CASES="w4a16,fp8": only these parts (pointwise, w4a16, fp8, conv; all when unset);
// BENCH_SIZES="1,16": only these W4A16 M; BENCH_CONFIGS: only the W4A16 configs whose name
// contains one of the listed parts (bench_filter.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "bench_filter.hpp"
#include "bench_timer.hpp"
#include "tessel/interp/float_formats.hpp"
#include "tessel/runtime/runtime.hpp"
#include "tessel/samples/fusion_kernels.hpp"
#include "tessel/samples/quant_kernels.hpp"
#include "tessel/samples/sample.hpp"

using namespace tessel;
using jit::Array;
using jit::Grid;

namespace tessel::bench_quant {
void bench_fp8(std::FILE* js);   // bench_fp8.cpp
void bench_conv(std::FILE* js);  // bench_conv.cpp
}

namespace {

double time_ms(const std::function<void(int)>& fn, int warmup = 10, int reps = 60) {
  static bench::Timer timer;
  return timer.median_ms(fn, warmup, reps);
}

struct W4Config {
  int bm, bn, bk, warps, stages, splits = 0;  // splits > 0: the split-K kernel (its last arrival sums)
  int max_registers = 0;                       // ptxas .maxnreg (0: ptxas chooses)
  bool gemv = false;                           // w4a16_gemv: a program a row, no tensor cores (bm 1)
  std::string str() const {
    return fmt::format("{}x{}x{} w{} s{}{}{}{}", bm, bn, bk, warps, stages, splits ? fmt::format(" split{}", splits) : "",
                       max_registers ? fmt::format(" r{}", max_registers) : "", gemv ? " gemv" : "");
  }
};

struct W4Result {
  int64_t M;
  std::string best;
  double ms = 1e30;
  bool checked = true;
};

W4Result bench_w4a16(int64_t M, int64_t N, int64_t K) {
  const int64_t G = 128;
  std::mt19937_64 rng(M);
  std::vector<uint16_t> a(M * K), s(K / G * N);
  std::vector<uint32_t> wq(K / 8 * N);
  for (auto& v : a) v = interp::f16_from_double(std::uniform_real_distribution<double>(-1, 1)(rng));
  for (auto& v : wq) v = static_cast<uint32_t>(rng());
  for (auto& v : s) v = interp::f16_from_double(std::uniform_real_distribution<double>(0.002, 0.02)(rng));
  Array<uint16_t> ad(a), sd(s), cd(M * N);
  Array<uint32_t> wd(wq);
  Array<float> part(M <= 16 ? 64 * M * N : 1);  // split-K partials: the small-M configs only
  Array<int32_t> count(std::vector<int32_t>(M * jit::cdiv(N, 32), 0));  // split-K arrivals, self-resetting
  // Spot check: a few outputs against the host's dequantised dot product.
  auto check = [&]() {
    std::vector<uint16_t> c = cd.download();
    for (int64_t probe = 0; probe < 16; ++probe) {
      const int64_t i = (probe * 7919) % M, n = (probe * 104729) % N;
      double ref = 0, mag = 0;
      for (int64_t k = 0; k < K; ++k) {
        const double q = static_cast<double>((wq[(k / 8) * N + n] >> (4 * (k % 8))) & 15);
        const double w = interp::f16_to_double(interp::f16_from_double((q - 8) * interp::f16_to_double(s[(k / G) * N + n])));
        const double p = interp::f16_to_double(a[i * K + k]) * w;
        ref += p, mag += std::fabs(p);
      }
      if (std::fabs(interp::f16_to_double(c[i * N + n]) - ref) > (0x1p-10 + K * 0x1p-23) * mag + 1e-6) return false;
    }
    return true;
  };
  std::vector<W4Config> configs;
  if (M <= 16) {
    // BLOCK_M 16: the dequantised B stays in registers (the mma's fragments); a stage holds A's
    // 16 x BLOCK_K f16 and BLOCK_K x BLOCK_N / 2 bytes of words. Split K gives more CTAs than SMs.
    for (int bk : {64, 128})
      for (int bn : {32, 64, 128})
        for (int st : {2, 3, 4}) {
          configs.push_back({16, bn, bk, 4, st});
          for (int sp : {4, 8, 16}) configs.push_back({16, bn, bk, 4, st, sp});
        }
    for (int bn : {128, 256})  // 8 warps along N
      for (int st : {3, 4}) {
        configs.push_back({16, bn, 128, 8, st});
        for (int sp : {4, 8}) configs.push_back({16, bn, 128, 8, st, sp});
      }
    // At most 128 registers: four CTAs of 4 warps (two of 8) a SM instead of three (one); 96 at
    // BLOCK_N 64 (no spills there): five.
    for (auto [bn, w, regs] : std::vector<std::tuple<int, int, int>>{{128, 4, 128}, {256, 8, 128}, {64, 4, 96}})
      for (int st : {3, 4})
        for (int sp : {4, 8}) configs.push_back({16, bn, 128, w, st, sp, regs});
    // The GEMV form (M = 1 only: it reads the weights once a row of A): 4 u32 words a thread
    // along N, every warp along N, K split so that the grid has several CTAs a SM.
    if (M == 1)
      for (auto [bn, w] : std::vector<std::pair<int, int>>{{256, 2}, {512, 4}, {1024, 8}})
        for (int bk : {64, 128})
          for (int sp : {8, 16, 32, 64}) configs.push_back({1, bn, bk, w, 1, sp, 0, true});
  } else {
    for (auto [bm, bn, bk, w] : std::vector<std::tuple<int, int, int, int>>{
             {128, 128, 64, 4}, {128, 128, 64, 8}, {128, 256, 64, 8}, {128, 128, 128, 8}, {64, 128, 64, 4}})
      for (int st : {2, 3, 4}) configs.push_back({bm, bn, bk, w, st});  // 2: fewer bytes, more CTAs a SM
    // 256 rows on 8 warps: each thread dequantises half the weights per product of 128x128 w4
    // (one CTA a SM); BLOCK_K 128 fits 2 stages.
    for (int st : {3, 4}) configs.push_back({256, 128, 64, 8, st});
    configs.push_back({256, 128, 128, 8, 2});
    // 2 stages at 168 registers (28 bytes spilled): three CTAs a SM instead of two.
    configs.push_back({128, 128, 64, 4, 2, 0, 168});
  }
  W4Result r{M, "", 1e30, true};
  for (const W4Config& c : configs) {
    if (!bench::listed("BENCH_CONFIGS", c.str())) continue;
    jit::Meta meta{{"BLOCK_N", c.bn}, {"BLOCK_K", c.bk}, {"GROUP", 128}};
    if (!c.gemv) meta.set("BLOCK_M", c.bm);
    if (c.splits) meta.set("SPLITS", c.splits);  // the split-K kernel's meta names its slices
    jit::CompileOptions opts{c.warps, c.stages};
    opts.max_registers = c.max_registers;
    const Grid grid{jit::cdiv(M, c.bm), jit::cdiv(N, c.bn)};
    const auto [per, splits] = samples::k_slices(K, c.bk, std::max(c.splits, 1));
    auto launch = [&](int) {
      if (c.splits == 0) return samples::k_w4a16_matmul.launch(grid, meta, opts, ad, wd, sd, cd, M, N, K);
      auto& split_form = c.gemv ? samples::k_w4a16_gemv : samples::k_w4a16_splitk;  // the same parameters
      split_form.launch(Grid{grid.x, grid.y, static_cast<uint32_t>(splits)}, meta, opts, ad, wd, sd, part, count, cd, M,
                        N, K, per);
    };
    try {
      cd.poison();
      launch(0);
      const bool ok = check();
      const double ms = time_ms(launch, 5, 30);
      fmt::print("  w4a16 M={:<5} {:<18} {:8.4f} ms {}\n", M, c.str(), ms, ok ? "" : "WRONG");
      if (!ok) r.checked = false;
      if (ok && ms < r.ms) r.ms = ms, r.best = c.str();
    } catch (const std::exception& e) {
      fmt::print("  w4a16 M={:<5} {:<18} failed: {}\n", M, c.str(), e.what());
    }
  }
  return r;
}

// Pointwise rows (2^26 f32): fused and unfused; bytes are those of the fused form (its floor).
void bench_pointwise(std::FILE* js, int64_t n) {
  const jit::Meta meta{{"BLOCK", 1024}};
  const jit::CompileOptions opts{4, 1};
  const Grid grid{jit::cdiv(n, 1024)};
  std::vector<Array<float>> xs;
  for (int s = 0; s < 2; ++s) xs.emplace_back(samples::random_floats(n, 10 + s));
  Array<float> o1(n), o2(n), t1(n), t2(n), t3(n);
  auto X = [&](int i) -> Array<float>& { return xs[i % 2]; };
  struct Row {
    std::string name;
    double ms, bytes;
  };
  std::vector<Row> rows;
  const double B = 4.0 * n;
  rows.push_back({"sin_cos", time_ms([&](int i) { samples::k_sin_cos.launch(grid, meta, opts, X(i), o1, o2, n); }), 3 * B});
  rows.push_back({"sin_cos_unfused", time_ms([&](int i) {
                    samples::k_sin.launch(grid, meta, opts, X(i), o1, n);
                    samples::k_cos.launch(grid, meta, opts, X(i), o2, n);
                  }),
                  3 * B});
  rows.push_back({"relu_sq", time_ms([&](int i) { samples::k_relu_sq.launch(grid, meta, opts, X(i), o1, n); }), 2 * B});
  rows.push_back({"relu_sq_unfused", time_ms([&](int i) {
                    samples::k_add_scalar.launch(grid, meta, opts, X(i), t1, n, 1.0f);
                    samples::k_scale.launch(grid, meta, opts, t1, t2, n, 2.0f);
                    samples::k_relu.launch(grid, meta, opts, t2, t3, n);
                    samples::k_square.launch(grid, meta, opts, t3, o1, n);
                  }),
                  2 * B});
  rows.push_back({"sigmoid_tanh", time_ms([&](int i) { samples::k_sigmoid_tanh.launch(grid, meta, opts, X(i), o1, n); }),
                  2 * B});
  rows.push_back({"sigmoid_tanh_unfused", time_ms([&](int i) {
                    samples::k_sigmoid.launch(grid, meta, opts, X(i), t1, n);
                    samples::k_add_scalar.launch(grid, meta, opts, X(i), t2, n, 1.0f);
                    samples::k_tanh.launch(grid, meta, opts, t2, t3, n);
                    samples::k_mul.launch(grid, meta, opts, t1, t3, o1, n);
                  }),
                  2 * B});
  fmt::print("\n{:<24} {:>9} {:>9}\n", "pointwise (2^26 f32)", "ms", "GB/s");
  fmt::print(js, "  \"pointwise\": {{\n");
  for (size_t i = 0; i < rows.size(); ++i) {
    const double gbps = rows[i].bytes / (rows[i].ms * 1e-3) / 1e9;
    fmt::print("{:<24} {:>9.4f} {:>9.0f}\n", rows[i].name, rows[i].ms, gbps);
    fmt::print(js, "    \"{}\": {{\"ms\": {:.5f}, \"GBps\": {:.1f}}}{}\n", rows[i].name, rows[i].ms, gbps,
               i + 1 < rows.size() ? "," : "");
  }
  fmt::print(js, "  }},\n");
}

}  // namespace

int main(int argc, char** argv) {
  const std::string json_path = argc > 1 ? argv[1] : "bench_quant.json";
  jit::Device& dev = jit::Device::current();
  fmt::print("device: {}\n", dev.describe());
  if (dev.kind() != jit::BackendKind::Cuda) {
    fmt::print(stderr, "tessel_bench_quant needs a GPU\n");
    return 1;
  }
  std::FILE* js = std::fopen(json_path.c_str(), "w");
  fmt::print(js, "{{\n  \"device\": \"{}\",\n", dev.describe());

  // Device copy bandwidth (read + write of 1 GiB), the floor of the pointwise rows.
  const int64_t n = int64_t{1} << 26;
  {
    Array<float> big_a(n * 4), big_b(n * 4);
    const double copy_ms = time_ms([&](int) {
      rt::check(rt::cu().MemcpyDtoD(big_b.address(), big_a.address(), big_a.bytes()), "cuMemcpyDtoD");
    });
    const double copy = 2.0 * big_a.bytes() / (copy_ms * 1e-3) / 1e9;
    fmt::print("device copy: {:.0f} GB/s\n", copy);
    fmt::print(js, "  \"copy_GBps\": {:.1f},\n", copy);
  }

  if (bench::listed("BENCH_CASES", "pointwise")) bench_pointwise(js, n);
  fmt::print(js, "  \"w4a16\": {{\n");

  const int64_t N = 8192, K = 8192;
  std::vector<int64_t> ms_list;
  for (int64_t M : {1, 16, 4096})
    if (bench::listed("BENCH_CASES", "w4a16") && bench::listed_exactly("BENCH_SIZES", std::to_string(M))) ms_list.push_back(M);
  for (size_t i = 0; i < ms_list.size(); ++i) {
    const int64_t M = ms_list[i];
    W4Result r = bench_w4a16(M, N, K);
    const double bytes = K / 2.0 * N + K / 128.0 * N * 2 + M * K * 2.0 + M * N * 2.0;
    const double gbps = bytes / (r.ms * 1e-3) / 1e9, tflops = 2.0 * M * N * K / (r.ms * 1e-3) / 1e12;
    fmt::print("w4a16 M={} N={} K={}: best {} {:.4f} ms, {:.0f} GB/s, {:.1f} TFLOP/s{}\n", M, N, K, r.best, r.ms, gbps,
               tflops, r.checked ? "" : " (a config computed wrong values)");
    fmt::print(js, "    \"M{}\": {{\"ms\": {:.5f}, \"GBps\": {:.1f}, \"TFLOPs\": {:.2f}, \"config\": \"{}\", \"verified\": {}}}{}\n",
               M, r.ms, gbps, tflops, r.best, r.checked ? "true" : "false", i + 1 < ms_list.size() ? "," : "");
  }
  fmt::print(js, "  }},\n");
  if (bench::listed("BENCH_CASES", "fp8")) bench_quant::bench_fp8(js), fmt::print(js, ",\n");
  if (bench::listed("BENCH_CASES", "conv")) bench_quant::bench_conv(js), fmt::print(js, ",\n");
  fmt::print(js, "  \"end\": true\n}}\n");
  std::fclose(js);
  return 0;
}
