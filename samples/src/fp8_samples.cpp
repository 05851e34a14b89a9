// The fp8 scaled matmul samples (e4m3 x e4m3 -> f32, scales in the epilogue, f16 / bf16 out),
// checked against a double-precision host product of the decoded fp8 values.
#include <fmt/format.h>

#include <cmath>
#include <random>

#include "host_dtype.hpp"
#include "tessel/interp/float_formats.hpp"
#include "tessel/samples/fp8_kernels.hpp"
#include "tessel/samples/sample.hpp"

namespace tessel::samples {
namespace {
using jit::Array;
using jit::Grid;

enum class Fp8Out { F16, BF16 };

template <class KernelT>
RunResult run_fp8_matmul(const RunConfig& c, KernelT& kernel, Fp8Out kind) {
  const jit::Meta eff = kernel.effective_meta(c.meta);
  const bool rowwise = eff["ROWWISE"] != 0;
  // M = matmul.m (else rows, else 256), N = matmul.n (else cols, else M), K = matmul.k (else N).
  const int64_t M = c.matmul.m > 0 ? c.matmul.m : c.rows > 0 ? c.rows : 256;
  const int64_t N = c.matmul.n > 0 ? c.matmul.n : c.cols > 0 ? c.cols : M;
  const int64_t K = c.matmul.k > 0 ? c.matmul.k : N;
  if (std::max({M * K, N * K, M * N}) > kMaxI32Offset)
    throw UserError(fmt::format("fp8_matmul: a {}x{}x{} problem does not fit i32 offsets", M, N, K));
  std::mt19937_64 rng(c.seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> sdist(0.01, 0.1);
  // Values spread over e4m3's range (|x| up to about 100), so rounding to fp8 matters.
  std::vector<uint8_t> a(M * K), b(N * K);
  for (auto& v : a) v = interp::f8e4m3_from_double(16.0 * normal(rng));
  for (auto& v : b) v = interp::f8e4m3_from_double(4.0 * normal(rng));
  std::vector<float> sa(rowwise ? M : 1), sb(rowwise ? N : 1);
  for (auto& v : sa) v = static_cast<float>(sdist(rng));
  for (auto& v : sb) v = static_cast<float>(sdist(rng));
  std::vector<double> ad(a.size()), bd(b.size());
  for (size_t i = 0; i < a.size(); ++i) ad[i] = interp::f8e4m3_to_double(a[i]);
  for (size_t i = 0; i < b.size(); ++i) bd[i] = interp::f8e4m3_to_double(b[i]);

  Array<uint8_t> a_dev(a), b_dev(b);
  Array<float> sa_dev(sa), sb_dev(sb);
  Array<uint16_t> out(M * N);
  out.poison();
  const Grid grid{jit::cdiv(M, eff["BLOCK_M"]) * jit::cdiv(N, eff["BLOCK_N"])};
  kernel.launch(grid, c.meta, c.options, a_dev, b_dev, sa_dev, sb_dev, out, M, N, K);
  std::vector<uint16_t> got = out.download();

  // f32 accumulation (fp8 tensor cores add with fewer bits: 2^-9 of sum |a b|), then the scales
  // (two f32 roundings) and one rounding to the output type.
  const double out_eps = kind == Fp8Out::F16 ? 0x1p-11 : 0x1p-8;
  const double tol = 0x1p-9 + 2 * out_eps + static_cast<double>(K) * 0x1p-23;
  RunResult r;
  r.rtol = tol;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t n = 0; n < N; ++n) {
      double ref = 0, mag = 0;
      for (int64_t k = 0; k < K; ++k) {
        const double p = ad[i * K + k] * bd[n * K + k];
        ref += p, mag += std::fabs(p);
      }
      const double s = static_cast<double>(rowwise ? sa[i] : sa[0]) * (rowwise ? sb[n] : sb[0]);
      ref *= s;
      const uint16_t bits = got[i * N + n];
      const double g = kind == Fp8Out::F16 ? interp::f16_to_double(bits) : interp::bf16_to_double(bits);
      const double err = std::fabs(g - ref);
      r.max_abs_err = std::max(r.max_abs_err, std::isnan(err) ? INFINITY : err);
      if (!(err <= tol * mag * s + 1e-6)) {
        if (r.mismatches++ == 0) r.first_mismatch = fmt::format("c[{}][{}] = {}, expected {}", i, n, g, ref);
      }
      ++r.checked;
    }
  r.verified = r.mismatches == 0;
  r.launches = 1;
  return r;
}

}  // namespace

std::vector<Sample> fp8_samples() {
  return {
      {"fp8_matmul", "fp8 scaled matmul: C f16 = (A e4m3 @ B^T e4m3) * scale_a[m] * scale_b[n], f32 accumulation",
       {"fp8_matmul"}, [](const RunConfig& c) { return run_fp8_matmul(c, k_fp8_matmul, Fp8Out::F16); }, SampleShape::Matmul},
      {"fp8_matmul_bf16", "fp8 scaled matmul, per-tensor scales (ROWWISE=0), bf16 output: C = (A @ B^T) * scale_a * scale_b", {"fp8_matmul_bf16"},
       [](const RunConfig& c) { return run_fp8_matmul(c, k_fp8_matmul_bf16, Fp8Out::BF16); }, SampleShape::Matmul},
  };
}

void register_fp8_kernels(jit::Registry& r) {
  r.add(jit::entry_of(k_fp8_matmul, "C[M,N] f16 = (A[M,K] e4m3 @ B[N,K]^T e4m3) * scale_a * scale_b"));
  r.add(jit::entry_of(k_fp8_matmul_bf16, "C[M,N] bf16 = (A[M,K] e4m3 @ B[N,K]^T e4m3) * scale_a * scale_b"));
}

}  // namespace tessel::samples
