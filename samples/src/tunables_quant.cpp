// Tunables of issue 27's compute samples: the fp8 scaled matmul (M x N x K, e4m3, row-wise
// scales, f16 out; and with per-tensor scales, bf16 out) and Conv2d -> BN -> ReLU (B x H x W x C x K, 3x3, stride 1, padding 1, NHWC
// f16); the int4 weight-only matmul's is in tunables_w4a16.cpp.
//
// The spaces: the samples' defaults and the tiles that ran fastest in bench_quant's sweeps on an
// H200 (bench/history/2026-11-28-session22-fp8-conv.md): 256x128x128 with producer warps and
// 128x256x128 for fp8; 128x64, 128x128 and 64x64 tiles (BLOCK_K 64) for the ResNet layers, and
// BLOCK_K 128 for the layers whose channels it divides (half the trips of the im2col loop: the
// 7x7x512 layer 17% faster), one of them with producer warps (5% more there;
// bench/history/2026-11-29-session29.md). The references are the
// samples' host computations at a sample of the outputs, with the samples' error bounds relative
// to sum |a b|.
#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <string>

#include "tessel/interp/float_formats.hpp"
#include "tessel/samples/conv_kernels.hpp"
#include "tessel/samples/fp8_kernels.hpp"
#include "tessel/samples/split_k.hpp"
#include "tunable_support.hpp"

namespace tessel::samples::tunable {
namespace {
using jit::Array;
using jit::Grid;
using jit::tune::Bucket;

constexpr size_t kSamples = size_t{1} << 14;  // outputs checked per config (each a K-long dot on the host)

// ---- fp8 scaled matmul ----------------------------------------------------------------------

// `rowwise`: scales per row of A and per column of B (fp8_matmul's default), else one each
// (fp8_matmul_bf16's default, ROWWISE = 0).
struct Fp8Buffers {
  Fp8Buffers(int64_t m, int64_t n, int64_t k, bool rowwise = true) : M(m), N(n), K(k), c(m * n) {
    std::vector<float> av = big_random(static_cast<size_t>(m * k), 21, -60, 60);
    std::vector<float> bv = big_random(static_cast<size_t>(n * k), 22, -8, 8);
    ha.resize(av.size());
    hb.resize(bv.size());
    for (size_t i = 0; i < av.size(); ++i) ha[i] = interp::f8e4m3_from_double(av[i]);
    for (size_t i = 0; i < bv.size(); ++i) hb[i] = interp::f8e4m3_from_double(bv[i]);
    std::vector<float> s(static_cast<size_t>(std::max(m, n)));
    for (size_t i = 0; i < s.size(); ++i) s[i] = 0.01f + 0.0001f * static_cast<float>(i % 900);
    hsa.assign(s.begin(), s.begin() + (rowwise ? m : 1));
    hsb.assign(s.begin() + (rowwise ? 0 : 7), s.begin() + (rowwise ? n : 8));
    a = Array<uint8_t>(ha);
    b = Array<uint8_t>(hb);
    sa = Array<float>(hsa);
    sb = Array<float>(hsb);
  }
  int64_t M, N, K;
  std::vector<uint8_t> ha, hb;
  std::vector<float> hsa, hsb;
  Array<uint8_t> a{1}, b{1};
  Array<float> sa{1}, sb{1};
  Array<uint16_t> c;
  double scale(int64_t m, int64_t n) const {
    return static_cast<double>(hsa[hsa.size() == 1 ? 0 : m]) * hsb[hsb.size() == 1 ? 0 : n];
  }
};

std::vector<Config> fp8_space(const SizeArgs&) {
  Config ws = tile(128, 256, 128, 8, 4);
  ws.opts.warp_specialize = true;
  return {tile(64, 64, 32, 4, 1), tile(128, 128, 128, 8, 3), tile(128, 128, 128, 8, 4), tile(128, 256, 128, 8, 3),
          tile(128, 256, 64, 8, 4), ws, tile(256, 128, 128, 8, 3), tile(64, 128, 128, 4, 4)};
}

// The f16-output kernel with its row-wise scales, or (`bf16`) the bf16-output one with its
// per-tensor scales: the output rounding 2^-11 or 2^-8 of the result.
template <class Kern>
Problem fp8_problem(const Tunable& t, const SizeArgs& s, Kern& k, bool bf16) {
  auto b = std::make_shared<Fp8Buffers>(s.dims[0], s.dims[1], s.dims[2], k.effective_meta({})["ROWWISE"] != 0);
  const int M = static_cast<int>(b->M), N = static_cast<int>(b->N), K = static_cast<int>(b->K);
  Problem p = problem_of(t, s, k);
  p.compile = [&k, b, M, N, K](const Config& c) { compile_for(k, c, b->a, b->b, b->sa, b->sb, b->c, M, N, K); };
  p.launch = [&k, b, M, N, K](const Config& c) {
    const jit::Meta m = k.effective_meta(c.meta);
    const Grid g{static_cast<uint32_t>(jit::cdiv(b->M, m["BLOCK_M"]) * jit::cdiv(b->N, m["BLOCK_N"]))};
    k.launch(g, c.meta, c.opts, b->a, b->b, b->sa, b->sb, b->c, M, N, K);
  };
  double (*value)(uint16_t) = bf16 ? interp::bf16_to_double : f16_value;
  p.output = [b, value] { return sample_values(b->c.download(), value, kSamples); };
  p.poison = [b] { b->c.poison(); };
  const double out_eps = bf16 ? 0x1p-8 : 0x1p-10;
  p.reference = [b, out_eps] {
    return sampled_reference(
        static_cast<size_t>(b->M * b->N),
        [&](size_t i) {
          const int64_t m = static_cast<int64_t>(i) / b->N, n = static_cast<int64_t>(i) % b->N;
          double sum = 0;
          for (int64_t k = 0; k < b->K; ++k)
            sum += interp::f8e4m3_to_double(b->ha[m * b->K + k]) * interp::f8e4m3_to_double(b->hb[n * b->K + k]);
          return sum * b->scale(m, n);
        },
        [&](size_t i, double) {
          const int64_t m = static_cast<int64_t>(i) / b->N, n = static_cast<int64_t>(i) % b->N;
          double mag = 0;
          for (int64_t k = 0; k < b->K; ++k)
            mag += std::fabs(interp::f8e4m3_to_double(b->ha[m * b->K + k]) * interp::f8e4m3_to_double(b->hb[n * b->K + k]));
          return (0x1p-9 + out_eps) * mag * b->scale(m, n);
        },
        kSamples);
  };
  p.rtol = bf16 ? 2e-2 : 4e-3;
  p.atol = bf16 ? 1e-1 : 2e-2;
  p.bytes = static_cast<double>(b->M * b->K + b->N * b->K + 2 * b->M * b->N);
  p.flops = 2.0 * b->M * b->N * b->K;
  return p;
}

Tunable fp8_tunable(const char* name, const char* description, bool bf16) {
  Tunable t;
  t.name = t.kernel = t.group = name;
  t.description = description;
  t.size_names = {"M", "N", "K"};
  t.sizes = {SizeArgs{{4096, 4096, 4096}}, SizeArgs{{8192, 8192, 8192}}};
  t.configs = fp8_space;
  t.default_config = [](const SizeArgs&) { return tile(64, 64, 32, 4, 1); };
  // Producer warps and 16-byte copies need rows of whole 16-byte runs.
  t.keep = [](const Config& c, const SizeArgs& s) { return !c.opts.warp_specialize || s.dims[2] % 16 == 0; };
  t.key = jit::tune::KeySpec{{{"M", Bucket::PowerOfTwo}, {"N", Bucket::PowerOfTwo}, {"K", Bucket::PowerOfTwo}}};
  t.make_problem = [t, bf16](const SizeArgs& s) {
    return bf16 ? fp8_problem(t, s, k_fp8_matmul_bf16, true) : fp8_problem(t, s, k_fp8_matmul, false);
  };
  return t;
}

Tunable fp8_matmul() {
  return fp8_tunable("fp8_matmul", "C f16 = (A e4m3 @ B[N,K]^T e4m3) * scale_a[m] * scale_b[n], f32 accumulation",
                     false);
}

Tunable fp8_matmul_bf16() {
  return fp8_tunable("fp8_matmul_bf16", "C bf16 = (A e4m3 @ B[N,K]^T e4m3) * scale_a * scale_b (per tensor)", true);
}

// ---- Conv2d -> BN -> ReLU -------------------------------------------------------------------

struct ConvBuffers {
  ConvBuffers(const SizeArgs& s)
      : B(s.dims[0]), H(s.dims[1]), W(s.dims[2]), C(s.dims[3]), K(s.dims[4]), P(H), Q(W),
        hx(big_random_f16(static_cast<size_t>(B * H * W * C), 31, -1, 1)),
        hw(big_random_f16(static_cast<size_t>(K * 9 * C), 32, -0.1f, 0.1f)),
        x(hx), w(hw), y(B * H * W * K) {
    for (int64_t k = 0; k < K; ++k) {
      hscale.push_back(0.5f + 0.01f * static_cast<float>(k % 100));
      hshift.push_back(-0.2f + 0.004f * static_cast<float>(k % 100));
    }
    scale = Array<float>(hscale);
    shift = Array<float>(hshift);
  }
  int64_t B, H, W, C, K, P, Q;
  std::vector<uint16_t> hx, hw;
  std::vector<float> hscale, hshift;
  Array<uint16_t> x, w, y;
  Array<float> scale{1}, shift{1};
  // B, H, W, C and K as the kernels take them (i32).
  std::array<int, 5> sizes() const {
    return {static_cast<int>(B), static_cast<int>(H), static_cast<int>(W), static_cast<int>(C), static_cast<int>(K)};
  }
  Grid grid(const Config& cfg) const {
    const jit::Meta m = k_conv2d_bn_relu.effective_meta(cfg.meta);
    return Grid{static_cast<uint32_t>(jit::cdiv(B * P * Q, m["BLOCK_M"])),
                static_cast<uint32_t>(jit::cdiv(K, m["BLOCK_N"]))};
  }
};

// The best of bench_conv's sweep on each ResNet layer (H100 and H200, sessions 38-39): 128x64x64
// w4 s3 (56x56), 128x128x64 w4 s3 (28x28), 128x128x64 w4 s4 with producer warps (14x14),
// 64x128x128 w4 s3 with producer warps (7x7).
std::vector<Config> conv_space(const SizeArgs&) {
  auto ws = [](Config c) {  // producer warps compute the im2col addresses
    c.opts.warp_specialize = true;
    return c;
  };
  return {tile(128, 64, 64, 4, 1),       tile(128, 64, 64, 4, 3),      tile(128, 64, 64, 4, 4),
          tile(128, 128, 64, 4, 3),      ws(tile(128, 128, 64, 4, 4)), tile(64, 128, 128, 4, 3),
          tile(128, 128, 128, 8, 3),     ws(tile(64, 128, 128, 4, 3))};
}

void conv_reference(Problem& p, const std::shared_ptr<ConvBuffers>& b);

Problem conv_problem(const Tunable& t, const SizeArgs& s) {
  auto b = std::make_shared<ConvBuffers>(s);
  const auto [B, H, W, C, K] = b->sizes();
  Problem p = problem_of(t, s, k_conv2d_bn_relu);
  p.compile = [b, B, H, W, C, K](const Config& c) {
    compile_for(k_conv2d_bn_relu, c, b->x, b->w, b->scale, b->shift, b->y, B, H, W, C, K, H, W);
  };
  p.launch = [b, B, H, W, C, K](const Config& c) {
    k_conv2d_bn_relu.launch(b->grid(c), c.meta, c.opts, b->x, b->w, b->scale, b->shift, b->y, B, H, W, C, K, H, W);
  };
  p.poison = [b] { b->y.poison(); };
  conv_reference(p, b);
  return p;
}

// The sampled outputs y at (b, p, q, k) of a 3x3, stride 1, padding 1 convolution, then BN and
// ReLU, against a double host convolution; the compulsory bytes and flops.
void conv_reference(Problem& p, const std::shared_ptr<ConvBuffers>& b) {
  p.output = [b] { return sample_values(b->y.download(), f16_value, kSamples); };
  auto conv_at = [](const ConvBuffers& bf, size_t i, bool magnitude) {
    const int64_t k = static_cast<int64_t>(i) % bf.K, m = static_cast<int64_t>(i) / bf.K;
    const int64_t n = m / (bf.P * bf.Q), p = (m % (bf.P * bf.Q)) / bf.Q, q = m % bf.Q;
    double acc = 0;
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t s = 0; s < 3; ++s) {
        const int64_t ih = p - 1 + r, iw = q - 1 + s;
        if (ih < 0 || ih >= bf.H || iw < 0 || iw >= bf.W) continue;
        for (int64_t c = 0; c < bf.C; ++c) {
          const double v = f16_value(bf.hx[((n * bf.H + ih) * bf.W + iw) * bf.C + c]) *
                           f16_value(bf.hw[((k * 3 + r) * 3 + s) * bf.C + c]);
          acc += magnitude ? std::fabs(v) : v;
        }
      }
    return magnitude ? acc * bf.hscale[k] : std::max(acc * bf.hscale[k] + bf.hshift[k], 0.0);
  };
  p.reference = [b, conv_at] {
    return sampled_reference(
        static_cast<size_t>(b->B * b->P * b->Q * b->K), [&](size_t i) { return conv_at(*b, i, false); },
        [&](size_t i, double v) { return 0x1p-10 * conv_at(*b, i, true) + 0x1p-10 * std::fabs(v) + 1e-5; }, kSamples);
  };
  p.rtol = 4e-3;
  p.atol = 2e-2;
  p.bytes = 2.0 * (b->B * b->H * b->W * b->C + b->K * 9 * b->C + b->B * b->P * b->Q * b->K);
  p.flops = 2.0 * b->B * b->P * b->Q * b->K * 9 * b->C;
}

// A conv problem whose buffers keep f32 partials and arrival counters (split-K, stream-K):
// Buffers(shared_ptr<ConvBuffers>) with compile(Config), launch(Config), part, count and b.
template <class Buffers, class... A>
Problem conv_partials_problem(const Tunable& t, const SizeArgs& s, const jit::Kernel<A...>& k) {
  auto sb = std::make_shared<Buffers>(std::make_shared<ConvBuffers>(s));
  Problem p = problem_of(t, s, k);
  p.compile = [sb](const Config& c) { sb->compile(c); };
  launch_with_partials(p, sb, sb->b->y);
  conv_reference(p, sb->b);
  return p;
}

// ---- Conv2d -> BN -> ReLU with K split over programs (layers of few output pixels) ----------
// program_id(2) runs over SPLITS slices of K = 9 C (the meta-parameter its launchers read); the
// last program of each output tile to arrive sums the f32 partials and applies BN and ReLU.

constexpr int64_t kMaxConvSplits = 4;

// bench_conv's split-K sweep on the 14x14 and 7x7 layers (bench/history/2026-11-29-session29.md):
// BLOCK_K 128 halves the trips where C allows; 2-4 slices.
std::vector<Config> conv_splitk_space(const SizeArgs&) {
  return {split_tile(128, 64, 64, 4, 3, 3),   split_tile(128, 64, 64, 4, 3, 2), split_tile(64, 64, 64, 4, 4, 4),
          split_tile(128, 128, 64, 8, 3, 2),  split_tile(64, 64, 64, 4, 4, 2),  split_tile(128, 128, 128, 8, 3, 2),
          split_tile(64, 128, 128, 4, 3, 3),  split_tile(128, 64, 64, 4, 4, 4)};
}

struct ConvSplitBuffers {
  explicit ConvSplitBuffers(const std::shared_ptr<ConvBuffers>& c)
      : b(c), part(kMaxConvSplits * c->B * c->P * c->Q * c->K),
        count(jit::cdiv(c->B * c->P * c->Q, 64) * jit::cdiv(c->K, 64)) {
    count.poison(0);
  }
  std::shared_ptr<ConvBuffers> b;
  Array<float> part;
  Array<int32_t> count;  // one arrival counter per output tile: zero before a launch, zero after
  void compile(const Config& c) {
    const auto [B, H, W, C, K] = b->sizes();
    compile_for(k_conv2d_bn_relu_splitk, c, b->x, b->w, b->scale, b->shift, part, count, b->y, B, H, W, C, K, H, W,
                9 * C);
  }
  void launch(const Config& c) {
    const jit::Meta m = k_conv2d_bn_relu_splitk.effective_meta(c.meta);
    const auto [per, splits] =
        k_slices(9 * b->C, m["BLOCK_K"], std::min<int64_t>(m["SPLITS"], kMaxConvSplits));
    const Grid g{static_cast<uint32_t>(jit::cdiv(b->B * b->P * b->Q, m["BLOCK_M"])),
                 static_cast<uint32_t>(jit::cdiv(b->K, m["BLOCK_N"])), static_cast<uint32_t>(splits)};
    const auto [B, H, W, C, K] = b->sizes();
    k_conv2d_bn_relu_splitk.launch(g, c.meta, c.opts, b->x, b->w, b->scale, b->shift, part, count, b->y, B, H, W, C,
                                   K, H, W, static_cast<int>(per));
  }
};

Problem conv_splitk_problem(const Tunable& t, const SizeArgs& s) {
  Problem p = conv_partials_problem<ConvSplitBuffers>(t, s, k_conv2d_bn_relu_splitk);
  // a partial written and read per output (B x P x Q x CO, P = H and Q = W: 3x3, stride 1, pad 1)
  p.bytes += 8.0 * static_cast<double>(s.dims[0] * s.dims[1] * s.dims[2] * s.dims[4]);
  return p;
}

// ---- Conv2d -> BN -> ReLU as stream-K (layers with fewer tiles than SMs) -------------------
// SM_PROGRAMS programs a multiprocessor share all tiles' K blocks equally; a tile split between
// programs is summed by the last to arrive (two f32 partial slots a program).

constexpr int64_t kMaxSmPrograms = 2;

Config stream_tile(int64_t bm, int64_t bn, int64_t bk, int warps, int stages, int64_t sm_programs, bool ws = false) {
  Config c = tile(bm, bn, bk, warps, stages);
  c.meta.set("SM_PROGRAMS", sm_programs);
  c.opts.warp_specialize = ws;
  return c;
}

std::vector<Config> conv_streamk_space(const SizeArgs&) {
  return {stream_tile(64, 128, 128, 4, 3, 1),      stream_tile(128, 128, 64, 4, 4, 1, true),
          stream_tile(128, 128, 64, 8, 3, 1),      stream_tile(128, 64, 64, 4, 3, 2),
          stream_tile(128, 128, 128, 8, 3, 1),     stream_tile(64, 64, 128, 4, 3, 2),
          stream_tile(64, 128, 64, 4, 4, 2),       stream_tile(128, 64, 128, 4, 3, 1)};
}

struct ConvStreamBuffers {
  explicit ConvStreamBuffers(const std::shared_ptr<ConvBuffers>& c)
      : b(c),
        programs_max(kMaxSmPrograms * jit::Device::current().multiprocessors()),
        part(2 * programs_max * 128 * 128),
        count(jit::cdiv(c->B * c->P * c->Q, 64) * jit::cdiv(c->K, 64)) {
    count.poison(0);
  }
  std::shared_ptr<ConvBuffers> b;
  int64_t programs_max;
  Array<float> part;     // two [BLOCK_M, BLOCK_N] slots a program (tiles up to 128 x 128)
  Array<int32_t> count;  // one arrival counter per output tile: zero before a launch, zero after
  // The launch's units a program (per) and programs (count), as the kernel's contract wants them.
  void compile(const Config& c) {
    const auto [B, H, W, C, K] = b->sizes();
    compile_for(k_conv2d_bn_relu_streamk, c, b->x, b->w, b->scale, b->shift, part, count, b->y, B, H, W, C, K, H, W,
                1, 1);
  }
  KSlices split(const jit::Meta& m) const {
    const int64_t tiles = jit::cdiv(b->B * b->P * b->Q, m["BLOCK_M"]) * jit::cdiv(b->K, m["BLOCK_N"]);
    return stream_k_split(tiles * (9 * b->C / m["BLOCK_K"]),
                          std::min(programs_max, std::min<int64_t>(m["SM_PROGRAMS"], kMaxSmPrograms) *
                                                     jit::Device::current().multiprocessors()));
  }
  void launch(const Config& c) {
    const jit::Meta m = k_conv2d_bn_relu_streamk.effective_meta(c.meta);
    const auto [units, programs] = split(m);
    const auto [B, H, W, C, K] = b->sizes();
    k_conv2d_bn_relu_streamk.launch(Grid{static_cast<uint32_t>(programs)}, c.meta, c.opts, b->x, b->w, b->scale,
                                    b->shift, part, count, b->y, B, H, W, C, K, H, W,
                                    static_cast<int>(jit::cdiv(K, m["BLOCK_N"])), static_cast<int>(units));
  }
};

Problem conv_streamk_problem(const Tunable& t, const SizeArgs& s) {
  return conv_partials_problem<ConvStreamBuffers>(t, s, k_conv2d_bn_relu_streamk);
}

// What both conv tunables share: ResNet-50's 3x3 layers at batch 32 (the split form: the two
// with fewest output pixels), keys, and configs kept where BLOCK_K divides C.
template <class... A>
Tunable conv_tunable(const char* name, std::string description, std::vector<SizeArgs> sizes, jit::Kernel<A...>& k,
                     std::vector<Config> (*space)(const SizeArgs&), const Config& fallback,
                     Problem (*make_problem)(const Tunable&, const SizeArgs&)) {
  Tunable t;
  t.name = t.kernel = t.group = name;
  t.description = std::move(description);
  t.size_names = {"B", "H", "W", "C", "CO"};
  t.sizes = std::move(sizes);
  t.configs = space;
  t.default_config = [fallback](const SizeArgs&) { return fallback; };
  t.keep = [&k](const Config& c, const SizeArgs& s) {  // a K block within one filter tap
    return s.dims[3] % k.effective_meta(c.meta)["BLOCK_K"] == 0;
  };
  t.key = jit::tune::KeySpec{{{"B", Bucket::PowerOfTwo}, {"H", Bucket::PowerOfTwo}, {"W", Bucket::PowerOfTwo},
                              {"C", Bucket::Exact}, {"CO", Bucket::Exact}}};
  t.make_problem = [t, make_problem](const SizeArgs& sz) { return make_problem(t, sz); };
  return t;
}

Tunable conv2d_bn_relu() {
  return conv_tunable("conv2d_bn_relu", "y = relu(conv3x3(x NHWC f16, w KRSC) * scale + shift), stride 1, padding 1",
                      {SizeArgs{{32, 56, 56, 64, 64}}, SizeArgs{{32, 28, 28, 128, 128}},
                       SizeArgs{{32, 14, 14, 256, 256}}, SizeArgs{{32, 7, 7, 512, 512}}},
                      k_conv2d_bn_relu, conv_space, tile(128, 64, 64, 4, 1), conv_problem);
}

Tunable conv2d_bn_relu_splitk() {
  return conv_tunable("conv2d_bn_relu_splitk",
                      "conv2d_bn_relu with K over SPLITS programs, the last to arrive sums them (one kernel)",
                      {SizeArgs{{32, 14, 14, 256, 256}}, SizeArgs{{32, 7, 7, 512, 512}}}, k_conv2d_bn_relu_splitk,
                      conv_splitk_space, split_tile(128, 64, 64, 4, 3, 3), conv_splitk_problem);
}

Tunable conv2d_bn_relu_streamk() {
  return conv_tunable("conv2d_bn_relu_streamk",
                      "conv2d_bn_relu as stream-K: SM_PROGRAMS programs a multiprocessor share all tiles' K blocks",
                      {SizeArgs{{32, 14, 14, 256, 256}}, SizeArgs{{32, 7, 7, 512, 512}}}, k_conv2d_bn_relu_streamk,
                      conv_streamk_space, stream_tile(64, 128, 128, 4, 3, 1), conv_streamk_problem);
}

}  // namespace

std::vector<Tunable> quant_tunables() {
  return {fp8_matmul(),           fp8_matmul_bf16(),         w4a16_matmul_tunable(),
          w4a16_matmul_zp_tunable(), w4a16_matmul_q8_tunable(), w4a16_splitk_tunable(), w4a16_gemv_tunable(),
          conv2d_bn_relu(),       conv2d_bn_relu_splitk(),    conv2d_bn_relu_streamk()};
}

}  // namespace tessel::samples::tunable
