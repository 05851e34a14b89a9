// The Conv2d -> BN -> ReLU samples (NHWC f16, implicit GEMM), fused and unfused, checked against
// a double-precision host convolution of the same f16 inputs.
#include <fmt/format.h>

#include <cmath>
#include <random>

#include "tessel/interp/float_formats.hpp"
#include "tessel/samples/conv_kernels.hpp"
#include "tessel/samples/sample.hpp"

namespace tessel::samples {
namespace {
using jit::Array;
using jit::Grid;

enum class ConvForm { Fused, Unfused, SplitK, StreamK };

RunResult run_conv(const RunConfig& c, ConvForm form) {
  const bool fused = form != ConvForm::Unfused;
  const jit::Meta eff = k_conv2d_bn_relu.effective_meta(c.meta);
  const int64_t R = eff["R"], S = eff["S"], stride = eff["STRIDE"], pad = eff["PAD"], bk = eff["BLOCK_K"];
  const int64_t B = c.conv.batch > 0 ? c.conv.batch : 2, H = c.conv.h > 0 ? c.conv.h : 14;
  const int64_t W = c.conv.w > 0 ? c.conv.w : H, C = c.conv.c > 0 ? c.conv.c : 64, K = c.conv.k > 0 ? c.conv.k : C;
  if (R < 1 || S < 1 || stride < 1 || pad < 0)
    throw UserError(fmt::format("conv: R = {}, S = {}, STRIDE = {}, PAD = {}: want R, S, STRIDE >= 1 and PAD >= 0", R,
                                S, stride, pad));
  if (C % bk != 0)
    throw UserError(fmt::format("conv: the input channels C = {} must be a multiple of BLOCK_K = {} (a K block lies in "
                                "one filter tap)",
                                C, bk));
  const int64_t P = (H + 2 * pad - R) / stride + 1, Q = (W + 2 * pad - S) / stride + 1;
  if (P < 1 || Q < 1)
    throw UserError(fmt::format("conv: a {}x{} input with a {}x{} filter, padding {} gives no output", H, W, R, S, pad));
  if (std::max({B * H * W * C, K * R * S * C, B * P * Q * K}) > kMaxI32Offset)
    throw UserError(fmt::format("conv: a {}x{}x{}x{} input with {} output channels does not fit i32 offsets", B, H, W,
                                C, K));
  std::mt19937_64 rng(c.seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::vector<uint16_t> x(B * H * W * C), w(K * R * S * C);
  for (auto& v : x) v = interp::f16_from_double(unit(rng));
  for (auto& v : w) v = interp::f16_from_double(unit(rng) / std::sqrt(static_cast<double>(R * S * C)));
  // BN (inference) folded per channel: scale = gamma / sqrt(var + eps), shift = beta - mean * scale.
  std::vector<float> scale(K), shift(K);
  for (int64_t k = 0; k < K; ++k) {
    const double gamma = 0.5 + 0.5 * (unit(rng) + 1), beta = 0.2 * unit(rng), mean = 0.1 * unit(rng);
    const double var = 0.5 + 0.5 * (unit(rng) + 1);
    scale[k] = static_cast<float>(gamma / std::sqrt(var + 1e-5));
    shift[k] = static_cast<float>(beta - mean * scale[k]);
  }
  const int64_t M = B * P * Q;
  Array<uint16_t> xd(x), wd(w), y(M * K);
  Array<float> sd(scale), hd(shift);
  y.poison();
  const Grid grid{jit::cdiv(M, eff["BLOCK_M"]), jit::cdiv(K, eff["BLOCK_N"])};
  int launches = 1;
  if (form == ConvForm::SplitK) {
    // K = R * S * C in `splits` slices of whole BLOCK_K blocks (RunConfig::splits, else the
    // meta's SPLITS, 3). One arrival counter per output tile, zero before the first launch and
    // left zero by each: the second launch (into a poisoned y again) is the one checked, and the
    // counters.
    const int64_t want = c.splits > 0 ? c.splits : k_conv2d_bn_relu_splitk.effective_meta(c.meta)["SPLITS"];
    const auto [per, splits] = k_slices(R * S * C, bk, want);
    Array<float> part(splits * M * K);
    part.poison();
    Array<int32_t> count(std::vector<int32_t>(static_cast<size_t>(grid.x) * grid.y, 0));
    const Grid g{grid.x, grid.y, static_cast<uint32_t>(splits)};
    k_conv2d_bn_relu_splitk.launch(g, c.meta, c.options, xd, wd, sd, hd, part, count, y, B, H, W, C, K, P, Q, per);
    y.poison();
    k_conv2d_bn_relu_splitk.launch(g, c.meta, c.options, xd, wd, sd, hd, part, count, y, B, H, W, C, K, P, Q, per);
    for (int32_t v : count.download())
      if (v != 0) throw std::runtime_error(fmt::format("conv2d_bn_relu_splitk left an arrival counter at {}, not 0", v));
    launches = 2;
  } else if (form == ConvForm::StreamK) {
    // RunConfig::splits programs (else SM_PROGRAMS a multiprocessor) share the tiles' K blocks;
    // the arrival counters (one a tile) are zero before the first launch and left zero by each.
    const jit::Meta sk = k_conv2d_bn_relu_streamk.effective_meta(c.meta);
    const int64_t tiles_n = grid.y, tiles = int64_t{grid.x} * grid.y, iters = R * S * C / bk;
    const int64_t want = c.splits > 0 ? c.splits : jit::Device::current().multiprocessors() * sk["SM_PROGRAMS"];
    const auto [units, programs] = stream_k_split(tiles * iters, want);
    Array<float> part(2 * programs * sk["BLOCK_M"] * sk["BLOCK_N"]);
    part.poison();
    Array<int32_t> count(std::vector<int32_t>(static_cast<size_t>(tiles), 0));
    const Grid g{static_cast<uint32_t>(programs)};
    for (int i = 0; i < 2; ++i) {
      y.poison();
      k_conv2d_bn_relu_streamk.launch(g, c.meta, c.options, xd, wd, sd, hd, part, count, y, B, H, W, C, K, P, Q,
                                      tiles_n, units);
    }
    for (int32_t v : count.download())
      if (v != 0) throw std::runtime_error(fmt::format("conv2d_bn_relu_streamk left an arrival counter at {}, not 0", v));
    launches = 2;
  } else if (fused) {
    k_conv2d_bn_relu.launch(grid, c.meta, c.options, xd, wd, sd, hd, y, B, H, W, C, K, P, Q);
  } else {
    launches = 2;
    k_conv2d.launch(grid, c.meta, c.options, xd, wd, y, B, H, W, C, K, P, Q);
    k_bn_relu_nhwc.launch(Grid{jit::cdiv(M * K, 1024)}, jit::Meta{}, jit::CompileOptions{}, y, sd, hd, M * K, K);
  }
  std::vector<uint16_t> got = y.download();
  // f32 accumulation in any order, one f16 rounding (twice unfused), then the affine map:
  // |error| <= tol * (sum |x w| * |scale|) + a few ulp of the result.
  const double tol = (fused ? 0x1p-10 : 0x1p-9) + static_cast<double>(R * S * C) * 0x1p-23;
  RunResult r;
  r.rtol = tol;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t p = 0; p < P; ++p)
      for (int64_t q = 0; q < Q; ++q)
        for (int64_t k = 0; k < K; ++k) {
          double acc = 0, mag = 0;
          for (int64_t rr = 0; rr < R; ++rr)
            for (int64_t ss = 0; ss < S; ++ss) {
              const int64_t ih = p * stride - pad + rr, iw = q * stride - pad + ss;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              for (int64_t ch = 0; ch < C; ++ch) {
                const double v = interp::f16_to_double(x[((b * H + ih) * W + iw) * C + ch]) *
                                 interp::f16_to_double(w[((k * R + rr) * S + ss) * C + ch]);
                acc += v, mag += std::fabs(v);
              }
            }
          const double ref = std::max(acc * scale[k] + shift[k], 0.0);
          const int64_t i = ((b * P + p) * Q + q) * K + k;
          const double g = interp::f16_to_double(got[i]);
          const double err = std::fabs(g - ref);
          r.max_abs_err = std::max(r.max_abs_err, std::isnan(err) ? INFINITY : err);
          if (!(err <= tol * mag * std::fabs(scale[k]) + 0x1p-10 * std::fabs(ref) + 1e-6)) {
            if (r.mismatches++ == 0)
              r.first_mismatch = fmt::format("y[{}][{}][{}][{}] = {}, expected {}", b, p, q, k, g, ref);
          }
          ++r.checked;
        }
  r.verified = r.mismatches == 0;
  r.launches = launches;
  return r;
}

}  // namespace

std::vector<Sample> conv_samples() {
  return {
      {"conv2d_bn_relu",
       "Conv2d -> BatchNorm -> ReLU, NHWC f16, implicit GEMM with BN folded into the epilogue (3x3, stride 1, pad 1; "
       "-D R/S/STRIDE/PAD)",
       {"conv2d_bn_relu"}, [](const RunConfig& c) { return run_conv(c, ConvForm::Fused); }, SampleShape::Conv},
      {"conv2d_bn_relu_unfused", "the same as two kernels: the convolution to f16, then BN + ReLU in place",
       {"conv2d", "bn_relu_nhwc"}, [](const RunConfig& c) { return run_conv(c, ConvForm::Unfused); },
       SampleShape::Conv},
      {"conv2d_bn_relu_splitk",
       "the fused form for layers with few output pixels: K split over programs (3 slices, --splits), f32 partials "
       "summed, scaled and rectified by the last to arrive",
       {"conv2d_bn_relu_splitk"}, [](const RunConfig& c) { return run_conv(c, ConvForm::SplitK); },
       SampleShape::Conv},
      {"conv2d_bn_relu_streamk",
       "the fused form as stream-K: every program (SM_PROGRAMS a multiprocessor, or --splits programs) multiplies "
       "the same share of all tiles' K blocks; a tile split between programs is summed by the last to arrive",
       {"conv2d_bn_relu_streamk"}, [](const RunConfig& c) { return run_conv(c, ConvForm::StreamK); },
       SampleShape::Conv},
  };
}

void register_conv_kernels(jit::Registry& r) {
  r.add(jit::entry_of(k_conv2d_bn_relu, "y[B,P,Q,CO] f16 = relu(conv2d(x NHWC, w KRSC) * scale[co] + shift[co])"));
  r.add(jit::entry_of(k_conv2d_bn_relu_splitk,
                      "part[split,M,CO] f32 = conv over one slice of K; y f16 = relu(sum * scale + shift)"));
  r.add(jit::entry_of(k_conv2d_bn_relu_streamk,
                      "y f16 = relu(conv * scale + shift) with each program on an equal share of all tiles' K blocks"));
  r.add(jit::entry_of(k_conv2d, "y[B,P,Q,CO] f16 = conv2d(x[B,H,W,C] NHWC, w[CO,R,S,C]) as an implicit GEMM"));
  r.add(jit::entry_of(k_bn_relu_nhwc, "y = relu(y * scale[c] + shift[c]) in place, c = index % CO"));
}

}  // namespace tessel::samples
