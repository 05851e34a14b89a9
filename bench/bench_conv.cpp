// Conv2d -> BN -> ReLU (conv_kernels.hpp) on ResNet-50's 3x3 layers at batch 32 (56x56x64,
// 28x28x128, 14x14x256, 7x7x512; stride 1, padding 1; NHWC f16), fused and unfused, against
// torch's cuDNN convolution alone and eager conv + BN + ReLU (quant_ref.py, same GPU run). Sweeps
// tilings (BLOCK_K 64 and 128), warps, stages, producer warps (" ws") and, for the fused
// kernel, K split over 2-4 programs (conv2d_bn_relu_splitk) and stream-K on 1 or 2 programs a SM
// (conv2d_bn_relu_streamk); spot-checks each config against a double host convolution and keeps
// the fastest; TFLOP/s count 2 * B * P * Q * K * R * S * C. BENCH_CONFIGS filters the configs by
// name ("64x64x128 w4 s3", "... k3" split in 3, "... sk1" stream-K), BENCH_LAYERS the layers ("7x7x512").
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "bench_filter.hpp"
#include "bench_timer.hpp"
#include "tessel/interp/float_formats.hpp"
#include "tessel/samples/conv_kernels.hpp"
#include "tessel/samples/sample.hpp"

namespace tessel::bench_quant {

namespace {

struct ConvCfg {
  int bm, bn, bk, warps, stages, splits;  // splits 0: conv2d_bn_relu (or the unfused pair)
  bool ws = false;                        // warp_specialize: a producer warpgroup copies the tiles
  int sk = 0;                             // > 0: conv2d_bn_relu_streamk on sk programs per SM
  std::string str() const {
    return fmt::format("{}x{}x{} w{} s{}{}{}{}", bm, bn, bk, warps, stages, splits ? fmt::format(" k{}", splits) : "",
                       sk ? fmt::format(" sk{}", sk) : "", ws ? " ws" : "");
  }
};
}  // namespace

// Writes `"conv": {...}` (no trailing comma) to `js`.
void bench_conv(std::FILE* js) {
  using jit::Array;
  using jit::Grid;
  static bench::Timer timer;
  fmt::print(js, "  \"conv\": {{\n");
  struct Layer {
    int64_t hw, c;
  };
  const std::vector<Layer> layers{{56, 64}, {28, 128}, {14, 256}, {7, 512}};
  const int64_t B = 32, R = 3;
  bool first_layer = true;
  for (size_t li = 0; li < layers.size(); ++li) {
    const int64_t H = layers[li].hw, W = H, C = layers[li].c, K = C, P = H, Q = W, M = B * P * Q;
    if (!bench::listed("BENCH_LAYERS", fmt::format("{}x{}x{}", H, W, C))) continue;
    std::mt19937_64 rng(H);
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    std::vector<uint16_t> x(B * H * W * C), w(K * R * R * C);
    for (auto& v : x) v = interp::f16_from_double(unit(rng));
    for (auto& v : w) v = interp::f16_from_double(unit(rng) / std::sqrt(9.0 * C));
    std::vector<float> scale(K), shift(K);
    for (int64_t k = 0; k < K; ++k) scale[k] = static_cast<float>(0.5 + (unit(rng) + 1) / 2), shift[k] = static_cast<float>(0.1 * unit(rng));
    Array<uint16_t> xd(x), wd(w), yd(M * K);
    Array<float> sd(scale), hd(shift);
    // The split-K form's partials (4 slices at most) and arrival counters (zero between launches).
    Array<float> part(4 * M * K);
    Array<int32_t> count(std::vector<int32_t>(static_cast<size_t>(M * K), 0));
    auto check = [&] {
      std::vector<uint16_t> y = yd.download();
      for (int64_t probe = 0; probe < 16; ++probe) {
        const int64_t m = (probe * 7919) % M, k = (probe * 104729) % K;
        const int64_t b = m / (P * Q), p = (m % (P * Q)) / Q, q = m % Q;
        double acc = 0, mag = 0;
        for (int64_t rr = 0; rr < R; ++rr)
          for (int64_t ss = 0; ss < R; ++ss) {
            const int64_t ih = p - 1 + rr, iw = q - 1 + ss;
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
            for (int64_t c = 0; c < C; ++c) {
              const double v = interp::f16_to_double(x[((b * H + ih) * W + iw) * C + c]) *
                               interp::f16_to_double(w[((k * R + rr) * R + ss) * C + c]);
              acc += v, mag += std::fabs(v);
            }
          }
        const double ref = std::max(acc * scale[k] + shift[k], 0.0);
        if (std::fabs(interp::f16_to_double(y[m * K + k]) - ref) > 0x1p-9 * mag * scale[k] + 0x1p-10 * ref + 1e-5)
          return false;
      }
      return true;
    };
    std::vector<ConvCfg> configs;
    for (auto [bm, bn, wp] : std::vector<std::tuple<int, int, int>>{
             {128, 64, 4}, {128, 128, 4}, {128, 128, 8}, {64, 64, 4}, {128, 256, 8}, {256, 128, 8}, {256, 64, 8}})
      for (int st : {3, 4}) configs.push_back({bm, bn, 64, wp, st, 0});
    if (C % 128 == 0)
      for (auto [bm, bn, wp] : std::vector<std::tuple<int, int, int>>{{128, 64, 4}, {128, 128, 8}, {64, 64, 4}, {64, 128, 4}})
        for (int st : {2, 3, 4}) configs.push_back({bm, bn, 128, wp, st, 0});
    // Producer warps (4 warps computing the im2col addresses and issuing the copies).
    for (auto [bm, bn, bk, wp, st] : std::vector<std::tuple<int, int, int, int, int>>{
             {128, 64, 64, 4, 4}, {128, 128, 64, 8, 4}, {128, 128, 64, 8, 5}, {128, 256, 64, 8, 3}, {256, 64, 64, 8, 4},
             {128, 128, 64, 4, 4}, {64, 128, 64, 4, 4}, {128, 128, 128, 8, 3}, {128, 64, 128, 4, 3}, {64, 128, 128, 4, 3}})
      if (C % bk == 0) {
        configs.push_back({bm, bn, bk, wp, st, 0, true});
        if (M * K / (64 * 64) < 400 && bm * bn >= 128 * 128) configs.push_back({bm, bn, bk, wp, st, 2, true});
      }
    // Split K where the tiles are few (fewer than ~3 per SM at 64x64).
    if (M * K / (64 * 64) < 400)
      for (int splits : {2, 3, 4})
        for (auto [bm, bn, bk, wp, st] : std::vector<std::tuple<int, int, int, int, int>>{
                 {64, 64, 64, 4, 4}, {128, 64, 64, 4, 3}, {128, 128, 64, 8, 3}, {64, 64, 128, 4, 3},
                 {128, 64, 128, 4, 3}, {64, 128, 128, 4, 3}, {64, 128, 128, 4, 4}, {128, 128, 128, 8, 3}})
          if (C % bk == 0) configs.push_back({bm, bn, bk, wp, st, splits});
    // Stream-K where the tiles are few: every program the same share of all tiles' K blocks (the
    // four fastest of session 39's sweep of 16, all slower than the unsplit tiles on an H200).
    if (M * K / (64 * 64) < 400)
      for (auto [bm, bn, bk, wp, st, ws, sk] : std::vector<std::tuple<int, int, int, int, int, bool, int>>{
               {128, 128, 64, 4, 4, true, 1}, {64, 64, 128, 4, 3, false, 2}, {128, 64, 128, 4, 3, false, 1},
               {64, 128, 128, 4, 3, false, 1}})
        if (C % bk == 0) configs.push_back({bm, bn, bk, wp, st, 0, ws, sk});
    const int sms = jit::Device::current().multiprocessors();
    const double flops = 2.0 * M * K * R * R * C;
    double best[2] = {1e30, 1e30};
    std::string best_cfg[2];
    bool all_ok = true;
    for (int fused = 1; fused >= 0; --fused)
      for (const ConvCfg& c : configs) {
        if (c.bn > K || ((c.splits || c.sk) && !fused) || !bench::listed("BENCH_CONFIGS", c.str())) continue;
        jit::Meta meta{{"BLOCK_M", c.bm}, {"BLOCK_N", c.bn}, {"BLOCK_K", c.bk}, {"R", 3},
                       {"S", 3},          {"STRIDE", 1},     {"PAD", 1}};
        if (c.splits) meta.set("SPLITS", c.splits);  // the split-K kernel's meta names its slices
        if (c.sk) meta.set("SM_PROGRAMS", c.sk);
        jit::CompileOptions opts{c.warps, c.stages};
        opts.warp_specialize = c.ws;
        const Grid grid{jit::cdiv(M, c.bm), jit::cdiv(K, c.bn)};
        // K = 9 C in c.splits slices of whole BLOCK_K blocks.
        const samples::KSlices ks = samples::k_slices(9 * C, c.bk, std::max(c.splits, 1));
        const int64_t per = ks.per;
        const Grid split_grid{grid.x, grid.y, static_cast<uint32_t>(ks.count)};
        // Stream-K: sk programs a SM share tiles * iters K blocks; two partial slots a program.
        const int64_t tiles_n = jit::cdiv(K, c.bn);
        const samples::KSlices sk = samples::stream_k_split(jit::cdiv(M, c.bm) * tiles_n * (9 * C / c.bk), c.sk * sms);
        Array<float> sk_part(c.sk ? 2 * sk.count * c.bm * c.bn : 1);
        auto launch = [&](int) {
          if (c.sk)
            return samples::k_conv2d_bn_relu_streamk.launch(Grid{static_cast<uint32_t>(sk.count)}, meta, opts, xd, wd,
                                                            sd, hd, sk_part, count, yd, B, H, W, C, K, P, Q, tiles_n,
                                                            sk.per);
          if (c.splits)
            return samples::k_conv2d_bn_relu_splitk.launch(split_grid, meta, opts, xd, wd, sd, hd, part, count, yd, B, H,
                                                           W, C, K, P, Q, per);
          if (fused) return samples::k_conv2d_bn_relu.launch(grid, meta, opts, xd, wd, sd, hd, yd, B, H, W, C, K, P, Q);
          samples::k_conv2d.launch(grid, meta, opts, xd, wd, yd, B, H, W, C, K, P, Q);
          samples::k_bn_relu_nhwc.launch(Grid{jit::cdiv(M * K, 1024)}, jit::Meta{}, jit::CompileOptions{}, yd, sd, hd,
                                         M * K, K);
        };
        try {
          yd.poison();
          launch(0);
          bool ok = check();
          const double ms = timer.median_ms(launch, 5, 30);
          if (c.splits || c.sk)  // every launch leaves the arrival counters at zero
            for (int32_t v : count.download()) ok = ok && v == 0;
          fmt::print("  conv {}x{}x{} {:<8} {:<18} {:8.4f} ms {:7.1f} TFLOP/s {}\n", H, W, C, fused ? "fused" : "unfused",
                     c.str(), ms, flops / (ms * 1e-3) / 1e12, ok ? "" : "WRONG");
          if (!ok) all_ok = false;
          if (ok && ms < best[fused]) best[fused] = ms, best_cfg[fused] = c.str();
        } catch (const std::exception& e) {
          fmt::print("  conv {}x{}x{} {:<18} failed: {}\n", H, W, C, c.str(), e.what());
        }
      }
    fmt::print("conv3x3 {}x{}x{} batch {}: fused {:.4f} ms ({}, {:.1f} TFLOP/s), unfused {:.4f} ms ({}){}\n", H, W, C,
               B, best[1], best_cfg[1], flops / (best[1] * 1e-3) / 1e12, best[0], best_cfg[0],
               all_ok ? "" : " (a config computed wrong values)");
    fmt::print(js,
               "{}    \"{}x{}x{}\": {{\"fused_ms\": {:.5f}, \"fused_config\": \"{}\", \"unfused_ms\": {:.5f}, "
               "\"unfused_config\": \"{}\", \"TFLOPs\": {:.2f}, \"verified\": {}}}",
               first_layer ? "" : ",\n", H, W, C, best[1], best_cfg[1], best[0], best_cfg[0],
               flops / (best[1] * 1e-3) / 1e12, all_ok ? "true" : "false");
    first_layer = false;
  }
  fmt::print(js, "\n  }}");
}

}  // namespace tessel::bench_quant
