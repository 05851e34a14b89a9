// The tensor-core ceilings' probes: C = A @ B with the matmul sample kernel of each dtype (f16,
// bf16, f32 with tf32 dots), at 8192^3 where the dots dominate (intensity ~2700 flop/byte for
// f16, far right of any ridge), over a space of the tiles that ran fastest as matmuls. The best
// config's flops / time is the ceiling: what tessel's own dot reaches, as the FMA chain gives
// what its FMAs reach.
//
// Inputs are exact in the dtype (tf32: f32 with the low 13 mantissa bits cleared), so the host
// reference differs from the device only by the f32 accumulation order and the output rounding.
#include "tunables_roofline_dot.hpp"

#include <cmath>
#include <cstring>
#include <memory>
#include <type_traits>

#include "host_dtype.hpp"
#include "tessel/samples/matmul_kernels.hpp"
#include "tessel/samples/sample.hpp"
#include "tunable_support.hpp"

namespace tessel::samples::tunable {
namespace {
using jit::Array;
using jit::Grid;
using jit::tune::Bucket;

Config tile(int64_t bm, int64_t bn, int64_t bk, int warps, int stages, bool producers = false) {
  Config c;
  c.meta.set("BLOCK_M", bm).set("BLOCK_N", bn).set("BLOCK_K", bk);
  c.opts.num_warps = warps;
  c.opts.num_stages = stages;
  c.opts.warp_specialize = c.opts.tma = producers;  // TMA producer warps: sm_90a only, else a compile error
  return c;
}

Config default_tile(const SizeArgs&) { return tile(64, 64, 32, 4, 1); }  // the matmul kernels' defaults

// 16-bit operands: the matmul tunables' space (tunables_matmul.cpp).
std::vector<Config> space16(const SizeArgs& s) {
  return {default_tile(s),         tile(128, 256, 64, 8, 4), tile(128, 256, 64, 8, 4, true),
          tile(128, 128, 64, 8, 4), tile(128, 128, 64, 4, 3), tile(64, 128, 64, 4, 4),
          tile(64, 64, 64, 4, 5),   tile(64, 64, 128, 4, 3)};
}

// f32 operands take twice the shared memory per K: half the BLOCK_K. tf32 dots run on mma.sync,
// not wgmma, so no TMA producer warps (warp_specialize needs a wgmma K loop: a compile error);
// 128x64 on 8 warps (4 spill 4 bytes).
std::vector<Config> space32(const SizeArgs& s) {
  return {default_tile(s),          tile(128, 256, 32, 8, 3), tile(256, 64, 32, 8, 3), tile(128, 128, 32, 8, 4),
          tile(128, 128, 32, 4, 3), tile(64, 128, 32, 4, 4),  tile(128, 64, 32, 8, 4), tile(64, 64, 32, 4, 4)};
}

// A value of [-1, 1) exactly representable in T (tf32 for f32: the dots round to it anyway).
template <class T>
typename Host<T>::type exact(float v) {
  if constexpr (std::is_same_v<T, lang::f32>) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    bits &= 0xFFFFE000u;
    std::memcpy(&v, &bits, 4);
    return v;
  } else {
    return Host<T>::encode(v);
  }
}

template <class T>
struct DotBuffers {
  using H = typename Host<T>::type;
  DotBuffers(int64_t m, int64_t n, int64_t k)
      : M(m), N(n), K(k), a(inputs(m * k, 21)), b(inputs(k * n, 22)), c(static_cast<size_t>(m * n)) {}
  static std::vector<H> inputs(int64_t n, uint64_t seed) {
    std::vector<H> out;
    out.reserve(static_cast<size_t>(n));
    for (float v : big_random(static_cast<size_t>(n), seed, -1, 1)) out.push_back(exact<T>(v));
    return out;
  }
  int64_t M, N, K;
  Array<H> a, b, c;
};

// Elements of C checked per config: each costs a K-long dot on the host.
constexpr size_t kDotSamples = size_t{1} << 12;

// C at the sampled positions in double, each within rel * sum_k |a b| (the output's rounding and
// the f32 accumulation; rel_bound in matmul_samples.cpp).
template <class T>
jit::tune::Expected dot_expected(const DotBuffers<T>& d, double rel) {
  const auto ha = d.a.download(), hb = d.b.download();
  jit::tune::Expected e;
  for (size_t i : sample_positions(static_cast<size_t>(d.M * d.N), kDotSamples)) {
    const int64_t m = static_cast<int64_t>(i) / d.N, n = static_cast<int64_t>(i) % d.N;
    double sum = 0, scale = 0;
    for (int64_t k = 0; k < d.K; ++k) {
      const double t = Host<T>::decode(ha[m * d.K + k]) * Host<T>::decode(hb[k * d.N + n]);
      sum += t;
      scale += std::fabs(t);
    }
    e.values.push_back(sum);
    e.tolerance.push_back(rel * scale);
  }
  return e;
}

template <class T, class K>
Tunable dot_probe(const char* name, std::string description, K& kernel, std::vector<Config> (*space)(const SizeArgs&),
                  double rel) {
  Tunable t;
  t.name = name;
  t.kernel = name;
  t.description = std::move(description);
  t.size_names = {"M", "N", "K"};
  t.sizes = {SizeArgs{{8192, 8192, 8192}}};
  t.configs = space;
  t.default_config = default_tile;
  t.key = jit::tune::KeySpec{{{"M", Bucket::PowerOfTwo}, {"N", Bucket::PowerOfTwo}, {"K", Bucket::PowerOfTwo}}};
  t.group = name;
  t.probe = true;
  const size_t elem = sizeof(typename Host<T>::type);
  t.make_problem = [t, &kernel, rel, elem](const SizeArgs& s) {
    auto d = std::make_shared<DotBuffers<T>>(s.dims[0], s.dims[1], s.dims[2]);
    const int M = static_cast<int>(d->M), N = static_cast<int>(d->N), Kd = static_cast<int>(d->K);
    auto grid = [d, &kernel](const Config& c) {
      const jit::Meta m = kernel.effective_meta(c.meta);
      return Grid{static_cast<uint32_t>(jit::cdiv(d->M, m["BLOCK_M"]) * jit::cdiv(d->N, m["BLOCK_N"]))};
    };
    Problem p = problem_of(t, s, kernel);
    p.compile = [d, &kernel, M, N, Kd](const Config& c) {
      compile_for(kernel, c, d->a, d->b, d->c, M, N, Kd, Kd, 1, N, 1, N, 1);
    };
    p.launch = [d, &kernel, grid, M, N, Kd](const Config& c) {
      kernel.launch(grid(c), c.meta, c.opts, d->a, d->b, d->c, M, N, Kd, Kd, 1, N, 1, N, 1);
    };
    p.output = [d] { return sample_values(d->c.download(), Host<T>::decode, kDotSamples); };
    p.poison = [d] { d->c.poison(); };
    p.reference = [d, rel] { return dot_expected<T>(*d, rel); };
    p.rtol = 4 * rel;  // between two configs (tessel bench): a few roundings of C
    p.atol = 2e-2;
    p.bytes = static_cast<double>(elem) * static_cast<double>(d->M * d->K + d->K * d->N + d->M * d->N);
    p.flops = 2.0 * static_cast<double>(d->M) * static_cast<double>(d->N) * static_cast<double>(d->K);
    return p;
  };
  return t;
}

}  // namespace

const std::vector<DotProbe>& dot_probes() {
  static const std::vector<DotProbe> probes{
      {"roofline_dot_f16", "f16"}, {"roofline_dot_bf16", "bf16"}, {"roofline_dot_tf32", "tf32"}};
  return probes;
}

std::vector<Tunable> dot_probe_tunables() {
  return {
      dot_probe<lang::f16>("roofline_dot_f16", "tensor-core probe: C = A @ B, f16 in and out, f32 accumulation",
                           k_matmul, space16, 1e-3),
      dot_probe<lang::bf16>("roofline_dot_bf16", "tensor-core probe: C = A @ B, bf16 in and out, f32 accumulation",
                            k_matmul_bf16, space16, 1e-2),
      dot_probe<lang::f32>("roofline_dot_tf32", "tensor-core probe: C = A @ B, f32 in and out, tf32 dots",
                           k_matmul_f32, space32, 3e-4),
  };
}

}  // namespace tessel::samples::tunable
