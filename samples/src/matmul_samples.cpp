// The matmul samples: f16 / bf16 / f32 (tf32 and exact) / i8 matmul, fused bias + ReLU and
// bias + GELU epilogues, the unfused matmul-then-bias+GELU pair, and batched matmul, each
// checked against a double-precision host reference with a per-dtype error bound.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <random>
#include <stdexcept>

#include "tessel/interp/float_formats.hpp"
#include "tessel/samples/matmul_kernels.hpp"
#include "host_dtype.hpp"
#include "tessel/samples/sample.hpp"

namespace tessel::samples {
namespace {
using jit::Array;
using jit::Grid;

// ---- sizes -------------------------------------------------------------------------------

struct MatmulDims {
  int64_t M, N, K, batch, pad;
  int64_t lda() const { return K + pad; }
  int64_t ldb() const { return N + pad; }
  int64_t ldc() const { return N + pad; }
  int64_t a_size() const { return M * lda(); }
  int64_t b_size() const { return K * ldb(); }
  int64_t c_size() const { return M * ldc(); }
};

int64_t isqrt(int64_t n) {
  int64_t r = static_cast<int64_t>(std::sqrt(static_cast<double>(n)));
  while (r * r > n) --r;
  while ((r + 1) * (r + 1) <= n) ++r;
  return std::max<int64_t>(1, r);
}

MatmulDims dims_of(const RunConfig& c) {
  const auto& mm = c.matmul;
  MatmulDims d;
  d.M = mm.m > 0 ? mm.m : c.rows > 0 ? c.rows : isqrt(c.n);
  d.N = mm.n > 0 ? mm.n : c.cols > 0 ? c.cols : d.M;
  d.K = mm.k > 0 ? mm.k : d.N;
  d.batch = mm.batch > 0 ? mm.batch : 3;
  d.pad = mm.pad;
  if (d.pad < 0) throw std::invalid_argument(fmt::format("matmul padding {} is negative", d.pad));
  // Sizes are the user's input (tessel run --rows/--cols/--size): UserError, exit 1.
  const int64_t largest = std::max({d.a_size(), d.b_size(), d.c_size()});
  if (largest > kMaxI32Offset)
    throw UserError(fmt::format("a {}x{}x{} matmul does not fit i32 offsets: its largest matrix has {} elements, at "
                                "most {} (2^31 - 1) fit",
                                d.M, d.N, d.K, largest, kMaxI32Offset));
  return d;
}

// ---- element types of storage --------------------------------------------------------------

// A random rows x cols matrix with leading dimension ld, stored as T. The padding holds a value
// that would spoil any result that read it (NaN for floats, 100 for i8).
template <class T>
struct Matrix {
  std::vector<typename Host<T>::type> bits;
  std::vector<double> values;  // what T holds, row-major rows x cols (no padding)
  int64_t rows = 0, cols = 0;
  double at(int64_t r, int64_t c) const { return values[r * cols + c]; }
};

template <class T>
Matrix<T> random_matrix(int64_t rows, int64_t cols, int64_t ld, uint64_t seed) {
  Matrix<T> m;
  m.rows = rows;
  m.cols = cols;
  m.bits.assign(static_cast<size_t>(rows * ld), Host<T>::encode(std::is_same_v<T, lang::i8> ? 100.0 : NAN));
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::uniform_int_distribution<int> ints(-128, 127);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      auto& b = m.bits[r * ld + c];
      b = std::is_same_v<T, lang::i8> ? Host<T>::encode(ints(gen)) : Host<T>::encode(dist(gen));
      m.values.push_back(Host<T>::decode(b));
    }
  return m;
}

// A random rows x cols matrix stored transposed when `trans` (cols rows of rows + pad elements):
// `values` stay the logical row-major matrix; `row_stride`, `col_stride` address it.
template <class T>
struct StoredMatrix {
  Matrix<T> m;
  int64_t row_stride = 0, col_stride = 1;
};
template <class T>
StoredMatrix<T> random_stored(int64_t rows, int64_t cols, int64_t pad, bool trans, uint64_t seed) {
  if (!trans) return {random_matrix<T>(rows, cols, cols + pad, seed), cols + pad, 1};
  Matrix<T> t = random_matrix<T>(cols, rows, rows + pad, seed);
  StoredMatrix<T> s{t, 1, rows + pad};
  s.m.rows = rows;
  s.m.cols = cols;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) s.m.values[r * cols + c] = t.values[c * rows + r];
  return s;
}

// The values a tf32 tensor core multiplies: each f32 rounded to tf32 (see interp::round_to_tf32).
template <class T>
Matrix<T> tf32_rounded(Matrix<T> m) {
  for (double& v : m.values) v = interp::round_to_tf32(static_cast<float>(v));
  return m;
}

// ---- reference and checking ----------------------------------------------------------------

// ref[m, n] = sum_k a[m, k] * b[k, n] and scale[m, n] = sum_k |a[m, k] * b[k, n]| in double:
// rounding errors of a dot product are bounded relative to the scale, not to the result.
struct Product {
  std::vector<double> ref, scale;
};
template <class T>
Product host_matmul(const Matrix<T>& a, const Matrix<T>& b) {
  Product p;
  p.ref.assign(static_cast<size_t>(a.rows * b.cols), 0.0);
  p.scale.assign(p.ref.size(), 0.0);
  for (int64_t m = 0; m < a.rows; ++m)
    for (int64_t k = 0; k < a.cols; ++k) {
      const double x = a.at(m, k);
      for (int64_t n = 0; n < b.cols; ++n) {
        const double t = x * b.at(k, n);
        p.ref[m * b.cols + n] += t;
        p.scale[m * b.cols + n] += std::fabs(t);
      }
    }
  return p;
}

// Still the 0xFF bytes that poisoned() filled in.
template <class T>
bool is_poison(const T& v) {
  const auto* p = reinterpret_cast<const unsigned char*>(&v);
  for (size_t i = 0; i < sizeof(T); ++i)
    if (p[i] != 0xFF) return false;
  return true;
}

template <class T>
Array<T> poisoned(size_t n) {
  Array<T> a(n);
  a.poison();
  return a;
}

// Accumulates |out - ref| <= rel * scale + atol checks (and that C's row padding is untouched).
class MatmulChecker {
 public:
  MatmulChecker(double rel, double atol) {
    r_.rtol = rel;
    r_.atol = atol;
  }
  // out: an M x N matrix of storage C with leading dimension ld, the output of batch `z`.
  template <class C>
  void check(const std::vector<typename Host<C>::type>& out, int64_t ld, int64_t z, const std::vector<double>& ref,
             const std::vector<double>& scale, int64_t M, int64_t N) {
    const int64_t base = z * M * ld;
    for (int64_t m = 0; m < M; ++m) {
      for (int64_t n = 0; n < N; ++n) {
        const double got = Host<C>::decode(out[base + m * ld + n]), want = ref[m * N + n];
        const double err = std::fabs(got - want);
        ++r_.checked;
        if (!std::isnan(err)) r_.max_abs_err = std::max(r_.max_abs_err, err);
        if (!(err <= r_.rtol * scale[m * N + n] + r_.atol)) {  // NaN fails
          if (r_.mismatches++ == 0)
            r_.first_mismatch = fmt::format("c[{}][{}, {}] = {}, expected {} (error bound {:.3g})", z, m, n, got, want,
                                            r_.rtol * scale[m * N + n] + r_.atol);
          if (std::isnan(err)) r_.max_abs_err = INFINITY;
        }
      }
      for (int64_t n = N; n < ld; ++n)  // padding: still the 0xFF poison
        if (!is_poison(out[base + m * ld + n]) && r_.mismatches++ == 0)
          r_.first_mismatch = fmt::format("padding element c[{}][{}, {}] was written", z, m, n);
    }
  }
  RunResult result(int launches) const {
    RunResult r = r_;
    r.verified = r.mismatches == 0 && r.checked > 0;
    r.launches = launches;
    return r;
  }

 private:
  RunResult r_;
};

// The error bound relative to sum |a||b| for operands T and output C: the output's rounding
// (half an ulp of |ref| <= scale) plus the f32 accumulation; tf32 is checked against a
// reference on tf32-rounded inputs, so only the accumulation order remains.
template <class T>
double rel_bound() {
  if constexpr (std::is_same_v<T, lang::f16>) return 1e-3;   // f16 output: 2^-11 + accumulation
  if constexpr (std::is_same_v<T, lang::bf16>) return 1e-2;  // bf16 output: 2^-8 + accumulation
  if constexpr (std::is_same_v<T, lang::f32>) return 3e-4;
  return 0;  // i8: exact
}

Grid matmul_grid(const MatmulDims& d, const jit::Meta& m, int64_t batch = 1) {
  return Grid{jit::cdiv(d.M, m["BLOCK_M"]) * jit::cdiv(d.N, m["BLOCK_N"]), static_cast<uint32_t>(batch)};
}

Grid persistent_matmul_grid(const MatmulDims& d, const jit::Meta& m, const jit::CompileOptions& o) {
  return persistent_tiles_grid(int64_t{jit::cdiv(d.M, m["BLOCK_M"])} * jit::cdiv(d.N, m["BLOCK_N"]), o.programs_per_cta);
}

Grid paired_matmul_grid(const MatmulDims& d, const jit::Meta& m, const jit::CompileOptions& o) {
  return paired_tiles_grid(jit::cdiv(d.M, m["BLOCK_M"]), jit::cdiv(d.N, m["BLOCK_N"]), o.programs_per_cta);
}

// How a matmul sample's programs cover the tiles: one each, persistent, or persistent in pairs.
enum class Sched { Tiles, Persistent, Paired };

Grid grid_of(Sched sched, const MatmulDims& d, const jit::Meta& m, const jit::CompileOptions& o) {
  switch (sched) {
    case Sched::Persistent: return persistent_matmul_grid(d, m, o);
    case Sched::Paired: return paired_matmul_grid(d, m, o);
    case Sched::Tiles: break;
  }
  return matmul_grid(d, m);
}

// ---- plain matmul ----------------------------------------------------------------------------

template <class T, class C, class K>
RunResult run_matmul(const RunConfig& c, K& kernel, bool allow_tf32 = true, Sched sched = Sched::Tiles) {
  const MatmulDims d = dims_of(c);
  const bool ta = c.matmul.trans_a, tb = c.matmul.trans_b;
  if ((ta || tb) && std::max(d.M, d.N) * (d.K + d.pad) > kMaxI32Offset)
    throw UserError("a transposed matmul operand does not fit i32 offsets");
  auto sa = random_stored<T>(d.M, d.K, d.pad, ta, c.seed);
  auto sb = random_stored<T>(d.K, d.N, d.pad, tb, c.seed + 1);
  const Matrix<T>&a = sa.m, &b = sb.m;
  Array<typename Host<T>::type> ad(a.bits), bd(b.bits);
  auto out = poisoned<typename Host<C>::type>(d.c_size());
  jit::Meta meta = c.meta;
  if constexpr (std::is_same_v<T, lang::f32>)
    if (!allow_tf32) meta.set("ALLOW_TF32", 0);
  const jit::Meta eff = kernel.effective_meta(meta);
  const bool tf32 = std::is_same_v<T, lang::f32> && eff["ALLOW_TF32"] != 0;
  kernel.launch(grid_of(sched, d, eff, c.options), meta, c.options, ad, bd, out, d.M, d.N, d.K, sa.row_stride,
                sa.col_stride, sb.row_stride, sb.col_stride, d.ldc(), 1);
  Product p = tf32 ? host_matmul(tf32_rounded(a), tf32_rounded(b)) : host_matmul(a, b);
  // exact fp32 FMA: only the accumulation rounds
  MatmulChecker ck(std::is_same_v<T, lang::f32> && !tf32 ? 1e-5 : rel_bound<T>(), 0.0);
  ck.check<C>(out.download(), d.ldc(), 0, p.ref, p.scale, d.M, d.N);
  return ck.result(1);
}

// ---- bias + activation: fused and unfused ------------------------------------------------------

double gelu_ref(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

enum class Form { FusedRelu, FusedGelu, UnfusedGelu, PersistentGelu, PairedGelu };

template <class T>
RunResult run_bias_act(const RunConfig& c, Form form) {
  using H = typename Host<T>::type;
  const MatmulDims d = dims_of(c);
  auto a = random_matrix<T>(d.M, d.K, d.lda(), c.seed);
  auto b = random_matrix<T>(d.K, d.N, d.ldb(), c.seed + 1);
  auto bias = random_matrix<T>(1, d.N, d.N, c.seed + 2);
  Array<H> ad(a.bits), bd(b.bits), biasd(bias.bits);
  auto out = poisoned<H>(d.c_size());
  int launches = 1;
  if (form == Form::UnfusedGelu) {
    if (!std::is_same_v<T, lang::f16>) throw std::invalid_argument("the unfused pair exists for f16 only");
    auto mid = poisoned<H>(d.c_size());
    const jit::Meta eff = k_matmul.effective_meta(c.meta);
    k_matmul.launch(matmul_grid(d, eff), c.meta, c.options, ad, bd, mid, d.M, d.N, d.K, d.lda(), 1, d.ldb(), 1, d.ldc(), 1);
    const jit::Meta pw = k_bias_gelu_2d.effective_meta(c.meta);
    k_bias_gelu_2d(Grid{jit::cdiv(d.M, pw["BLOCK_M"]), jit::cdiv(d.N, pw["BLOCK_N"])}, c.meta, mid, biasd, out, d.M,
                   d.N, d.ldc(), d.ldc());
    launches = 2;
  } else {
    auto launch = [&](auto& k, Sched sched = Sched::Tiles) {
      const jit::Meta eff = k.effective_meta(c.meta);
      k.launch(grid_of(sched, d, eff, c.options), c.meta, c.options, ad, bd, biasd, out, d.M, d.N, d.K, d.lda(), 1,
               d.ldb(), 1, d.ldc(), 1);
    };
    if constexpr (std::is_same_v<T, lang::f16>) {
      if (form == Form::PersistentGelu) launch(k_matmul_bias_gelu_persistent, Sched::Persistent);
      else if (form == Form::PairedGelu) launch(k_matmul_bias_gelu_paired, Sched::Paired);
      else if (form == Form::FusedRelu) launch(k_matmul_bias_relu);
      else launch(k_matmul_bias_gelu);
    } else {
      if (form != Form::FusedGelu) throw std::invalid_argument("bf16: only the fused bias + GELU form exists");
      launch(k_matmul_bias_gelu_bf16);
    }
  }
  Product p = host_matmul(a, b);
  for (int64_t m = 0; m < d.M; ++m)
    for (int64_t n = 0; n < d.N; ++n) {
      double& r = p.ref[m * d.N + n];
      r += bias.values[n];
      r = form == Form::FusedRelu ? std::max(r, 0.0) : gelu_ref(r);
      p.scale[m * d.N + n] += std::fabs(bias.values[n]);  // |gelu'| <= 1.13, covered by the bound's slack
    }
  // The unfused pair rounds the product to T before adding the bias: one more output rounding.
  MatmulChecker ck(rel_bound<T>() * (form == Form::UnfusedGelu ? 2 : 1.2), 0.0);
  ck.check<T>(out.download(), d.ldc(), 0, p.ref, p.scale, d.M, d.N);
  return ck.result(launches);
}

// ---- batched ---------------------------------------------------------------------------------

RunResult run_batched(const RunConfig& c) {
  using T = lang::f16;
  const MatmulDims d = dims_of(c);
  // Checked before the inputs are made: the batch shares one allocation per operand.
  const int64_t batched = d.batch * std::max({d.a_size(), d.b_size(), d.c_size()});
  if (batched > kMaxI32Offset)
    throw UserError(fmt::format("{} batched {}x{}x{} matmuls do not fit i32 offsets: {} elements per operand, at "
                                "most {} (2^31 - 1) fit",
                                d.batch, d.M, d.N, d.K, batched, kMaxI32Offset));
  std::vector<Matrix<T>> as, bs;
  std::vector<uint16_t> abits, bbits;
  for (int64_t z = 0; z < d.batch; ++z) {
    as.push_back(random_matrix<T>(d.M, d.K, d.lda(), c.seed + 10 * z));
    bs.push_back(random_matrix<T>(d.K, d.N, d.ldb(), c.seed + 10 * z + 1));
    abits.insert(abits.end(), as.back().bits.begin(), as.back().bits.end());
    bbits.insert(bbits.end(), bs.back().bits.begin(), bs.back().bits.end());
  }
  Array<uint16_t> ad(abits), bd(bbits);
  auto out = poisoned<uint16_t>(d.batch * d.c_size());
  const jit::Meta eff = k_batched_matmul.effective_meta(c.meta);
  k_batched_matmul.launch(matmul_grid(d, eff, d.batch), c.meta, c.options, ad, bd, out, d.M, d.N, d.K, d.a_size(), d.lda(), 1,
                   d.b_size(), d.ldb(), 1, d.c_size(), d.ldc(), 1);
  auto host = out.download();
  MatmulChecker ck(rel_bound<T>(), 0.0);
  for (int64_t z = 0; z < d.batch; ++z) {
    Product p = host_matmul(as[z], bs[z]);
    ck.check<T>(host, d.ldc(), z, p.ref, p.scale, d.M, d.N);
  }
  return ck.result(1);
}

}  // namespace

std::vector<Sample> matmul_samples() {
  using S = SampleShape;
  using namespace lang;
  return {
      {"matmul", "C = A @ B, f16 in, f32 accumulate, f16 out; grouped tile order, masked edges", {"matmul"},
       [](const RunConfig& c) { return run_matmul<f16, f16>(c, k_matmul); }, S::Matmul},
      {"matmul_bf16", "C = A @ B, bf16 in, f32 accumulate, bf16 out", {"matmul_bf16"},
       [](const RunConfig& c) { return run_matmul<bf16, bf16>(c, k_matmul_bf16); }, S::Matmul},
      {"matmul_f32", "C = A @ B, f32 through tf32 tensor cores (ALLOW_TF32=1; -D ALLOW_TF32=0: exact fp32)",
       {"matmul_f32"}, [](const RunConfig& c) { return run_matmul<f32, f32>(c, k_matmul_f32); }, S::Matmul},
      {"matmul_i8", "C = A @ B, i8 in, i32 accumulate and out (wrapping)", {"matmul_i8"},
       [](const RunConfig& c) { return run_matmul<i8, i32>(c, k_matmul_i8); }, S::Matmul},
      {"matmul_bias_relu", "C = relu(A @ B + bias), f16, the epilogue fused into the matmul", {"matmul_bias_relu"},
       [](const RunConfig& c) { return run_bias_act<f16>(c, Form::FusedRelu); }, S::Matmul},
      {"matmul_bias_gelu", "C = gelu(A @ B + bias), f16, the epilogue fused into the matmul", {"matmul_bias_gelu"},
       [](const RunConfig& c) { return run_bias_act<f16>(c, Form::FusedGelu); }, S::Matmul},
      {"matmul_bias_gelu_bf16", "C = gelu(A @ B + bias), bf16, the epilogue fused into the matmul",
       {"matmul_bias_gelu_bf16"}, [](const RunConfig& c) { return run_bias_act<bf16>(c, Form::FusedGelu); },
       S::Matmul},
      {"matmul_bias_gelu_unfused", "C = gelu(A @ B + bias), f16, as matmul then a separate bias+GELU kernel",
       {"matmul", "bias_gelu_2d"}, [](const RunConfig& c) { return run_bias_act<f16>(c, Form::UnfusedGelu); },
       S::Matmul},
      {"matmul_persistent", "C = A @ B, f16, persistent: ~2 programs per SM loop over tiles (ping-pong with "
       "--programs-per-cta 2)", {"matmul_persistent"},
       [](const RunConfig& c) { return run_matmul<f16, f16>(c, k_matmul_persistent, true, Sched::Persistent); }, S::Matmul},
      {"matmul_persistent_bf16", "C = A @ B, bf16, persistent over tiles", {"matmul_persistent_bf16"},
       [](const RunConfig& c) { return run_matmul<bf16, bf16>(c, k_matmul_persistent_bf16, true, Sched::Persistent); }, S::Matmul},
      {"matmul_bias_gelu_persistent", "C = gelu(A @ B + bias), f16, fused epilogue, persistent over tiles",
       {"matmul_bias_gelu_persistent"}, [](const RunConfig& c) { return run_bias_act<f16>(c, Form::PersistentGelu); },
       S::Matmul},
      {"matmul_paired", "C = A @ B, f16, persistent in vertical pairs of tiles that share B (2-CTA clusters "
       "multicasting B with --warp-specialize --tma on sm_90a)", {"matmul_paired"},
       [](const RunConfig& c) { return run_matmul<f16, f16>(c, k_matmul_paired, true, Sched::Paired); }, S::Matmul},
      {"matmul_paired_bf16", "C = A @ B, bf16, persistent in pairs of tiles sharing B", {"matmul_paired_bf16"},
       [](const RunConfig& c) { return run_matmul<bf16, bf16>(c, k_matmul_paired_bf16, true, Sched::Paired); },
       S::Matmul},
      {"matmul_bias_gelu_paired", "C = gelu(A @ B + bias), f16, fused, persistent in pairs sharing B",
       {"matmul_bias_gelu_paired"}, [](const RunConfig& c) { return run_bias_act<f16>(c, Form::PairedGelu); },
       S::Matmul},
      {"batched_matmul", "C[z] = A[z] @ B[z], f16, batch on grid axis 1 (RunConfig::matmul.batch, default 3)",
       {"batched_matmul"}, run_batched, S::Matmul},
  };
}

void register_matmul_kernels(jit::Registry& r) {
  r.add(jit::entry_of(k_matmul, "C = A @ B, f16 (f32 accumulate), grouped order, masked edges"));
  r.add(jit::entry_of(k_matmul_bf16, "C = A @ B, bf16 (f32 accumulate)"));
  r.add(jit::entry_of(k_matmul_f32, "C = A @ B, f32 via tf32 (ALLOW_TF32=0: exact fp32)"));
  r.add(jit::entry_of(k_matmul_i8, "C = A @ B, i8 -> i32"));
  r.add(jit::entry_of(k_matmul_bias_relu, "C = relu(A @ B + bias), f16, fused epilogue"));
  r.add(jit::entry_of(k_matmul_bias_gelu, "C = gelu(A @ B + bias), f16, fused epilogue"));
  r.add(jit::entry_of(k_matmul_bias_gelu_bf16, "C = gelu(A @ B + bias), bf16, fused epilogue"));
  r.add(jit::entry_of(k_bias_gelu_2d, "out = gelu(x + bias[None, :]) over an M x N matrix, f16"));
  r.add(jit::entry_of(k_matmul_persistent, "C = A @ B, f16, persistent over tiles (grid ~2 programs per SM)"));
  r.add(jit::entry_of(k_matmul_persistent_bf16, "C = A @ B, bf16, persistent over tiles"));
  r.add(jit::entry_of(k_matmul_bias_gelu_persistent, "C = gelu(A @ B + bias), f16, fused, persistent over tiles"));
  r.add(jit::entry_of(k_matmul_paired, "C = A @ B, f16, persistent in pairs of tiles sharing B (multicast)"));
  r.add(jit::entry_of(k_matmul_paired_bf16, "C = A @ B, bf16, persistent in pairs of tiles sharing B (multicast)"));
  r.add(jit::entry_of(k_matmul_bias_gelu_paired, "C = gelu(A @ B + bias), f16, fused, persistent in pairs sharing B"));
  r.add(jit::entry_of(k_batched_matmul, "C[z] = A[z] @ B[z], f16, batch = program_id(1)"));
}

}  // namespace tessel::samples
