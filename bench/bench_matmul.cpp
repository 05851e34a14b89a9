// GPU benchmarks of the matmul samples: f16 / bf16 matmul at 1024^3, 4096^3, 8192^3 and with a
// short K (8192 x 8192 x 1024), and the fused bias + GELU epilogue against matmul followed by the
// separate bias + GELU kernel.
// Prints a table and writes JSON (argv[1]); compare with bench/matmul_ref.py (cuBLAS through
// torch, Triton) in the same run. Each timed output is spot-checked against a host reference.
// BENCH_DIST=normal draws the inputs from N(0, 1), as the references' (default: uniform [-1, 1]).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "bench_filter.hpp"
#include "bench_timer.hpp"
#include "tessel/interp/float_formats.hpp"
#include "tessel/samples/matmul_kernels.hpp"

using namespace tessel;
using jit::Array;
using jit::Grid;

namespace {

struct Config {
  int bm, bn, bk, warps, stages;
  bool persistent = false;  // the *_persistent kernels: ~2 programs per SM loop over tiles
  int per_cta = 1;          // programs per CTA (2: ping-pong K loops on sm_90a)
  bool ws = false;          // warp_specialize: producer warps fill the K loop's stages
  bool tma = false;         // ... by TMA
  bool paired = false;      // the *_paired kernels: persistent in tile pairs sharing B (2-CTA clusters, multicast)
  std::string str() const {
    return fmt::format("{}x{}x{} w{} s{}{}{}{}{}{}", bm, bn, bk, warps, stages, persistent ? " persistent" : "",
                       per_cta > 1 ? fmt::format(" p{}", per_cta) : "", ws ? " ws" : "", tma ? " tma" : "",
                       paired ? " paired" : "");
  }
  jit::Meta meta() const { return {{"BLOCK_M", bm}, {"BLOCK_N", bn}, {"BLOCK_K", bk}, {"GROUP_M", 8}}; }
  jit::CompileOptions options() const { return {warps, stages, per_cta, ws, tma}; }
  // One program per tile of the M x N output, or the persistent kernels' grid.
  Grid grid(int64_t m, int64_t n) const {
    int64_t tiles = int64_t{jit::cdiv(m, bm)} * jit::cdiv(n, bn);
    if (paired) return samples::paired_tiles_grid(jit::cdiv(m, bm), jit::cdiv(n, bn), per_cta);
    return persistent ? samples::persistent_tiles_grid(tiles, per_cta) : Grid{static_cast<uint32_t>(tiles)};
  }
  Grid grid(int64_t n) const { return grid(n, n); }
};
const std::vector<Config> kConfigs{
    {64, 64, 32, 4, 1},   {64, 64, 32, 4, 3},   {128, 64, 32, 4, 3},  {128, 128, 32, 4, 2}, {128, 128, 32, 4, 3},
    {128, 128, 32, 8, 3}, {128, 128, 32, 8, 4}, {128, 128, 64, 8, 3}, {128, 128, 64, 8, 4}, {128, 256, 32, 8, 3},
    {128, 256, 64, 8, 3}, {128, 256, 64, 8, 4}, {256, 128, 64, 8, 3}, {64, 64, 64, 4, 3},   {64, 128, 64, 4, 3},
    {128, 64, 64, 4, 4},  {64, 64, 64, 4, 4},   {128, 128, 64, 4, 2}, {128, 128, 64, 4, 3}, {128, 128, 64, 4, 4},
    {64, 64, 64, 4, 5},   {64, 64, 128, 4, 3},  {64, 128, 64, 4, 4},  {128, 64, 64, 4, 5},
    // one warpgroup on 64x256, two CTAs per SM (registers and stages allow it)
    {64, 256, 32, 4, 4},  {64, 256, 64, 4, 2},
    // persistent; p2: two programs per CTA taking turns at the tensor cores
    {128, 256, 64, 8, 4, true}, {128, 128, 64, 4, 3, true},
    {128, 128, 64, 4, 3, true, 2}, {128, 128, 32, 4, 5, true, 2}, {128, 128, 32, 4, 6, true, 2},
    {128, 128, 32, 4, 7, true, 2}, {64, 256, 32, 4, 4, true, 2}, {64, 256, 32, 4, 5, true, 2},
    // ws: a producer warp set per program (warp_specialize)
    {128, 256, 64, 8, 3, false, 1, true}, {128, 256, 64, 8, 4, false, 1, true}, {128, 256, 64, 8, 4, true, 1, true},
    {128, 128, 64, 4, 4, false, 1, true}, {128, 128, 64, 4, 3, true, 2, true}, {128, 128, 32, 4, 6, true, 2, true},
    {64, 256, 32, 4, 5, true, 2, true},
    // tma: the producers copy by TMA
    {128, 256, 64, 8, 4, false, 1, true, true}, {128, 256, 64, 8, 4, true, 1, true, true},
    {128, 128, 64, 4, 3, true, 2, true, true}, {64, 256, 32, 4, 5, true, 2, true, true},
    {64, 256, 64, 4, 2, true, 2, true, true}, {128, 256, 64, 8, 3, true, 1, true, true},
    {128, 128, 32, 4, 6, true, 2, true, true},
    // the cooperative TMA tile with a 96 KiB ring (room for a 128 KiB f32 tile beside it)
    {128, 256, 64, 8, 2, true, 1, true, true}, {128, 256, 32, 8, 4, true, 1, true, true},
    {128, 256, 32, 8, 6, true, 1, true, true},
    // persistent in tile pairs sharing B: 2-CTA clusters multicasting B
    {128, 256, 64, 8, 4, true, 1, true, true, true}, {128, 128, 64, 8, 4, true, 1, true, true, true},
    {128, 256, 64, 8, 3, true, 1, true, true, true}, {128, 128, 64, 4, 3, true, 2, true, true, true},
    {128, 128, 32, 4, 6, true, 2, true, true, true},
    // ping-pong of one-warpgroup 64x256 tiles (m64n256 wgmma, as the cooperative tile's), in pairs sharing B
    {64, 256, 64, 4, 2, true, 2, true, true, true}, {64, 256, 32, 4, 5, true, 2, true, true, true}};

struct Row {
  std::string name, config;
  double ms = 1e30, flops = 0;
  double tflops() const { return flops / (ms * 1e-3) / 1e12; }
};

// Uniform in [-1, 1]; BENCH_DIST=normal: standard normal, as matmul_ref.py's torch.randn inputs
// for cuBLAS and Triton (the tensor cores' power, and so the clock a power-capped card holds,
// depends on the data: this compares tessel on the references' own distribution).
template <class Enc>
std::vector<uint16_t> random_matrix(int64_t n, uint64_t seed, Enc enc) {
  static const bool normal = [] {
    const char* e = std::getenv("BENCH_DIST");
    return e && std::string(e) == "normal";
  }();
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::normal_distribution<double> nd(0.0, 1.0);
  std::vector<uint16_t> h(n);
  for (auto& v : h) v = enc(normal ? nd(gen) : u(gen));
  return h;
}

// Relative error of 64 sampled outputs of C = A B (A M x K, B K x N, row-major) against a double
// reference over the (rounded) inputs, normalised by sum |a||b| (the dtype's accumulation
// bound); returns the largest.
template <class Dec>
double spot_check(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b, const std::vector<uint16_t>& c,
                  int64_t M, int64_t N, int64_t K, Dec dec, const std::function<double(double, int64_t)>& epilogue) {
  std::mt19937_64 gen(99);
  double worst = 0;
  for (int s = 0; s < 64; ++s) {
    int64_t i = gen() % M, j = gen() % N;
    double acc = 0, mag = 0;
    for (int64_t k = 0; k < K; ++k) {
      double p = dec(a[i * K + k]) * dec(b[k * N + j]);
      acc += p, mag += std::fabs(p);
    }
    double ref = epilogue(acc, j);
    worst = std::max(worst, std::fabs(dec(c[i * N + j]) - ref) / std::max(mag, 1e-30));
  }
  return worst;
}
template <class Dec>
double spot_check(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b, const std::vector<uint16_t>& c,
                  int64_t n, Dec dec, const std::function<double(double, int64_t)>& epilogue) {
  return spot_check(a, b, c, n, n, n, dec, epilogue);
}

// The plain matmul shapes (M, N, K): cubes, and the short K the issue names (8192 x 8192 x 1024:
// 16 K trips of 64 a tile, so each tile's prologue and epilogue weigh more).
struct Shape {
  int64_t m, n, k;
  std::string name() const { return m == n && n == k ? std::to_string(n) : fmt::format("{}x{}x{}", m, n, k); }
};
const std::vector<Shape> kShapes{{1024, 1024, 1024}, {4096, 4096, 4096}, {8192, 8192, 8192}, {8192, 8192, 1024}};

// BENCH_CONFIGS="a,b": only the configs whose name contains one of these (all when unset).
// BENCH_CASES="plain" / "fused": only the plain matmuls / the fused bias + GELU rows.
bool selected(const Config& c) { return bench::listed("BENCH_CONFIGS", c.str()); }

// BENCH_SIZES="4096,8192x8192x1024": only these shapes (a cube by its n; all when unset).
bool size_selected(const std::string& name) { return bench::listed_exactly("BENCH_SIZES", name); }
bool size_selected(int64_t n) { return size_selected(std::to_string(n)); }

}  // namespace

int main(int argc, char** argv) {
  std::string json_path = argc > 1 ? argv[1] : "tessel_bench_matmul.json";
  jit::Device& dev = jit::Device::current();
  fmt::print("device: {}\n", dev.describe());
  if (dev.kind() != jit::BackendKind::Cuda) {
    fmt::print(stderr, "bench_matmul needs a GPU\n");
    return 1;
  }
  bench::Timer timer;
  std::vector<Row> rows;
  bool failed = false;
  // Times every config (its output poisoned first, then spot-checked) and keeps the fastest correct one.
  auto time_best = [&](const std::string& name, double flops, int reps, Array<uint16_t>& result,
                       const std::function<void(const Config&)>& launch, const std::function<double()>& check) {
    Row r{name, "", 1e30, flops};
    double worst = 0;  // over every config's output
    std::string all;   // every config's time, for the log
    std::vector<std::pair<double, const Config*>> screened;  // correct configs by screening time
    for (const Config& c : kConfigs) {
      if (!selected(c)) continue;
      try {
        result.poison();
        double ms = timer.median_ms([&](int) { launch(c); }, 3, reps);
        double err = check();
        worst = std::max(worst, err);
        all += fmt::format(" {}={:.4f}", c.str(), ms);
        if (err >= 1e-2) fmt::print("{} [{}]: WRONG, max rel err {:.2e}\n", name, c.str(), err);
        else screened.emplace_back(ms, &c);
      } catch (const std::exception& e) {
        fmt::print("{} [{}]: error: {}\n", name, c.str(), e.what());
        failed = true;
      }
    }
    // The reported figure: the three fastest configs of the screening timed again under
    // do_bench's sustained load (about 125 ms of GPU time each), the way the Triton and cuBLAS
    // figures of matmul_ref.py are taken; a short screening run sees boost clocks that a
    // long one does not keep.
    std::sort(screened.begin(), screened.end());
    std::string sustained;
    for (size_t i = 0; i < screened.size() && i < 3; ++i) {
      const Config& c = *screened[i].second;
      double ms = timer.sustained_ms([&](int) { launch(c); });
      sustained += fmt::format(" {}={:.4f}", c.str(), ms);
      if (ms < r.ms) r.ms = ms, r.config = c.str();
    }
    all += "\n  sustained (ms):" + sustained;
    failed |= worst >= 1e-2;
    if (r.config.empty()) {
      failed = true;
      return;
    }
    fmt::print("{:<30} {:>9.4f} ms {:>7.1f} TFLOP/s  [{}]  max rel err over all configs {:.2e}\n", r.name, r.ms,
               r.tflops(), r.config, worst);
    fmt::print("  configs (ms):{}\n", all);
    rows.push_back(r);
  };

  for (const Shape& sh : kShapes) {
    if (!size_selected(sh.name()) || !bench::listed("BENCH_CASES", "plain")) continue;
    const double flops = 2.0 * sh.m * sh.n * sh.k;
    const int reps = flops >= 2.0 * 8192 * 8192 * 8192 ? 20 : 50;
    const int M = static_cast<int>(sh.m), N = static_cast<int>(sh.n), K = static_cast<int>(sh.k);
    for (bool bf : {false, true}) {
      auto enc = [&](double v) { return bf ? interp::bf16_from_double(v) : interp::f16_from_double(v); };
      auto dec = [&](uint16_t v) { return bf ? interp::bf16_to_double(v) : interp::f16_to_double(v); };
      auto ha = random_matrix(sh.m * sh.k, 1 + sh.k, enc), hb = random_matrix(sh.k * sh.n, 2 + sh.k, enc);
      Array<uint16_t> a(ha), b(hb), c(sh.m * sh.n);
      auto launch = [&](const Config& cfg) {
        auto run = [&](auto& k) {
          k.launch(cfg.grid(sh.m, sh.n), cfg.meta(), cfg.options(), a, b, c, M, N, K, K, 1, N, 1, N, 1);
        };
        if (cfg.paired && bf) run(samples::k_matmul_paired_bf16);
        else if (cfg.paired) run(samples::k_matmul_paired);
        else if (bf) run(cfg.persistent ? samples::k_matmul_persistent_bf16 : samples::k_matmul_bf16);
        else run(cfg.persistent ? samples::k_matmul_persistent : samples::k_matmul);
      };
      time_best(fmt::format("matmul_{}_{}", bf ? "bf16" : "f16", sh.name()), flops, reps, c, launch, [&] {
        return spot_check(ha, hb, c.download(), sh.m, sh.n, sh.k, dec, [](double v, int64_t) { return v; });
      });
    }
  }

  // Fused epilogue: gelu(A @ B + bias) in one kernel against matmul, then bias_gelu_2d
  // (BENCH_CASES=plain: the plain matmuls above only).
  for (int64_t n : {4096, 8192}) {
    if (!size_selected(n) || !bench::listed("BENCH_CASES", "fused")) continue;
    const int reps = n >= 8192 ? 20 : 50;
    const int ni = static_cast<int>(n);
    auto enc = [](double v) { return interp::f16_from_double(v); };
    auto dec = [](uint16_t v) { return interp::f16_to_double(v); };
    auto ha = random_matrix(n * n, 3, enc), hb = random_matrix(n * n, 4, enc), hbias = random_matrix(n, 5, enc);
    Array<uint16_t> a(ha), b(hb), bias(hbias), c(n * n), out(n * n);
    auto gelu_ref = [&](double v, int64_t j) {
      double x = v + dec(hbias[j]);
      return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    };
    time_best(fmt::format("matmul_bias_gelu_fused_{}", n), 2.0 * n * n * n, reps, out, [&](const Config& cfg) {
      auto& k = cfg.paired ? samples::k_matmul_bias_gelu_paired
                : cfg.persistent ? samples::k_matmul_bias_gelu_persistent : samples::k_matmul_bias_gelu;
      k.launch(cfg.grid(n), cfg.meta(), cfg.options(), a, b, bias, out, ni, ni, ni, ni, 1, ni, 1, ni, 1);
    }, [&] { return spot_check(ha, hb, out.download(), n, dec, gelu_ref); });
    time_best(fmt::format("matmul_then_bias_gelu_{}", n), 2.0 * n * n * n, reps, out, [&](const Config& cfg) {
      auto& k = cfg.paired ? samples::k_matmul_paired : cfg.persistent ? samples::k_matmul_persistent : samples::k_matmul;
      k.launch(cfg.grid(n), cfg.meta(), cfg.options(), a, b, c, ni, ni, ni, ni, 1, ni, 1, ni, 1);
      samples::k_bias_gelu_2d.launch(Grid{static_cast<uint32_t>(jit::cdiv(n, 32)), static_cast<uint32_t>(jit::cdiv(n, 64))},
                                     jit::Meta{}, jit::CompileOptions{}, c, bias, out, ni, ni, ni, ni);
    }, [&] { return spot_check(ha, hb, out.download(), n, dec, gelu_ref); });
    // The same fused kernel on A scaled by 3 / sqrt(n), so that A @ B has unit standard
    // deviation (above, it is sqrt(n) / 3 and GELU is nearly saturated): erf's two forms both
    // matter here, as for typical activations (matmul_ref.py times Triton on the same data).
    {
      auto hu = random_matrix(n * n, 3, [&](double v) { return enc(v * 3.0 / std::sqrt(static_cast<double>(n))); });
      Array<uint16_t> au(hu);
      time_best(fmt::format("matmul_bias_gelu_fused_unit_{}", n), 2.0 * n * n * n, reps, out, [&](const Config& cfg) {
        auto& k = cfg.paired ? samples::k_matmul_bias_gelu_paired
                : cfg.persistent ? samples::k_matmul_bias_gelu_persistent : samples::k_matmul_bias_gelu;
        k.launch(cfg.grid(n), cfg.meta(), cfg.options(), au, b, bias, out, ni, ni, ni, ni, 1, ni, 1, ni, 1);
      }, [&] { return spot_check(hu, hb, out.download(), n, dec, gelu_ref); });
    }
    // The pointwise pass alone: what fusion saves (reads and writes n*n f16 once each).
    double ms = timer.sustained_ms([&](int) {
      samples::k_bias_gelu_2d.launch(Grid{static_cast<uint32_t>(jit::cdiv(n, 32)), static_cast<uint32_t>(jit::cdiv(n, 64))},
                                     jit::Meta{}, jit::CompileOptions{}, c, bias, out, ni, ni, ni, ni);
    });
    fmt::print("bias_gelu_2d_{} alone: {:.4f} ms ({:.0f} GB/s)\n", n, ms, 4.0 * n * n / (ms * 1e-3) / 1e9);
    rows.push_back({fmt::format("bias_gelu_2d_{}", n), "32x64 w4", ms, 0});
  }

  std::FILE* js = std::fopen(json_path.c_str(), "w");
  fmt::print(js, "{{\n  \"device\": \"{}\",\n  \"kernels\": {{\n", dev.describe());
  for (size_t i = 0; i < rows.size(); ++i)
    fmt::print(js, "    \"{}\": {{\"ms\": {:.5f}, \"TFLOPs\": {:.2f}, \"config\": \"{}\"}}{}\n", rows[i].name, rows[i].ms,
               rows[i].tflops(), rows[i].config, i + 1 < rows.size() ? "," : "");
  fmt::print(js, "  }}\n}}\n");
  std::fclose(js);
  return failed ? 1 : 0;
}
