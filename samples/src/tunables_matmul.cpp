// Tunables of the matmul samples: C = A @ B (f16, f32 accumulate) and its fused bias + GELU
// epilogue, over M x N x K with row-major operands.
//
// The space: the samples' default tile (64x64x32, 4 warps, one stage) and seven tiles that ran
// fastest on an H200 (bench/RESULTS.md, runs 17-24: 128x256x64 on 8 warps with 4 stages, with
// and without TMA producer warps, at 4096-8192, 64x64 tiles at 1024). Every config keeps GROUP_M = 8. Flops count 2 M N K (plus one
// per epilogue operation and element for bias + GELU); bytes are compulsory traffic. The host
// reference is the samples' (host_matmul in matmul_samples.cpp, with its error bound relative to
// sum_k |a b|), at a sample of C's elements.
#include <cmath>
#include <memory>

#include "tessel/samples/matmul_kernels.hpp"
#include "tunable_support.hpp"

namespace tessel::samples::tunable {
namespace {
using jit::Array;
using jit::Grid;
using jit::tune::Bucket;

// bias add, x / sqrt(2), erf (~20), 1 + erf, x * 0.5, product
constexpr double kBiasGeluFlops = 25;

Config matmul_default(const SizeArgs&) { return tile(64, 64, 32, 4, 1); }

// The 128x256 tile with TMA producer warps (warp_specialize + tma): the fastest at 4096-8192 on
// an H200 (run 24). A compile error on targets other than sm_90a, where the tuner skips it;
// bundles compile it with producers for sm_90a images of aligned unit-stride variants and as the
// same tile without them elsewhere (bundle_writer.cpp).
Config producers(Config c) {
  c.opts.warp_specialize = true;
  c.opts.tma = true;
  return c;
}

std::vector<Config> matmul_space(const SizeArgs& s) {
  return {matmul_default(s),        tile(128, 256, 64, 8, 4), producers(tile(128, 256, 64, 8, 4)),
          tile(128, 128, 64, 8, 4), tile(128, 128, 64, 4, 3), tile(64, 128, 64, 4, 4),
          tile(64, 64, 64, 4, 5),   tile(64, 64, 128, 4, 3)};
}

// The paired kernel (persistent in tile pairs sharing B; multicast with TMA producers): the same
// tiles, the last one traded for two programs per CTA with TMA producers (ping-pong, in clusters).
std::vector<Config> paired_space(const SizeArgs& s) {
  std::vector<Config> c = matmul_space(s);
  Config p2 = producers(tile(128, 128, 64, 4, 3));
  p2.opts.programs_per_cta = 2;
  c.back() = p2;
  return c;
}

// The fused bias + GELU kernel with producer warps still spills 4 bytes under the 168-register
// cap of 384 threads (116-144 before its bias started the accumulator; the persistent form
// spills nothing), so its space keeps the 3-stage tile instead.
std::vector<Config> fused_space(const SizeArgs& s) {
  std::vector<Config> c = matmul_space(s);
  c[2] = tile(128, 256, 64, 8, 3);
  return c;
}

struct MatmulBuffers {
  MatmulBuffers(int64_t m, int64_t n, int64_t k)
      : M(m),
        N(n),
        K(k),
        a(big_random_f16(m * k, 11, -1, 1)),
        b(big_random_f16(k * n, 12, -1, 1)),
        bias(big_random_f16(n, 13, -1, 1)),
        c(m * n) {}
  int64_t M, N, K;
  Array<uint16_t> a, b, bias, c;
  // One program per BLOCK_M x BLOCK_N tile of C.
  Grid grid(const Config& cfg) const {
    const jit::Meta m = k_matmul.effective_meta(cfg.meta);
    return Grid{static_cast<uint32_t>(jit::cdiv(M, m["BLOCK_M"]) * jit::cdiv(N, m["BLOCK_N"]))};
  }
  // The paired kernels' grid: programs in pairs of tiles (paired_tiles_grid).
  Grid paired_grid(const Config& cfg) const {
    const jit::Meta m = k_matmul_paired.effective_meta(cfg.meta);
    return paired_tiles_grid(jit::cdiv(M, m["BLOCK_M"]), jit::cdiv(N, m["BLOCK_N"]), cfg.opts.programs_per_cta);
  }
};

// Producer warps (warp_specialize) copy whole 16-byte rows of A and B, and the JIT knows a row
// stride's alignment from its divisibility by 16 elements: with K or N not a multiple of 16 such a
// config is a compile error at this size, so the tuner does not try it.
bool aligned_for_producers(const Config& c, const SizeArgs& s) {
  return !c.opts.warp_specialize || (s.dims[1] % 16 == 0 && s.dims[2] % 16 == 0);
}

Tunable base(std::string name, std::string description) {
  Tunable t;
  t.name = name;
  t.kernel = name;
  t.description = std::move(description);
  t.size_names = {"M", "N", "K"};
  t.sizes = {SizeArgs{{1024, 1024, 1024}}, SizeArgs{{4096, 4096, 4096}}, SizeArgs{{8192, 8192, 8192}}};
  t.configs = matmul_space;
  t.default_config = matmul_default;
  t.keep = aligned_for_producers;
  t.key = jit::tune::KeySpec{{{"M", Bucket::PowerOfTwo}, {"N", Bucket::PowerOfTwo}, {"K", Bucket::PowerOfTwo}}};
  t.group = std::move(name);
  return t;
}

// The kernels a matmul tunable times.
enum class Form { Plain, BiasGelu, Paired };

// Elements of C checked per config: each costs a K-long dot product on the host, so fewer than
// the elementwise kernels' million (the odd stride still reaches every column and many rows).
constexpr size_t kMatmulSamples = size_t{1} << 16;

// C (M x N) at the sampled positions, in double: sum_k a[m, k] b[k, n] (+ bias[n], then the erf
// GELU), each accepted within rel * (sum_k |a[m, k] b[k, n]| (+ |bias[n]|)): the f16 output's
// rounding plus the f32 accumulation, as run_matmul and run_bias_act bound it.
jit::tune::Expected matmul_expected(const MatmulBuffers& b, bool bias) {
  const int64_t M = b.M, N = b.N, K = b.K;
  std::vector<float> a(static_cast<size_t>(M * K)), bt(static_cast<size_t>(N * K));  // B transposed
  {
    const auto ha = b.a.download(), hb = b.b.download();
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(f16_value(ha[i]));
    for (int64_t k = 0; k < K; ++k)
      for (int64_t n = 0; n < N; ++n) bt[n * K + k] = static_cast<float>(f16_value(hb[k * N + n]));
  }
  std::vector<double> hbias;
  if (bias)
    for (uint16_t h : b.bias.download()) hbias.push_back(f16_value(h));
  const double rel = bias ? 1.2e-3 : 1e-3;
  jit::tune::Expected e;
  for (size_t i : sample_positions(static_cast<size_t>(M * N), kMatmulSamples)) {
    const int64_t m = static_cast<int64_t>(i) / N, n = static_cast<int64_t>(i) % N;
    const float* ra = &a[m * K];
    const float* rb = &bt[n * K];
    double sum = 0, scale = 0;
    for (int64_t k = 0; k < K; ++k) {
      const double t = static_cast<double>(ra[k]) * rb[k];
      sum += t;
      scale += std::fabs(t);
    }
    if (bias) {
      sum += hbias[n];
      scale += std::fabs(hbias[n]);  // |gelu'| <= 1.13, covered by the bound's slack
      sum = 0.5 * sum * (1.0 + std::erf(sum / std::sqrt(2.0)));
    }
    e.values.push_back(sum);
    e.tolerance.push_back(rel * scale);
  }
  return e;
}

// A matmul kernel's problem. Between two configs (tessel bench), which differ in summation order
// only: after the f16 rounding of C a few ulp (~1e-3 relative) near |C| ~ sqrt(K) / 3; atol
// covers the outputs that land near zero.
Problem matmul_problem(const Tunable& t, const SizeArgs& s, Form form) {
  auto b = std::make_shared<MatmulBuffers>(s.dims[0], s.dims[1], s.dims[2]);
  const bool bias = form == Form::BiasGelu;
  Problem p;
  p.kernel = t.kernel;
  const int M = static_cast<int>(b->M), N = static_cast<int>(b->N), K = static_cast<int>(b->K);
  if (bias) {
    p.key = t.key.key_string(t.key_values(s), signature_of(k_matmul_bias_gelu));
    p.compile = [b, M, N, K](const Config& c) {
      compile_for(k_matmul_bias_gelu, c, b->a, b->b, b->bias, b->c, M, N, K, K, 1, N, 1, N, 1);
    };
    p.launch = [b, M, N, K](const Config& c) {
      k_matmul_bias_gelu.launch(b->grid(c), c.meta, c.opts, b->a, b->b, b->bias, b->c, M, N, K, K, 1, N, 1, N, 1);
    };
  } else {
    // The plain and paired kernels take the same arguments; only their grids differ.
    const bool paired = form == Form::Paired;
    auto* k = paired ? &k_matmul_paired : &k_matmul;
    p.key = t.key.key_string(t.key_values(s), signature_of(*k));
    p.compile = [b, k, M, N, K](const Config& c) { compile_for(*k, c, b->a, b->b, b->c, M, N, K, K, 1, N, 1, N, 1); };
    p.launch = [b, k, paired, M, N, K](const Config& c) {
      k->launch(paired ? b->paired_grid(c) : b->grid(c), c.meta, c.opts, b->a, b->b, b->c, M, N, K, K, 1, N, 1, N, 1);
    };
  }
  p.output = [b] { return sample_values(b->c.download(), f16_value, kMatmulSamples); };
  p.poison = [b] { b->c.poison(); };
  p.reference = [b, bias] { return matmul_expected(*b, bias); };
  p.rtol = 4e-3;
  p.atol = 2e-2;
  p.bytes = 2.0 * (b->M * b->K + b->K * b->N + b->M * b->N + (bias ? b->N : 0));
  p.flops = 2.0 * b->M * b->N * b->K + (bias ? kBiasGeluFlops * b->M * b->N : 0.0);
  return p;
}

Tunable matmul() {
  Tunable t = base("matmul", "C = A @ B, f16 operands and output, f32 accumulation");
  t.make_problem = [t](const SizeArgs& s) { return matmul_problem(t, s, Form::Plain); };
  return t;
}

Tunable matmul_bias_gelu() {
  Tunable t = base("matmul_bias_gelu", "C = gelu(A @ B + bias), the erf-GELU epilogue fused, f16");
  t.configs = fused_space;
  t.make_problem = [t](const SizeArgs& s) { return matmul_problem(t, s, Form::BiasGelu); };
  return t;
}

Tunable matmul_paired() {
  Tunable t = base("matmul_paired", "C = A @ B, f16, persistent in tile pairs sharing B (TMA multicast in clusters)");
  t.configs = paired_space;
  t.make_problem = [t](const SizeArgs& s) { return matmul_problem(t, s, Form::Paired); };
  return t;
}

}  // namespace

std::vector<Tunable> matmul_tunables() { return {matmul(), matmul_bias_gelu(), matmul_paired()}; }

}  // namespace tessel::samples::tunable
