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

enum class W4Form { Plain, ZeroPoints, SplitK };

RunResult run_w4a16(const RunConfig& c, W4Form form) {
  const bool zero_points = form == W4Form::ZeroPoints;
  const jit::Meta eff = zero_points ? k_w4a16_matmul_zp.effective_meta(c.meta) : k_w4a16_matmul.effective_meta(c.meta);
  const int64_t G = eff["GROUP"];
  const W4Dims d = w4_dims(c, G);
  std::mt19937_64 rng(c.seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0), sdist(0.002, 0.02);
  // Activations in f16; the int4 weights as nibbles, packed eight per word along K.
  std::vector<uint16_t> a(d.M * d.K);
  for (auto& v : a) v = interp::f16_from_double(unit(rng));
  std::vector<uint8_t> q(d.K * d.N);
  for (auto& v : q) v = static_cast<uint8_t>(rng() & 15);
  std::vector<uint32_t> wq(d.K / 8 * d.N, 0);
  for (int64_t k = 0; k < d.K; ++k)
    for (int64_t n = 0; n < d.N; ++n) wq[(k / 8) * d.N + n] |= static_cast<uint32_t>(q[k * d.N + n]) << (4 * (k % 8));
  std::vector<uint16_t> s(d.K / G * d.N), z(d.K / G * d.N);
  for (auto& v : s) v = interp::f16_from_double(sdist(rng));
  for (auto& v : z) v = interp::f16_from_double(static_cast<double>(rng() % 31) / 2.0);  // 0, 0.5, .., 15
  // W[k, n] = f16((q - zero) * scale): the subtraction is exact, the product rounds to f16 once.
  std::vector<double> w(d.K * d.N);
  for (int64_t k = 0; k < d.K; ++k)
    for (int64_t n = 0; n < d.N; ++n) {
      const int64_t g = (k / G) * d.N + n;
      const double zero = zero_points ? interp::f16_to_double(z[g]) : 8.0;
      w[k * d.N + n] = interp::f16_to_double(interp::f16_from_double((q[k * d.N + n] - zero) * interp::f16_to_double(s[g])));
    }
  std::vector<double> ref(d.M * d.N, 0.0), mag(d.M * d.N, 0.0);
  for (int64_t i = 0; i < d.M; ++i)
    for (int64_t k = 0; k < d.K; ++k) {
      const double av = interp::f16_to_double(a[i * d.K + k]);
      for (int64_t n = 0; n < d.N; ++n) {
        ref[i * d.N + n] += av * w[k * d.N + n];
        mag[i * d.N + n] += std::fabs(av * w[k * d.N + n]);
      }
    }
  Array<uint16_t> ad(a), sd(s), zd(z), out(d.M * d.N);
  Array<uint32_t> wd(wq);
  out.poison();
  const Grid grid{jit::cdiv(d.M, eff["BLOCK_M"]), jit::cdiv(d.N, eff["BLOCK_N"])};
  int launches = 1;
  if (form == W4Form::SplitK) {
    // K in `splits` slices of whole BLOCK_K blocks (RunConfig's attention.splits, else 4).
    const int64_t bk = eff["BLOCK_K"], blocks = d.K / bk;
    const int64_t want = c.attention.splits > 0 ? c.attention.splits : 4;
    const int64_t per = (blocks + want - 1) / want * bk, splits = (d.K + per - 1) / per;
    Array<float> part(splits * d.M * d.N);
    part.poison();
    k_w4a16_splitk.launch(Grid{grid.x, grid.y, splits}, c.meta, c.options, ad, wd, sd, part, d.M, d.N, d.K, per);
    k_w4a16_splitk_sum.launch(Grid{jit::cdiv(d.M * d.N, 1024)}, jit::Meta{}, jit::CompileOptions{}, part, out, d.M * d.N,
                       splits);
    launches = 2;
  } else if (zero_points) {
    k_w4a16_matmul_zp.launch(grid, c.meta, c.options, ad, wd, sd, zd, out, d.M, d.N, d.K);
  } else {
    k_w4a16_matmul.launch(grid, c.meta, c.options, ad, wd, sd, out, d.M, d.N, d.K);
  }
  std::vector<uint16_t> got = out.download();
  std::vector<float> gf(got.size());
  for (size_t i = 0; i < got.size(); ++i) gf[i] = static_cast<float>(interp::f16_to_double(got[i]));
  // f32 accumulation in any order (|error| <= K * 2^-23 * sum_k |a w|), then one f16 rounding
  // (2^-11 |ref| <= 2^-11 sum_k |a w|): per output, tol * sum_k |a w|, as the matmul samples.
  const double tol = 0x1p-10 + static_cast<double>(d.K) * 0x1p-23;
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

}  // namespace

std::vector<Sample> quant_samples() {
  return {
      {"w4a16_matmul", "weight-only int4 matmul, dequantised in the K loop: C = A @ ((Wq - 8) * S), group 128",
       {"w4a16_matmul"}, [](const RunConfig& c) { return run_w4a16(c, W4Form::Plain); }, SampleShape::Matmul},
      {"w4a16_matmul_zp", "weight-only int4 matmul with per-group zero points: C = A @ ((Wq - Z) * S)",
       {"w4a16_matmul_zp"}, [](const RunConfig& c) { return run_w4a16(c, W4Form::ZeroPoints); }, SampleShape::Matmul},
      {"w4a16_splitk", "weight-only int4 matmul for small M: K split over programs (4 slices), f32 partials summed",
       {"w4a16_splitk", "w4a16_splitk_sum"}, [](const RunConfig& c) { return run_w4a16(c, W4Form::SplitK); },
       SampleShape::Matmul},
  };
}

void register_quant_kernels(jit::Registry& r) {
  r.add(jit::entry_of(k_w4a16_matmul, "C[M,N] f16 = A[M,K] f16 @ ((int4 Wq[K/8,N] - 8) * S[K/128,N])"));
  r.add(jit::entry_of(k_w4a16_matmul_zp, "C[M,N] f16 = A[M,K] f16 @ ((int4 Wq[K/8,N] - Z) * S), Z, S per group of 128"));
  r.add(jit::entry_of(k_w4a16_splitk, "P[split,M,N] f32 = A @ dequant(Wq) over one slice of K"));
  r.add(jit::entry_of(k_w4a16_splitk_sum, "C f16 = sum over splits of P[split]"));
}

}  // namespace tessel::samples
