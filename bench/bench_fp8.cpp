// The fp8 scaled matmul (fp8_kernels.hpp) at 8192^3 and 4096^3, e4m3 x e4m3 with row-wise
// scales, f16 output, against torch._scaled_mm (cuBLAS fp8) timed by quant_ref.py in the same
// GPU run. Sweeps a fixed set of tilings, warps, stages and warp specialisation, spot-checks
// each config against a double host product and keeps the fastest; TFLOP/s count 2 * M * N * K.
#include <fmt/format.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "bench_timer.hpp"
#include "tessel/interp/float_formats.hpp"
#include "tessel/samples/fp8_kernels.hpp"
#include "tessel/samples/sample.hpp"

namespace tessel::bench_quant {

namespace {
struct Fp8Config {
  int bm, bn, bk, warps, stages;
  bool ws;
  std::string str() const { return fmt::format("{}x{}x{} w{} s{}{}", bm, bn, bk, warps, stages, ws ? " ws" : ""); }
};
}  // namespace

// Writes `"fp8": {...}` (no trailing comma) to `js`.
void bench_fp8(std::FILE* js) {
  using jit::Array;
  using jit::Grid;
  static bench::Timer timer;
  fmt::print(js, "  \"fp8\": {{\n");
  const std::vector<int64_t> sizes{4096, 8192};
  for (size_t si = 0; si < sizes.size(); ++si) {
    const int64_t M = sizes[si], N = sizes[si], K = sizes[si];
    std::mt19937_64 rng(M);
    std::normal_distribution<double> normal(0.0, 1.0);
    std::vector<uint8_t> a(M * K), b(N * K);
    for (auto& v : a) v = interp::f8e4m3_from_double(16.0 * normal(rng));
    for (auto& v : b) v = interp::f8e4m3_from_double(4.0 * normal(rng));
    std::vector<float> sa(M), sb(N);
    for (auto& v : sa) v = static_cast<float>(0.01 + 0.09 * (rng() % 1000) / 1000.0);
    for (auto& v : sb) v = static_cast<float>(0.01 + 0.09 * (rng() % 1000) / 1000.0);
    Array<uint8_t> ad(a), bd(b);
    Array<float> sad(sa), sbd(sb);
    Array<uint16_t> cd(M * N);
    auto check = [&] {
      std::vector<uint16_t> c = cd.download();
      for (int64_t probe = 0; probe < 16; ++probe) {
        const int64_t i = (probe * 7919) % M, n = (probe * 104729) % N;
        double ref = 0, mag = 0;
        for (int64_t k = 0; k < K; ++k) {
          const double p = interp::f8e4m3_to_double(a[i * K + k]) * interp::f8e4m3_to_double(b[n * K + k]);
          ref += p, mag += std::fabs(p);
        }
        const double s = static_cast<double>(sa[i]) * sb[n];
        if (std::fabs(interp::f16_to_double(c[i * N + n]) - ref * s) > (0x1p-9 + 0x1p-10) * mag * s + 1e-6) return false;
      }
      return true;
    };
    std::vector<Fp8Config> configs;
    for (auto [bm, bn, bk, w] : std::vector<std::tuple<int, int, int, int>>{
             {128, 128, 128, 8}, {128, 256, 128, 8}, {128, 256, 64, 8}, {256, 128, 128, 8}, {128, 128, 128, 4}})
      for (int st : {3, 4})
        for (bool ws : {false, true}) configs.push_back({bm, bn, bk, w, st, ws});
    std::string best;
    double best_ms = 1e30;
    bool all_ok = true;
    for (const Fp8Config& c : configs) {
      const jit::Meta meta{{"BLOCK_M", c.bm}, {"BLOCK_N", c.bn}, {"BLOCK_K", c.bk}, {"GROUP_M", 8}, {"ROWWISE", 1}};
      jit::CompileOptions opts{c.warps, c.stages};
      opts.warp_specialize = c.ws;
      const Grid grid{jit::cdiv(M, c.bm) * jit::cdiv(N, c.bn)};
      auto launch = [&](int) { samples::k_fp8_matmul.launch(grid, meta, opts, ad, bd, sad, sbd, cd, M, N, K); };
      try {
        cd.poison();
        launch(0);
        const bool ok = check();
        const double ms = timer.median_ms(launch, 5, 30);
        fmt::print("  fp8 {}^3 {:<22} {:8.4f} ms {:7.1f} TFLOP/s {}\n", M, c.str(), ms,
                   2.0 * M * N * K / (ms * 1e-3) / 1e12, ok ? "" : "WRONG");
        if (!ok) all_ok = false;
        if (ok && ms < best_ms) best_ms = ms, best = c.str();
      } catch (const std::exception& e) {
        fmt::print("  fp8 {}^3 {:<22} failed: {}\n", M, c.str(), e.what());
      }
    }
    const double tflops = 2.0 * M * N * K / (best_ms * 1e-3) / 1e12;
    fmt::print("fp8 scaled matmul {}^3: best {} {:.4f} ms, {:.1f} TFLOP/s{}\n", M, best, best_ms, tflops,
               all_ok ? "" : " (a config computed wrong values)");
    fmt::print(js, "    \"N{}\": {{\"ms\": {:.5f}, \"TFLOPs\": {:.2f}, \"config\": \"{}\", \"verified\": {}}}{}\n", M,
               best_ms, tflops, best, all_ok ? "true" : "false", si + 1 < sizes.size() ? "," : "");
  }
  fmt::print(js, "  }}");
}

}  // namespace tessel::bench_quant
