// The reduction samples: softmax (fused, online, unfused), LayerNorm (f32/f16/bf16 storage),
// RMSNorm, residual add + LayerNorm, cross-entropy, sum of squares and MSE, with host references.
#include <fmt/format.h>

#include <cmath>
#include <random>
#include <stdexcept>

#include "tessel/interp/float_formats.hpp"
#include "tessel/samples/reduction_kernels.hpp"
#include "host_dtype.hpp"
#include "tessel/samples/sample.hpp"

namespace tessel::samples {
namespace {
using jit::Array;
using jit::Grid;

constexpr int64_t kDefaultCols = 1000;
constexpr int64_t kMaxRowTile = 8192;  // wider rows use the looped / online kernels
constexpr float kEps = 1e-5f;

// ---- matrix shapes -----------------------------------------------------------------------

struct Rows {
  int64_t rows, cols, stride;
  int64_t padded() const { return (rows - 1) * stride + cols; }  // elements spanned in memory
};

Rows rows_of(const RunConfig& c) {
  Rows s;
  s.cols = c.cols > 0 ? c.cols : kDefaultCols;
  s.rows = c.rows > 0 ? c.rows : std::max<int64_t>(1, c.n / s.cols);
  s.stride = c.row_stride > 0 ? c.row_stride : s.cols;
  // Sizes are the user's input (tessel run --rows/--cols/--row-stride): UserError, exit 1.
  if (s.stride < s.cols)
    throw UserError(fmt::format("row stride {} is smaller than the row width {}", s.stride, s.cols));
  if (s.padded() > kMaxI32Offset)
    throw UserError(fmt::format("{} rows of stride {} do not fit i32 offsets: they span {} elements, at most {} "
                                "(2^31 - 1) fit",
                                s.rows, s.stride, s.padded(), kMaxI32Offset));
  return s;
}

int64_t next_pow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

Grid row_grid(const Rows& s) { return Grid{static_cast<uint32_t>(s.rows)}; }

// Persistent row kernels loop over rows: 2 programs per multiprocessor, fewer for fewer rows.
Grid persistent_grid(const Rows& s) {
  const int64_t sms = jit::Device::current().multiprocessors();
  return Grid{static_cast<uint32_t>(std::min<int64_t>(s.rows, 2 * sms))};
}

// The user's meta-parameters with BLOCK set to hold a whole row.
jit::Meta row_tile_meta(const RunConfig& c, const Rows& s) {
  jit::Meta m = c.meta;
  m.set("BLOCK", next_pow2(s.cols));
  return m;
}

// ---- element types of storage ------------------------------------------------------------

// Random values stored as T, and the values T actually holds (what the reference uses).
template <class T>
struct Stored {
  std::vector<typename Host<T>::type> bits;
  std::vector<double> values;
};

template <class T>
Stored<T> random_stored(size_t n, uint64_t seed, float lo, float hi) {
  Stored<T> s;
  for (float f : random_floats(n, seed, lo, hi)) {
    s.bits.push_back(Host<T>::encode(f));
    s.values.push_back(Host<T>::decode(s.bits.back()));
  }
  return s;
}

// A row-major matrix input with padded rows: padding holds values the kernel must not use.
template <class T>
Stored<T> random_matrix(const Rows& s, uint64_t seed, float lo, float hi) {
  Stored<T> m = random_stored<T>(static_cast<size_t>(s.padded()), seed, lo, hi);
  for (int64_t r = 0; r < s.rows; ++r)
    for (int64_t k = s.cols; k < s.stride && r * s.stride + k < s.padded(); ++k) {
      m.bits[r * s.stride + k] = Host<T>::encode(1e4);  // poisons any result that reads it
      m.values[r * s.stride + k] = NAN;
    }
  return m;
}

// ---- checking ------------------------------------------------------------------------------

// The tolerance (absolute and relative) of an f32 statistic a row kernel writes (LayerNorm's mean
// and rstd, RMSNorm's rstd), whatever the storage type: f32 sums over the row, a tree across
// the tile and at most a few dozen column blocks in sequence, err by a few 1e-7; 4e-6 still tells
// a variance divided by n - 1 (rstd off by 1 / 2n: 1.6e-5 at 30522 columns) from the right one.
constexpr double kStatTol = 4e-6;

// Collects outputs and references; padding of matrix outputs must still hold the poison.
class Checker {
 public:
  // The rows x cols part of a padded matrix output (of storage T, poisoned with 0xFF bytes).
  template <class T>
  void matrix(const std::vector<typename Host<T>::type>& out, const Rows& s, const std::vector<double>& ref) {
    for (int64_t r = 0; r < s.rows; ++r) {
      for (int64_t k = 0; k < s.cols; ++k) {
        out_.push_back(static_cast<float>(Host<T>::decode(out[r * s.stride + k])));
        ref_.push_back(ref[r * s.cols + k]);
      }
      for (int64_t k = s.cols; k < s.stride && r * s.stride + k < static_cast<int64_t>(out.size()); ++k)
        if (!std::isnan(Host<T>::decode(out[r * s.stride + k])) && padding_error_.empty())
          padding_error_ = fmt::format("padding element [{}, {}] was written", r, k);
    }
  }
  void values(const std::vector<float>& out, const std::vector<double>& ref) {
    out_.insert(out_.end(), out.begin(), out.end());
    ref_.insert(ref_.end(), ref.begin(), ref.end());
  }
  // f32 statistics, checked at kStatTol rather than the outputs' storage tolerance: an f16
  // output's 2e-3 would hide a statistic wrong in its fourth digit.
  void stats(const std::vector<float>& out, const std::vector<double>& ref) {
    stat_out_.insert(stat_out_.end(), out.begin(), out.end());
    stat_ref_.insert(stat_ref_.end(), ref.begin(), ref.end());
  }
  // atol, rtol: the outputs' tolerance (the statistics have kStatTol); the result reports it.
  RunResult result(double atol, double rtol, int launches) const {
    RunResult r = compare(out_, ref_, atol, rtol);
    if (!stat_ref_.empty()) {
      const RunResult st = compare(stat_out_, stat_ref_, kStatTol, kStatTol);
      if (r.first_mismatch.empty() && !st.first_mismatch.empty())
        r.first_mismatch = "statistic " + st.first_mismatch + fmt::format(" (tolerance {:g})", kStatTol);
      r.checked += st.checked;
      r.mismatches += st.mismatches;
      r.max_abs_err = std::max(r.max_abs_err, st.max_abs_err);
      r.verified = r.verified && st.verified;
    }
    if (!padding_error_.empty()) {
      r.verified = false;
      r.mismatches += 1;
      if (r.first_mismatch.empty()) r.first_mismatch = padding_error_;
    }
    r.launches = launches;
    return r;
  }

 private:
  std::vector<float> out_, stat_out_;
  std::vector<double> ref_, stat_ref_;
  std::string padding_error_;
};

template <class T>
Array<T> poisoned(size_t n) {
  Array<T> a(n);
  a.poison();
  return a;
}

// ---- softmax -------------------------------------------------------------------------------

std::vector<double> softmax_ref(const std::vector<double>& x, const Rows& s) {
  std::vector<double> ref(s.rows * s.cols);
  for (int64_t r = 0; r < s.rows; ++r) {
    const double* row = &x[r * s.stride];
    double mx = -INFINITY, sum = 0;
    for (int64_t k = 0; k < s.cols; ++k) mx = std::max(mx, row[k]);
    for (int64_t k = 0; k < s.cols; ++k) sum += std::exp(row[k] - mx);
    for (int64_t k = 0; k < s.cols; ++k) ref[r * s.cols + k] = std::exp(row[k] - mx) / sum;
  }
  return ref;
}

enum class SoftmaxForm { Auto, Online, Unfused, Persistent };

RunResult run_softmax(const RunConfig& c, SoftmaxForm form) {
  const Rows s = rows_of(c);
  auto x = random_matrix<lang::f32>(s, c.seed, -4.0f, 4.0f);
  Array<float> xd(x.bits);
  auto out = poisoned<float>(s.padded());
  const int64_t cols = s.cols, stride = s.stride;
  int launches = 1;
  if (form == SoftmaxForm::Auto && next_pow2(s.cols) <= kMaxRowTile) {
    k_softmax(row_grid(s), row_tile_meta(c, s), xd, out, cols, stride, stride);
  } else if (form == SoftmaxForm::Persistent) {
    k_softmax_persistent(persistent_grid(s), row_tile_meta(c, s), xd, out, s.rows, cols, stride, stride);
  } else if (form != SoftmaxForm::Unfused) {
    k_softmax_online(row_grid(s), c.meta, xd, out, cols, stride, stride);
  } else {
    Array<float> row_max(s.rows), row_sum(s.rows), e(s.rows * s.cols);
    k_row_max(row_grid(s), c.meta, xd, row_max, cols, stride);
    k_exp_sum(row_grid(s), c.meta, xd, row_max, e, row_sum, cols, stride, cols);
    k_row_divide(row_grid(s), c.meta, e, row_sum, out, cols, cols, stride);
    launches = 3;
  }
  Checker ck;
  ck.matrix<lang::f32>(out.download(), s, softmax_ref(x.values, s));
  return ck.result(1e-6, 2e-5, launches);
}

// ---- LayerNorm -----------------------------------------------------------------------------

struct NormRef {
  std::vector<double> y, mean, rstd;
};

// y = (x - mean) * rstd * w + b (w, b of `cols` elements; without b when it is empty).
NormRef layernorm_ref(const std::vector<double>& x, const Rows& s, const std::vector<double>& w,
                      const std::vector<double>& b) {
  NormRef ref{std::vector<double>(s.rows * s.cols), {}, {}};
  for (int64_t r = 0; r < s.rows; ++r) {
    const double* row = &x[r * s.stride];
    double mean = 0, var = 0;
    for (int64_t k = 0; k < s.cols; ++k) mean += row[k];
    mean /= static_cast<double>(s.cols);
    for (int64_t k = 0; k < s.cols; ++k) var += (row[k] - mean) * (row[k] - mean);
    double rstd = 1.0 / std::sqrt(var / static_cast<double>(s.cols) + kEps);
    for (int64_t k = 0; k < s.cols; ++k) ref.y[r * s.cols + k] = (row[k] - mean) * rstd * w[k] + b[k];
    ref.mean.push_back(mean);
    ref.rstd.push_back(rstd);
  }
  return ref;
}

// Output tolerance of storage T: about one rounding of the result, plus f32 math error.
template <class T>
double storage_tol() {
  if constexpr (std::is_same_v<T, lang::f32>) return 1e-4;
  else if constexpr (std::is_same_v<T, lang::f16>) return 2e-3;
  else return 1e-2;
}

enum class NormForm { Auto, Looped, Persistent };

template <class T>
RunResult run_layernorm(const RunConfig& c, NormForm form) {
  using H = typename Host<T>::type;
  const Rows s = rows_of(c);
  auto x = random_matrix<T>(s, c.seed, -1.0f, 5.0f);  // a nonzero mean to subtract
  auto w = random_stored<T>(s.cols, c.seed + 1, 0.5f, 1.5f);
  auto b = random_stored<T>(s.cols, c.seed + 2, -1.0f, 1.0f);
  Array<H> xd(x.bits), wd(w.bits), bd(b.bits);
  auto y = poisoned<H>(s.padded());
  auto mean = poisoned<float>(s.rows), rstd = poisoned<float>(s.rows);
  const int64_t cols = s.cols, stride = s.stride;
  if (form == NormForm::Persistent) {
    if constexpr (std::is_same_v<T, lang::f16>)
      k_layernorm_persistent_f16(persistent_grid(s), row_tile_meta(c, s), xd, wd, bd, y, mean, rstd, s.rows, cols,
                                 stride, kEps);
    else
      throw std::invalid_argument("the persistent LayerNorm sample is f16 only");
  } else {
    const bool one_tile = form == NormForm::Auto && next_pow2(s.cols) <= kMaxRowTile;
    jit::Kernel<Ptr<T>, Ptr<T>, Ptr<T>, Ptr<T>, Ptr<lang::f32>, Ptr<lang::f32>, Int, Int, Float, const Meta&>* k;
    if constexpr (std::is_same_v<T, lang::f32>) k = one_tile ? &k_layernorm_f32 : &k_layernorm_looped_f32;
    else if constexpr (std::is_same_v<T, lang::f16>) k = one_tile ? &k_layernorm_f16 : &k_layernorm_looped_f16;
    else k = one_tile ? &k_layernorm_bf16 : &k_layernorm_looped_bf16;
    (*k)(row_grid(s), one_tile ? row_tile_meta(c, s) : c.meta, xd, wd, bd, y, mean, rstd, cols, stride, kEps);
  }
  NormRef ref = layernorm_ref(x.values, s, w.values, b.values);
  Checker ck;
  ck.matrix<T>(y.download(), s, ref.y);
  ck.stats(mean.download(), ref.mean);
  ck.stats(rstd.download(), ref.rstd);
  return ck.result(storage_tol<T>(), storage_tol<T>(), 1);
}

// ---- RMSNorm -------------------------------------------------------------------------------

template <class T>
RunResult run_rmsnorm(const RunConfig& c) {
  using H = typename Host<T>::type;
  const Rows s = rows_of(c);
  auto x = random_matrix<T>(s, c.seed, -2.0f, 2.0f);
  auto w = random_stored<T>(s.cols, c.seed + 1, 0.5f, 1.5f);
  Array<H> xd(x.bits), wd(w.bits);
  auto y = poisoned<H>(s.padded());
  auto rstd = poisoned<float>(s.rows);
  const int64_t cols = s.cols, stride = s.stride;
  if constexpr (std::is_same_v<T, lang::f32>) k_rmsnorm_f32(row_grid(s), c.meta, xd, wd, y, rstd, cols, stride, kEps);
  else k_rmsnorm_f16(row_grid(s), c.meta, xd, wd, y, rstd, cols, stride, kEps);
  std::vector<double> ref(s.rows * s.cols), ref_rstd;
  for (int64_t r = 0; r < s.rows; ++r) {
    const double* row = &x.values[r * s.stride];
    double ss = 0;
    for (int64_t k = 0; k < s.cols; ++k) ss += row[k] * row[k];
    double rs = 1.0 / std::sqrt(ss / static_cast<double>(s.cols) + kEps);
    for (int64_t k = 0; k < s.cols; ++k) ref[r * s.cols + k] = row[k] * rs * w.values[k];
    ref_rstd.push_back(rs);
  }
  Checker ck;
  ck.matrix<T>(y.download(), s, ref);
  ck.stats(rstd.download(), ref_rstd);
  return ck.result(storage_tol<T>(), storage_tol<T>(), 1);
}

// ---- residual add + LayerNorm --------------------------------------------------------------

RunResult run_add_layernorm(const RunConfig& c) {
  const Rows s = rows_of(c);
  auto x = random_matrix<lang::f32>(s, c.seed, -1.0f, 3.0f);
  auto res = random_matrix<lang::f32>(s, c.seed + 3, -2.0f, 2.0f);
  auto w = random_stored<lang::f32>(s.cols, c.seed + 1, 0.5f, 1.5f);
  auto b = random_stored<lang::f32>(s.cols, c.seed + 2, -1.0f, 1.0f);
  Array<float> xd(x.bits), rd(res.bits), wd(w.bits), bd(b.bits);
  auto h = poisoned<float>(s.padded()), y = poisoned<float>(s.padded());
  auto mean = poisoned<float>(s.rows), rstd = poisoned<float>(s.rows);
  const int64_t cols = s.cols, stride = s.stride;
  k_add_layernorm(row_grid(s), c.meta, xd, rd, wd, bd, h, y, mean, rstd, cols, stride, kEps);
  // h is rounded to f32 once (x + res), as the kernel computes it
  std::vector<double> hv(x.values.size()), href(s.rows * s.cols);
  for (size_t i = 0; i < hv.size(); ++i) hv[i] = static_cast<float>(x.bits[i] + res.bits[i]);
  for (int64_t r = 0; r < s.rows; ++r)
    for (int64_t k = 0; k < s.cols; ++k) href[r * s.cols + k] = hv[r * s.stride + k];
  NormRef ref = layernorm_ref(hv, s, w.values, b.values);
  Checker ck;
  ck.matrix<lang::f32>(h.download(), s, href);
  ck.matrix<lang::f32>(y.download(), s, ref.y);
  ck.stats(mean.download(), ref.mean);
  ck.stats(rstd.download(), ref.rstd);
  return ck.result(1e-4, 1e-4, 1);
}

// ---- cross-entropy -------------------------------------------------------------------------

RunResult run_cross_entropy(const RunConfig& c) {
  const Rows s = rows_of(c);
  auto x = random_matrix<lang::f32>(s, c.seed, -4.0f, 4.0f);
  std::vector<int32_t> targets(s.rows);
  std::mt19937_64 gen(c.seed + 5);
  for (auto& t : targets) t = static_cast<int32_t>(gen() % static_cast<uint64_t>(s.cols));
  Array<float> xd(x.bits);
  Array<int32_t> td(targets);
  auto loss = poisoned<float>(s.rows);
  const int64_t cols = s.cols, stride = s.stride;
  k_cross_entropy(row_grid(s), c.meta, xd, td, loss, cols, stride);
  std::vector<double> ref;
  for (int64_t r = 0; r < s.rows; ++r) {
    const double* row = &x.values[r * s.stride];
    double mx = -INFINITY, sum = 0;
    for (int64_t k = 0; k < s.cols; ++k) mx = std::max(mx, row[k]);
    for (int64_t k = 0; k < s.cols; ++k) sum += std::exp(row[k] - mx);
    ref.push_back(std::log(sum) + mx - row[targets[r]]);
  }
  Checker ck;
  ck.values(loss.download(), ref);
  return ck.result(1e-4, 1e-5, 1);
}

// ---- sum of squares and MSE ----------------------------------------------------------------

Grid block_grid(int64_t n, jit::Kernel<Ptr<lang::f32>, Ptr<lang::f32>, Int, const Meta&>& k, const RunConfig& c) {
  return Grid{jit::cdiv(n, k.effective_meta(c.meta)["BLOCK"])};
}

RunResult run_sum_squares(const RunConfig& c) {
  auto hx = random_floats(c.n, c.seed);
  Array<float> x(hx), out(std::vector<float>{0.0f});
  k_sum_squares(block_grid(c.n, k_sum_squares, c), c.meta, x, out, c.n);
  double ref = 0;
  for (float v : hx) ref += static_cast<double>(v) * v;
  Checker ck;
  ck.values(out.download(), {ref});
  // Programs add their partial sums in no particular order; each of the n / BLOCK f32
  // additions rounds at the size of the total.
  return ck.result(1e-6, 5e-5, 1);
}

RunResult run_mse(const RunConfig& c) {
  auto hp = random_floats(c.n, c.seed), ht = random_floats(c.n, c.seed + 1);
  Array<float> p(hp), t(ht), out(std::vector<float>{0.0f});
  const int64_t block = k_mse.effective_meta(c.meta)["BLOCK"];
  k_mse(Grid{jit::cdiv(c.n, block)}, c.meta, p, t, out, c.n, 1.0 / static_cast<double>(c.n));
  double ref = 0;
  for (int64_t i = 0; i < c.n; ++i) ref += (static_cast<double>(hp[i]) - ht[i]) * (static_cast<double>(hp[i]) - ht[i]);
  ref /= static_cast<double>(c.n);
  Checker ck;
  ck.values(out.download(), {ref});
  return ck.result(1e-6, 5e-5, 1);
}

}  // namespace

std::vector<Sample> reduction_samples() {
  using S = SampleShape;
  return {
      {"softmax", "row softmax, the row in one tile (online loop for rows wider than 8192)", {"softmax", "softmax_online"},
       [](const RunConfig& c) { return run_softmax(c, SoftmaxForm::Auto); }, S::Rows},
      {"softmax_persistent", "row softmax, persistent programs: the next row's load in flight while one is reduced",
       {"softmax_persistent"}, [](const RunConfig& c) { return run_softmax(c, SoftmaxForm::Persistent); }, S::Rows},
      {"softmax_online", "row softmax with an online max/sum pass over column blocks, then a write pass",
       {"softmax_online"}, [](const RunConfig& c) { return run_softmax(c, SoftmaxForm::Online); }, S::Rows},
      {"softmax_unfused", "row softmax as three kernels (row_max, exp_sum, row_divide)",
       {"row_max", "exp_sum", "row_divide"}, [](const RunConfig& c) { return run_softmax(c, SoftmaxForm::Unfused); },
       S::Rows},
      {"layernorm_f32", "LayerNorm forward, f32; outputs y, mean, rstd", {"layernorm_f32", "layernorm_looped_f32"},
       [](const RunConfig& c) { return run_layernorm<lang::f32>(c, NormForm::Auto); }, S::Rows},
      {"layernorm_f16", "LayerNorm forward, f16 storage, f32 math", {"layernorm_f16", "layernorm_looped_f16"},
       [](const RunConfig& c) { return run_layernorm<lang::f16>(c, NormForm::Auto); }, S::Rows},
      {"layernorm_bf16", "LayerNorm forward, bf16 storage, f32 math", {"layernorm_bf16", "layernorm_looped_bf16"},
       [](const RunConfig& c) { return run_layernorm<lang::bf16>(c, NormForm::Auto); }, S::Rows},
      {"layernorm_looped_f32", "LayerNorm forward, f32, three passes over column blocks", {"layernorm_looped_f32"},
       [](const RunConfig& c) { return run_layernorm<lang::f32>(c, NormForm::Looped); }, S::Rows},
      {"layernorm_looped_f16", "LayerNorm forward, f16 storage, three passes over column blocks",
       {"layernorm_looped_f16"}, [](const RunConfig& c) { return run_layernorm<lang::f16>(c, NormForm::Looped); },
       S::Rows},
      {"layernorm_looped_bf16", "LayerNorm forward, bf16 storage, three passes over column blocks",
       {"layernorm_looped_bf16"}, [](const RunConfig& c) { return run_layernorm<lang::bf16>(c, NormForm::Looped); },
       S::Rows},
      {"layernorm_persistent_f16",
       "LayerNorm forward, f16 storage; persistent programs, the next row's load in flight while one is normalised",
       {"layernorm_persistent_f16"},
       [](const RunConfig& c) { return run_layernorm<lang::f16>(c, NormForm::Persistent); }, S::Rows},
      {"rmsnorm_f32", "RMSNorm, f32; outputs y and rstd", {"rmsnorm_f32"}, run_rmsnorm<lang::f32>, S::Rows},
      {"rmsnorm_f16", "RMSNorm, f16 storage, f32 math", {"rmsnorm_f16"}, run_rmsnorm<lang::f16>, S::Rows},
      {"add_layernorm", "residual add + LayerNorm, f32; outputs h = x + res, y, mean, rstd", {"add_layernorm"},
       run_add_layernorm, S::Rows},
      {"cross_entropy", "per-row cross-entropy loss from logits and int targets, online logsumexp",
       {"cross_entropy"}, run_cross_entropy, S::Rows},
      {"sum_squares", "sum(x^2): per-program partial sums added with atomic_add", {"sum_squares"},
       run_sum_squares, S::Total},
      {"mse", "mean((pred - target)^2): per-program partial sums added with atomic_add", {"mse"}, run_mse, S::Total},
  };
}

void register_reduction_kernels(jit::Registry& r) {
  r.add(jit::entry_of(k_softmax, "out[row] = softmax(x[row]), the row in one tile (BLOCK >= cols)"));
  r.add(jit::entry_of(k_softmax_online, "out[row] = softmax(x[row]), online max/sum over column blocks"));
  r.add(jit::entry_of(k_softmax_persistent,
                      "out[row] = softmax(x[row]), programs loop over rows (grid: about 2 per SM)"));
  r.add(jit::entry_of(k_row_max, "row_max[row] = max(x[row])"));
  r.add(jit::entry_of(k_exp_sum, "e[row] = exp(x[row] - row_max[row]); row_sum[row] = sum(e[row])"));
  r.add(jit::entry_of(k_row_divide, "out[row] = e[row] / row_sum[row]"));
  r.add(jit::entry_of(k_layernorm_f32, "y = LayerNorm(x) * w + b, f32, the row in one tile"));
  r.add(jit::entry_of(k_layernorm_f16, "y = LayerNorm(x) * w + b, f16 storage, the row in one tile"));
  r.add(jit::entry_of(k_layernorm_bf16, "y = LayerNorm(x) * w + b, bf16 storage, the row in one tile"));
  r.add(jit::entry_of(k_layernorm_looped_f32, "y = LayerNorm(x) * w + b, f32, column blocks"));
  r.add(jit::entry_of(k_layernorm_looped_f16, "y = LayerNorm(x) * w + b, f16 storage, column blocks"));
  r.add(jit::entry_of(k_layernorm_looped_bf16, "y = LayerNorm(x) * w + b, bf16 storage, column blocks"));
  r.add(jit::entry_of(k_layernorm_persistent_f16,
                      "y = LayerNorm(x) * w + b, f16 storage, programs loop over rows (grid: about 2 per SM)"));
  r.add(jit::entry_of(k_rmsnorm_f32, "y = x * rsqrt(mean(x^2) + eps) * w, f32"));
  r.add(jit::entry_of(k_rmsnorm_f16, "y = x * rsqrt(mean(x^2) + eps) * w, f16 storage"));
  r.add(jit::entry_of(k_add_layernorm, "h = x + res; y = LayerNorm(h) * w + b"));
  r.add(jit::entry_of(k_cross_entropy, "loss[row] = logsumexp(logits[row]) - logits[row, target[row]]"));
  r.add(jit::entry_of(k_sum_squares, "out += sum(x^2) (atomic_add)"));
  r.add(jit::entry_of(k_mse, "out += sum((pred - target)^2) / n (atomic_add)"));
}

}  // namespace tessel::samples
