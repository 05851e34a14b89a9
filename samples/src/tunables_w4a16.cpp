// The tunable of the int4 weight-only matmul (W4A16, quant_kernels.hpp): C[M, N] f16 =
// A[M, K] f16 @ W, W[k, n] = f16((q - 8) * S[k / 128, n]) from int4 q packed eight a word along
// K. `tessel tune w4a16_matmul` picks its tile, warps and stages; `w4a16_matmul_zp` (zero points
// per group and column), `w4a16_matmul_q8` (int8 output), `w4a16_splitk` (small M) and
// `w4a16_gemv` (decode, no tensor cores) are tuned the same way.
//
// The spaces (bench/history/2026-12-06-session37.md, H100): at M <= 16 the BLOCK_M 16 tiles
// whose dequantised weights are the mma's B fragments in registers (BLOCK_K 128: half the
// trips); above it the wgmma tiles of bench_quant's sweep, 128x128x64 on 4 warps first (the
// fastest at M = 4096), on 8 warps at 3 stages (two CTAs a SM since its scale row is copied
// once), 128x256x64, and 2-stage forms. The reference is the sample's definition of W at a
// sample of the outputs, its error bound relative to sum |a w| (quant_samples.cpp).
#include <algorithm>
#include <cmath>
#include <memory>
#include <random>

#include <fmt/format.h>

#include "tessel/interp/float_formats.hpp"
#include "tessel/samples/quant_kernels.hpp"
#include "tessel/samples/sample.hpp"
#include "tessel/samples/split_k.hpp"
#include "tunable_support.hpp"

namespace tessel::samples::tunable {
namespace {
using jit::Array;
using jit::Grid;
using jit::tune::Bucket;

constexpr int64_t kGroup = 128;                // kW4A16Meta's GROUP: rows of K sharing a scale
constexpr size_t kSamples = size_t{1} << 14;  // outputs checked per config

struct W4Buffers {
  // `zero_points`: the _zp form's zero point per group and column (f16 0, 0.5, .., 15), else
  // the symmetric 8.
  W4Buffers(int64_t m, int64_t n, int64_t k, bool zero_points = false)
      : M(m), N(n), K(k), ha(big_random_f16(static_cast<size_t>(m * k), 41, -1, 1)), c(m * n) {
    if (K % kGroup != 0)
      throw UserError(fmt::format("w4a16_matmul: K = {} must be a multiple of the quantisation group {}", K, kGroup));
    if (std::max({M * K, K / 8 * N, M * N}) > kMaxI32Offset)
      throw UserError(fmt::format("w4a16_matmul: a {}x{}x{} problem does not fit i32 offsets", M, N, K));
    std::mt19937_64 rng(42);
    hq.resize(static_cast<size_t>(K * N));
    for (auto& v : hq) v = static_cast<uint8_t>(rng() & 15);
    hw.assign(static_cast<size_t>(K / 8 * N), 0);
    for (int64_t kk = 0; kk < K; ++kk)
      for (int64_t nn = 0; nn < N; ++nn)
        hw[(kk / 8) * N + nn] |= static_cast<uint32_t>(hq[kk * N + nn]) << (4 * (kk % 8));
    std::uniform_real_distribution<double> sd(0.002, 0.02);
    hs.resize(static_cast<size_t>(K / kGroup * N));
    for (auto& v : hs) v = interp::f16_from_double(sd(rng));
    if (zero_points) {
      hz.resize(hs.size());
      for (auto& v : hz) v = interp::f16_from_double(static_cast<double>(rng() % 31) / 2.0);
      z = Array<uint16_t>(hz);
    }
    a = Array<uint16_t>(ha);
    wq = Array<uint32_t>(hw);
    s = Array<uint16_t>(hs);
  }
  // The weight the kernel multiplies by: the subtraction exact, the product rounded to f16 once.
  double w(int64_t kk, int64_t nn) const {
    const size_t g = static_cast<size_t>((kk / kGroup) * N + nn);
    const double zero = hz.empty() ? 8.0 : f16_value(hz[g]);
    return f16_value(interp::f16_from_double((hq[kk * N + nn] - zero) * f16_value(hs[g])));
  }
  int64_t M, N, K;
  std::vector<uint16_t> ha, hs, hz;
  std::vector<uint8_t> hq;
  std::vector<uint32_t> hw;
  Array<uint16_t> a{1}, s{1}, z{1};
  Array<uint32_t> wq{1};
  Array<uint16_t> c;
  Grid grid(const Config& cfg) const {
    const jit::Meta m = k_w4a16_matmul.effective_meta(cfg.meta);
    return Grid{static_cast<uint32_t>(jit::cdiv(M, m["BLOCK_M"])), static_cast<uint32_t>(jit::cdiv(N, m["BLOCK_N"]))};
  }
};

// The sampled outputs against the sample's definition of W: f32 accumulation in any order, then
// one f16 rounding, so per output (2^-10 + K 2^-23) sum |a w|; the compulsory bytes and flops.
void w4a16_reference(Problem& p, const std::shared_ptr<W4Buffers>& b) {
  auto dot = [](const W4Buffers& bf, size_t i, bool magnitude) {
    const int64_t m = static_cast<int64_t>(i) / bf.N, n = static_cast<int64_t>(i) % bf.N;
    double acc = 0;
    for (int64_t k = 0; k < bf.K; ++k) {
      const double v = f16_value(bf.ha[m * bf.K + k]) * bf.w(k, n);
      acc += magnitude ? std::fabs(v) : v;
    }
    return acc;
  };
  p.output = [b] { return sample_values(b->c.download(), f16_value, kSamples); };
  p.reference = [b, dot] {
    const double bound = 0x1p-10 + static_cast<double>(b->K) * 0x1p-23;
    return sampled_reference(
        static_cast<size_t>(b->M * b->N), [&](size_t i) { return dot(*b, i, false); },
        [&](size_t i, double) { return bound * dot(*b, i, true) + 1e-6; }, kSamples);
  };
  p.rtol = 4e-3;
  p.atol = 2e-2;
  const double groups = static_cast<double>(b->K / kGroup * b->N) * (b->hz.empty() ? 1 : 2);  // scales (and zeros)
  p.bytes = static_cast<double>(b->K / 2 * b->N + b->M * b->K * 2 + b->M * b->N * 2) + 2 * groups;
  p.flops = 2.0 * b->M * b->N * b->K;
}

std::vector<Config> w4a16_space(const SizeArgs& s) {
  if (s.dims[0] <= 16)
    return {tile(16, 64, 128, 4, 3), tile(16, 128, 128, 4, 3), tile(16, 32, 128, 4, 3), tile(16, 64, 128, 4, 4),
            tile(16, 128, 64, 4, 3), tile(16, 256, 128, 8, 3), tile(16, 128, 128, 4, 4), tile(16, 256, 128, 8, 4)};
  return {tile(128, 128, 64, 4, 3), tile(128, 128, 64, 8, 3), tile(128, 256, 64, 8, 3), tile(128, 128, 64, 4, 2),
          tile(128, 128, 64, 8, 2), tile(64, 128, 64, 4, 3),  tile(128, 128, 64, 8, 4), tile(16, 64, 128, 4, 3)};
}

Problem w4a16_problem(const Tunable& t, const SizeArgs& s) {
  auto b = std::make_shared<W4Buffers>(s.dims[0], s.dims[1], s.dims[2]);
  const int M = static_cast<int>(b->M), N = static_cast<int>(b->N), K = static_cast<int>(b->K);
  Problem p = problem_of(t, s, k_w4a16_matmul);
  p.compile = [b, M, N, K](const Config& c) { compile_for(k_w4a16_matmul, c, b->a, b->wq, b->s, b->c, M, N, K); };
  p.launch = [b, M, N, K](const Config& c) {
    k_w4a16_matmul.launch(b->grid(c), c.meta, c.opts, b->a, b->wq, b->s, b->c, M, N, K);
  };
  p.poison = [b] { b->c.poison(); };
  w4a16_reference(p, b);
  return p;
}

// The zero-point form: W[k, n] = f16((q - Z[k / 128, n]) * S[k / 128, n]); the same tiles.
Problem w4a16_zp_problem(const Tunable& t, const SizeArgs& s) {
  auto b = std::make_shared<W4Buffers>(s.dims[0], s.dims[1], s.dims[2], /*zero_points=*/true);
  const int M = static_cast<int>(b->M), N = static_cast<int>(b->N), K = static_cast<int>(b->K);
  Problem p = problem_of(t, s, k_w4a16_matmul_zp);
  p.compile = [b, M, N, K](const Config& c) {
    compile_for(k_w4a16_matmul_zp, c, b->a, b->wq, b->s, b->z, b->c, M, N, K);
  };
  p.launch = [b, M, N, K](const Config& c) {
    k_w4a16_matmul_zp.launch(b->grid(c), c.meta, c.opts, b->a, b->wq, b->s, b->z, b->c, M, N, K);
  };
  p.poison = [b] { b->c.poison(); };
  w4a16_reference(p, b);
  return p;
}

// ---- dequant -> matmul -> quant: int8 output, a scale per row and BLOCK_N columns ----------
// BLOCK_N is the quantisation group along N, part of what the output means (the scales'
// shape), so the space keeps it at 128 and tunes the rest. The output checked is q * scale at
// a sample of the outputs; the reference computes each sampled output's whole group from the
// sample's definition of W (so fewer samples: a group is 128 dots).

constexpr int64_t kQ8Group = 128;
constexpr size_t kQ8Samples = 128;

std::vector<Config> q8_space(const SizeArgs& s) {
  if (s.dims[0] <= 16)
    return {tile(16, 128, 128, 4, 3), tile(16, 128, 64, 4, 3),  tile(16, 128, 128, 4, 4), tile(16, 128, 64, 4, 4),
            tile(16, 128, 128, 4, 2), tile(16, 128, 64, 4, 2),  tile(64, 128, 64, 4, 3), tile(128, 128, 64, 4, 3)};
  return {tile(128, 128, 64, 4, 3), tile(128, 128, 64, 8, 3), tile(128, 128, 64, 4, 2), tile(128, 128, 64, 8, 2),
          tile(64, 128, 64, 4, 3),  tile(128, 128, 64, 8, 4), tile(128, 128, 64, 4, 4), tile(16, 128, 128, 4, 3)};
}

Problem w4a16_q8_problem(const Tunable& t, const SizeArgs& s) {
  auto b = std::make_shared<W4Buffers>(s.dims[0], s.dims[1], s.dims[2]);
  const int M = static_cast<int>(b->M), N = static_cast<int>(b->N), K = static_cast<int>(b->K);
  const int64_t groups = jit::cdiv(b->N, kQ8Group);
  auto q = std::make_shared<Array<int8_t>>(b->M * b->N);
  auto qs = std::make_shared<Array<float>>(b->M * groups);
  Problem p = problem_of(t, s, k_w4a16_matmul_q8);
  p.compile = [b, q, qs, M, N, K](const Config& c) { compile_for(k_w4a16_matmul_q8, c, b->a, b->wq, b->s, *q, *qs, M, N, K); };
  p.launch = [b, q, qs, M, N, K](const Config& c) {
    k_w4a16_matmul_q8.launch(b->grid(c), c.meta, c.opts, b->a, b->wq, b->s, *q, *qs, M, N, K);
  };
  p.poison = [q, qs] {
    q->poison();
    qs->poison();
  };
  p.output = [b, q, qs, groups] {
    const std::vector<int8_t> hq = q->download();
    const std::vector<float> hs = qs->download();
    std::vector<double> out;
    for (size_t i : sample_positions(hq.size(), kQ8Samples)) {
      const int64_t m = static_cast<int64_t>(i) / b->N, n = static_cast<int64_t>(i) % b->N;
      out.push_back(hq[i] * static_cast<double>(hs[static_cast<size_t>(m * groups + n / kQ8Group)]));
    }
    return out;
  };
  p.reference = [b] {
    const W4Buffers& bf = *b;
    const double bound = 0x1p-10 + static_cast<double>(bf.K) * 0x1p-23;
    auto dot = [&](int64_t m, int64_t n, bool magnitude) {
      double acc = 0;
      for (int64_t k = 0; k < bf.K; ++k) {
        const double v = f16_value(bf.ha[m * bf.K + k]) * bf.w(k, n);
        acc += magnitude ? std::fabs(v) : v;
      }
      return acc;
    };
    jit::tune::Expected e;
    for (size_t i : sample_positions(static_cast<size_t>(bf.M * bf.N), kQ8Samples)) {
      const int64_t m = static_cast<int64_t>(i) / bf.N, n = static_cast<int64_t>(i) % bf.N;
      // The group's largest |C| and largest sum |a w| (the device's C is within bound * that).
      double amax = 0, gmag = 0;
      for (int64_t j = n / kQ8Group * kQ8Group; j < std::min(bf.N, (n / kQ8Group + 1) * kQ8Group); ++j) {
        amax = std::max(amax, std::fabs(dot(m, j, false)));
        gmag = std::max(gmag, dot(m, j, true));
      }
      // q * scale is within half a step of the device's C, whose step is its group's largest
      // |C| / 127; both within the matmul's bound of the reference.
      e.values.push_back(dot(m, n, false));
      e.tolerance.push_back((amax + bound * gmag) / 127 * 0.501 + 2 * bound * dot(m, n, true) + 1e-6);
    }
    return e;
  };
  p.rtol = 1e-2;
  p.atol = 5e-2;
  p.bytes = static_cast<double>(b->K / 2 * b->N + b->K / kGroup * b->N * 2 + b->M * b->K * 2 + b->M * b->N +
                                b->M * groups * 4);
  p.flops = 2.0 * b->M * b->N * b->K;
  return p;
}

// ---- split K (small M) ----------------------------------------------------------------------
// w4a16_splitk runs program_id(2) over SPLITS slices of K (its meta-parameter for the launcher:
// the kernel's code does not depend on it) and the last program of each output tile to arrive
// sums the slices' f32 partials into C.

constexpr int64_t kMaxSplits = 32;

std::vector<Config> splitk_space(const SizeArgs&) {
  return {split_tile(16, 64, 128, 4, 3, 4), split_tile(16, 256, 128, 8, 3, 4), split_tile(16, 128, 128, 4, 3, 4),
          split_tile(16, 64, 128, 4, 3, 8), split_tile(16, 128, 128, 4, 4, 8), split_tile(16, 256, 128, 8, 4, 4),
          split_tile(16, 32, 128, 4, 3, 8), split_tile(16, 64, 128, 4, 3, 16)};
}

// The split forms' buffers: w4a16_splitk's (a program a BLOCK_M x BLOCK_N tile) or, `gemv`,
// w4a16_gemv's (a program a row of A and BLOCK_N columns), each K slice a program_id(2).
struct SplitBuffers {
  SplitBuffers(const std::shared_ptr<W4Buffers>& w, bool gemv_form)
      : b(w), gemv(gemv_form), part(kMaxSplits * w->M * w->N), count(w->M * w->N) {  // any BLOCK_N
    count.poison(0);
  }
  std::shared_ptr<W4Buffers> b;
  bool gemv;
  Array<float> part;
  Array<int32_t> count;  // one arrival counter per output tile: zero before a launch, zero after
  auto& kernel() const { return gemv ? k_w4a16_gemv : k_w4a16_splitk; }
  void launch(const Config& c) {
    const jit::Meta m = kernel().effective_meta(c.meta);
    const auto [per, splits] = k_slices(b->K, m["BLOCK_K"], std::min<int64_t>(m["SPLITS"], kMaxSplits));
    const Grid g{static_cast<uint32_t>(gemv ? b->M : jit::cdiv(b->M, m["BLOCK_M"])),
                 static_cast<uint32_t>(jit::cdiv(b->N, m["BLOCK_N"])), static_cast<uint32_t>(splits)};
    kernel().launch(g, c.meta, c.opts, b->a, b->wq, b->s, part, count, b->c, static_cast<int>(b->M),
                    static_cast<int>(b->N), static_cast<int>(b->K), static_cast<int>(per));
  }
};

Problem splitk_problem(const Tunable& t, const SizeArgs& s, bool gemv) {
  auto w = std::make_shared<W4Buffers>(s.dims[0], s.dims[1], s.dims[2]);
  auto sb = std::make_shared<SplitBuffers>(w, gemv);
  Problem p = problem_of(t, s, sb->kernel());
  p.compile = [sb](const Config& c) {
    const W4Buffers& b = *sb->b;
    compile_for(sb->kernel(), c, b.a, b.wq, b.s, sb->part, sb->count, b.c, static_cast<int>(b.M),
                static_cast<int>(b.N), static_cast<int>(b.K), static_cast<int>(b.K));
  };
  launch_with_partials(p, sb, sb->b->c);
  w4a16_reference(p, w);
  p.bytes += 8.0 * static_cast<double>(w->M * w->N);  // one f32 partial written and read (at least)
  return p;
}

// ---- GEMV (decode) ------------------------------------------------------------------------------
// w4a16_gemv runs a program a row of A (no BLOCK_M), BLOCK_N columns and one of SPLITS slices
// of K; BLOCK_N = 128 x num_warps puts every warp along N (four words a thread).

Config gemv_tile(int64_t bn, int64_t bk, int warps, int64_t splits) {
  Config c;
  c.meta.set("BLOCK_N", bn).set("BLOCK_K", bk).set("SPLITS", splits);
  c.opts.num_warps = warps;
  c.opts.num_stages = 1;
  return c;
}

std::vector<Config> gemv_space(const SizeArgs&) {
  return {gemv_tile(512, 64, 4, 16), gemv_tile(256, 64, 2, 16), gemv_tile(512, 128, 4, 16), gemv_tile(512, 64, 4, 8),
          gemv_tile(1024, 64, 8, 16), gemv_tile(256, 128, 2, 8), gemv_tile(512, 64, 4, 32), gemv_tile(1024, 128, 8, 8)};
}

// What both W4A16 tunables share: M x N x K sizes, keys bucketed by powers of two, and configs
// kept where K (whole groups) is whole K blocks.
template <class... A>
Tunable w4_tunable(const char* name, std::string description, std::vector<SizeArgs> sizes, jit::Kernel<A...>& k,
                   std::vector<Config> (*space)(const SizeArgs&), const Config& fallback) {
  Tunable t;
  t.name = t.kernel = t.group = name;
  t.description = std::move(description);
  t.size_names = {"M", "N", "K"};
  t.sizes = std::move(sizes);
  t.configs = space;
  t.default_config = [fallback](const SizeArgs&) { return fallback; };
  t.keep = [&k](const Config& c, const SizeArgs& s) {  // whole K blocks, one scale row a block
    const jit::Meta m = k.effective_meta(c.meta);
    return s.dims[2] % m["BLOCK_K"] == 0 && m["GROUP"] % m["BLOCK_K"] == 0;
  };
  t.key = jit::tune::KeySpec{{{"M", Bucket::PowerOfTwo}, {"N", Bucket::PowerOfTwo}, {"K", Bucket::PowerOfTwo}}};
  return t;
}
}  // namespace

Tunable w4a16_matmul_tunable() {
  Tunable t = w4_tunable("w4a16_matmul",
                         "C f16 = A f16 @ W, W int4 packed along K, f16 scales per group of 128 rows (W4A16)",
                         {SizeArgs{{16, 8192, 8192}}, SizeArgs{{4096, 8192, 8192}}}, k_w4a16_matmul, w4a16_space,
                         tile(16, 64, 128, 4, 3));
  t.make_problem = [t](const SizeArgs& s) { return w4a16_problem(t, s); };
  return t;
}

Tunable w4a16_matmul_zp_tunable() {
  Tunable t = w4_tunable("w4a16_matmul_zp",
                         "W4A16 with zero points: C f16 = A f16 @ ((Wq - Z) * S), Z and S f16 per group of 128 rows",
                         {SizeArgs{{16, 8192, 8192}}, SizeArgs{{4096, 8192, 8192}}}, k_w4a16_matmul_zp, w4a16_space,
                         tile(16, 64, 128, 4, 3));
  t.make_problem = [t](const SizeArgs& s) { return w4a16_zp_problem(t, s); };
  return t;
}

Tunable w4a16_matmul_q8_tunable() {
  Tunable t = w4_tunable("w4a16_matmul_q8",
                         "W4A16 with its output quantised to int8, one f32 scale per row and 128 columns (BLOCK_N)",
                         {SizeArgs{{16, 8192, 8192}}, SizeArgs{{4096, 8192, 8192}}}, k_w4a16_matmul_q8, q8_space,
                         tile(16, 128, 128, 4, 3));
  t.make_problem = [t](const SizeArgs& s) { return w4a16_q8_problem(t, s); };
  return t;
}

Tunable w4a16_splitk_tunable() {
  Tunable t = w4_tunable("w4a16_splitk",
                         "W4A16 at small M: K in SPLITS slices, the last program of a tile sums them (one kernel)",
                         {SizeArgs{{1, 8192, 8192}}, SizeArgs{{16, 8192, 8192}}}, k_w4a16_splitk, splitk_space,
                         split_tile(16, 64, 128, 4, 3, 4));
  t.make_problem = [t](const SizeArgs& s) { return splitk_problem(t, s, false); };
  return t;
}

Tunable w4a16_gemv_tunable() {
  Tunable t = w4_tunable("w4a16_gemv",
                         "W4A16 for decode: a program a row of A, no tensor cores, K in SPLITS slices (one kernel)",
                         {SizeArgs{{1, 8192, 8192}}}, k_w4a16_gemv, gemv_space, gemv_tile(512, 64, 4, 16));
  t.make_problem = [t](const SizeArgs& s) { return splitk_problem(t, s, true); };
  return t;
}

}  // namespace tessel::samples::tunable
