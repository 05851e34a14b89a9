// The quantised samples: weight-only int4 matmul (W4A16), symmetric and with zero points,
// checked against a host reference that dequantises the weights the way the kernel defines it.
#include <fmt/format.h>

#include <cmath>
#include <random>

#include "host_dtype.hpp"
#include "tessel/samples/quant_kernels.hpp"
#include "tessel/samples/sample.hpp"

namespace tessel::samples {
namespace {
using jit::Array;
using jit::Grid;

struct W4Dims {
  int64_t M, N, K;
};

// M = matmul.m (else rows, else 16), N = matmul.n (else cols, else M when rows were given, else
// 512), K = matmul.k (else N rounded up to a multiple of the group; 1024 when nothing was given).
W4Dims w4_dims(const RunConfig& c, int64_t group) {
  const bool given = c.matmul.m > 0 || c.rows > 0;
  W4Dims d;
  d.M = c.matmul.m > 0 ? c.matmul.m : c.rows > 0 ? c.rows : 16;
  d.N = c.matmul.n > 0 ? c.matmul.n : c.cols > 0 ? c.cols : given ? d.M : 512;
  d.K = c.matmul.k > 0 ? c.matmul.k : given || c.cols > 0 ? (d.N + group - 1) / group * group : 1024;
  if (d.K % group != 0)
    throw UserError(fmt::format("w4a16: K = {} must be a multiple of the quantisation group {} (whole groups of "
                                "packed rows)",
                                d.K, group));
  if (std::max({d.M * d.K, d.K / 8 * d.N, d.M * d.N}) > kMaxI32Offset)
    throw UserError(fmt::format("w4a16: a {}x{}x{} problem does not fit i32 offsets", d.M, d.N, d.K));
  return d;
}

enum class W4Form { Plain, ZeroPoints, SplitK, Gemv };

// Random activations, packed int4 weights, scales and zero points, and the reference product.
struct W4Inputs {
  std::vector<uint16_t> a, s, z;  // f16 A[M, K], scales and zero points [K / G, N]
  std::vector<uint32_t> wq;       // int4 weights packed eight per word along K
  std::vector<double> ref, mag;   // C[M, N] in double, and sum_k |a w| per output
};

W4Inputs w4_inputs(const W4Dims& d, int64_t G, uint64_t seed, bool zero_points) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0), sdist(0.002, 0.02);
  W4Inputs in;
  // Activations in f16; the int4 weights as nibbles, packed eight per word along K.
  in.a.resize(d.M * d.K);
  for (auto& v : in.a) v = interp::f16_from_double(unit(rng));
  std::vector<uint8_t> q(d.K * d.N);
  for (auto& v : q) v = static_cast<uint8_t>(rng() & 15);
  in.wq.assign(d.K / 8 * d.N, 0);
  for (int64_t k = 0; k < d.K; ++k)
    for (int64_t n = 0; n < d.N; ++n) in.wq[(k / 8) * d.N + n] |= static_cast<uint32_t>(q[k * d.N + n]) << (4 * (k % 8));
  in.s.resize(d.K / G * d.N);
  in.z.resize(d.K / G * d.N);
  for (auto& v : in.s) v = interp::f16_from_double(sdist(rng));
  for (auto& v : in.z) v = interp::f16_from_double(static_cast<double>(rng() % 31) / 2.0);  // 0, 0.5, .., 15
  // W[k, n] = f16((q - zero) * scale): the subtraction is exact, the product rounds to f16 once.
  std::vector<double> w(d.K * d.N);
  for (int64_t k = 0; k < d.K; ++k)
    for (int64_t n = 0; n < d.N; ++n) {
      const int64_t g = (k / G) * d.N + n;
      const double zero = zero_points ? interp::f16_to_double(in.z[g]) : 8.0;
      w[k * d.N + n] =
          interp::f16_to_double(interp::f16_from_double((q[k * d.N + n] - zero) * interp::f16_to_double(in.s[g])));
    }
  in.ref.assign(d.M * d.N, 0.0);
  in.mag.assign(d.M * d.N, 0.0);
  for (int64_t i = 0; i < d.M; ++i)
    for (int64_t k = 0; k < d.K; ++k) {
      const double av = interp::f16_to_double(in.a[i * d.K + k]);
      for (int64_t n = 0; n < d.N; ++n) {
        in.ref[i * d.N + n] += av * w[k * d.N + n];
        in.mag[i * d.N + n] += std::fabs(av * w[k * d.N + n]);
      }
    }
  return in;
}

// f32 accumulation in any order (|error| <= K * 2^-23 * sum_k |a w|), then one f16 rounding
// (2^-11 |ref| <= 2^-11 sum_k |a w|): per output, this times sum_k |a w|, as the matmul samples.
// (w4a16_gemv rounds each product a w to f16 before its f32 sum: 2^-11 sum_k |a w| more while
// the products are normal f16 numbers, as the samples' are (|a| <= 1, |w| <= 0.16), which the
// 2^-10 holds with the output rounding; products below 2^-14 lose up to 2^-25 each, and
// products past 65504 overflow: a kernel for such data keeps its products in f32.)
double w4_tolerance(const W4Dims& d) { return 0x1p-10 + static_cast<double>(d.K) * 0x1p-23; }

RunResult run_w4a16(const RunConfig& c, W4Form form) {
  const bool zero_points = form == W4Form::ZeroPoints;
  const jit::Meta eff = zero_points               ? k_w4a16_matmul_zp.effective_meta(c.meta)
                        : form == W4Form::Gemv   ? k_w4a16_gemv.effective_meta(c.meta)
                        : form == W4Form::SplitK ? k_w4a16_splitk.effective_meta(c.meta)
                                                 : k_w4a16_matmul.effective_meta(c.meta);
  const int64_t G = eff["GROUP"];
  const W4Dims d = w4_dims(c, G);
  W4Inputs in = w4_inputs(d, G, c.seed, zero_points);
  const std::vector<uint16_t>&a = in.a, &s = in.s, &z = in.z;
  const std::vector<uint32_t>& wq = in.wq;
  const std::vector<double>&ref = in.ref, &mag = in.mag;
  Array<uint16_t> ad(a), sd(s), zd(z), out(d.M * d.N);
  Array<uint32_t> wd(wq);
  out.poison();
  // The GEMV form runs a program a row of A (BLOCK_M 1).
  const int64_t BM = form == W4Form::Gemv ? 1 : eff["BLOCK_M"];
  const Grid grid{jit::cdiv(d.M, BM), jit::cdiv(d.N, eff["BLOCK_N"])};
  int launches = 1;
  if (form == W4Form::SplitK || form == W4Form::Gemv) {
    auto& k = form == W4Form::Gemv ? k_w4a16_gemv : k_w4a16_splitk;
    // K in `splits` slices of whole BLOCK_K blocks (RunConfig::splits, else the meta's SPLITS).
    const int64_t want = c.splits > 0 ? c.splits : eff["SPLITS"];
    const auto [per, splits] = k_slices(d.K, eff["BLOCK_K"], want);
    if (splits * d.M * d.N > kMaxI32Offset)  // the partials' offsets are i32 (split_k.hpp)
      throw UserError(fmt::format("{}: {} slices of a {}x{} output do not fit i32 offsets of the partials", k.name(),
                                  splits, d.M, d.N));
    Array<float> part(splits * d.M * d.N);
    part.poison();
    // One arrival counter per output tile, zero before the first launch and left zero by each:
    // the second launch (into a poisoned C again) is the one checked, and the counters after it.
    Array<int32_t> count(std::vector<int32_t>(grid.x * grid.y, 0));
    const Grid g{grid.x, grid.y, static_cast<uint32_t>(splits)};
    k.launch(g, c.meta, c.options, ad, wd, sd, part, count, out, d.M, d.N, d.K, per);
    out.poison();
    k.launch(g, c.meta, c.options, ad, wd, sd, part, count, out, d.M, d.N, d.K, per);
    for (int32_t v : count.download())
      if (v != 0) throw std::runtime_error(fmt::format("{} left an arrival counter at {}, not 0", k.name(), v));
    launches = 2;
  } else if (zero_points) {
    k_w4a16_matmul_zp.launch(grid, c.meta, c.options, ad, wd, sd, zd, out, d.M, d.N, d.K);
  } else {
    k_w4a16_matmul.launch(grid, c.meta, c.options, ad, wd, sd, out, d.M, d.N, d.K);
  }
  std::vector<uint16_t> got = out.download();
  std::vector<float> gf(got.size());
  for (size_t i = 0; i < got.size(); ++i) gf[i] = static_cast<float>(interp::f16_to_double(got[i]));
  const double tol = w4_tolerance(d);
  RunResult r;
  r.rtol = tol;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double err = std::fabs(static_cast<double>(gf[i]) - ref[i]);
    r.max_abs_err = std::max(r.max_abs_err, std::isnan(err) ? INFINITY : err);
    if (!(err <= tol * mag[i] + 1e-7)) {
      if (r.mismatches++ == 0)
        r.first_mismatch = fmt::format("c[{}][{}] = {}, expected {}", i / d.N, i % d.N, gf[i], ref[i]);
    }
    ++r.checked;
  }
  r.verified = r.mismatches == 0;
  r.launches = launches;
  return r;
}

RunResult run_w4a16_q8(const RunConfig& c) {
  const jit::Meta eff = k_w4a16_matmul_q8.effective_meta(c.meta);
  const int64_t G = eff["GROUP"], BN = eff["BLOCK_N"];
  const W4Dims d = w4_dims(c, G);
  const W4Inputs in = w4_inputs(d, G, c.seed, false);
  const int64_t groups = (d.N + BN - 1) / BN;
  Array<uint16_t> ad(in.a), sd(in.s);
  Array<uint32_t> wd(in.wq);
  Array<int8_t> q(d.M * d.N);
  Array<float> qs(d.M * groups);
  q.poison();
  qs.poison();
  const Grid grid{jit::cdiv(d.M, eff["BLOCK_M"]), jit::cdiv(d.N, BN)};
  k_w4a16_matmul_q8.launch(grid, c.meta, c.options, ad, wd, sd, q, qs, d.M, d.N, d.K);
  const std::vector<int8_t> gq = q.download();
  const std::vector<float> gs = qs.download();
  // Each group's scale is its largest |C| / 127 (C within the matmul's bound of the reference);
  // each q within half a step of C / scale, so q * scale within half a step plus that bound.
  const double tol = w4_tolerance(d);
  RunResult r;
  r.rtol = tol;
  for (int64_t i = 0; i < d.M; ++i)
    for (int64_t g = 0; g < groups; ++g) {
      double amax = 0, amag = 0;
      for (int64_t n = g * BN; n < std::min(d.N, (g + 1) * BN); ++n)
        if (std::fabs(in.ref[i * d.N + n]) > amax) amax = std::fabs(in.ref[i * d.N + n]), amag = in.mag[i * d.N + n];
      const double scale = gs[i * groups + g];
      if (!(std::fabs(scale * 127 - amax) <= tol * amag + 1e-7)) {
        if (r.mismatches++ == 0)
          r.first_mismatch = fmt::format("scale[{}][{}] = {}, expected {}", i, g, scale, amax / 127);
      }
      ++r.checked;
      for (int64_t n = g * BN; n < std::min(d.N, (g + 1) * BN); ++n) {
        const double ref = in.ref[i * d.N + n], got = gq[i * d.N + n] * scale;
        const double err = std::fabs(got - ref);
        r.max_abs_err = std::max(r.max_abs_err, std::isnan(err) ? INFINITY : err);
        if (!(gq[i * d.N + n] >= -127 && err <= scale * 0.501 + 2 * tol * in.mag[i * d.N + n] + 1e-7)) {
          if (r.mismatches++ == 0)
            r.first_mismatch = fmt::format("q[{}][{}] = {} (x {} = {}), expected {}", i, n, gq[i * d.N + n], scale, got, ref);
        }
        ++r.checked;
      }
    }
  r.verified = r.mismatches == 0;
  r.launches = 1;
  return r;
}

}  // namespace

std::vector<Sample> quant_samples() {
  return {
      {"w4a16_matmul", "weight-only int4 matmul, dequantised in the K loop: C = A @ ((Wq - 8) * S), group 128",
       {"w4a16_matmul"}, [](const RunConfig& c) { return run_w4a16(c, W4Form::Plain); }, SampleShape::Matmul},
      {"w4a16_matmul_zp", "weight-only int4 matmul with per-group zero points: C = A @ ((Wq - Z) * S)",
       {"w4a16_matmul_zp"}, [](const RunConfig& c) { return run_w4a16(c, W4Form::ZeroPoints); }, SampleShape::Matmul},
      {"w4a16_splitk",
       "weight-only int4 matmul for small M: K split over programs (4 slices), f32 partials summed by the last to arrive",
       {"w4a16_splitk"}, [](const RunConfig& c) { return run_w4a16(c, W4Form::SplitK); },
       SampleShape::Matmul},
      {"w4a16_gemv",
       "weight-only int4 matrix-vector product for decode: a program a row of A, no tensor cores, K split over "
       "programs (16 slices), f32 partials summed by the last to arrive",
       {"w4a16_gemv"}, [](const RunConfig& c) { return run_w4a16(c, W4Form::Gemv); }, SampleShape::Matmul},
      {"w4a16_matmul_q8",
       "dequant -> matmul -> quant: the W4A16 product quantised to int8 per row of each BLOCK_N-column group, with "
       "its f32 scales",
       {"w4a16_matmul_q8"}, [](const RunConfig& c) { return run_w4a16_q8(c); }, SampleShape::Matmul},
  };
}

void register_quant_kernels(jit::Registry& r) {
  r.add(jit::entry_of(k_w4a16_matmul, "C[M,N] f16 = A[M,K] f16 @ ((int4 Wq[K/8,N] - 8) * S[K/128,N])"));
  r.add(jit::entry_of(k_w4a16_matmul_zp, "C[M,N] f16 = A[M,K] f16 @ ((int4 Wq[K/8,N] - Z) * S), Z, S per group of 128"));
  r.add(jit::entry_of(k_w4a16_splitk, "P[split,M,N] f32 = A @ dequant(Wq) over one slice of K; C f16 = their sum"));
  r.add(jit::entry_of(k_w4a16_gemv, "P[split,M,N] f32 = A[m] @ dequant(Wq) over one slice of K, no tensor cores; C f16 = their sum"));
  r.add(jit::entry_of(k_w4a16_matmul_q8, "Q[M,N] i8, S[M,N/BLOCK_N] f32 = int8 quantisation of A @ dequant(Wq) per row group"));
}

}  // namespace tessel::samples
