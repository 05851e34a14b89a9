// Tunables of the row samples: softmax (fused and its 3-kernel unfused form), LayerNorm f16,
// RMSNorm f32/f16 and cross-entropy, over rows x cols matrices with contiguous rows.
//
// Row-in-one-tile kernels (softmax, layernorm) need BLOCK >= cols: their space at a size is
// BLOCK in {p, 2p} (p = next power of two >= cols) x num_warps, pruned where a thread would hold
// more than 64 elements (register pressure). Looped kernels tune BLOCK freely. Flops count one
// per elementwise operation or reduction step per element; bytes are compulsory traffic. Each
// problem's host reference follows its sample's (reduction_samples.cpp), in double, at the
// sampled positions; per-row statistics (mean, rstd) are checked at f32 tolerance, not storage's.
#include <algorithm>
#include <cmath>
#include <memory>
#include <random>

#include "tessel/samples/reduction_kernels.hpp"
#include "tunable_support.hpp"

namespace tessel::samples::tunable {
namespace {
using jit::Array;
using jit::Grid;
using jit::tune::Bucket;

constexpr float kEps = 1e-5f;
constexpr int64_t kMaxElementsPerThread = 64;

const std::vector<SizeArgs> kTileSizes{{{16384, 1024}}, {{8192, 4096}}, {{4096, 8192}}};
const std::vector<SizeArgs> kLoopSizes{{{16384, 1024}}, {{8192, 4096}}, {{4096, 32000}}};

std::vector<Config> tile_space(const SizeArgs& s) {
  const int64_t p = next_pow2(s.dims[1]);
  return block_warps({p, 2 * p}, {2, 4, 8, 16});
}
Config tile_default(const SizeArgs& s) { return block_config(next_pow2(s.dims[1]), 4); }
bool tile_keep(const Config& c, const SizeArgs& s) {
  const int64_t block = c.meta["BLOCK"];
  return block >= s.dims[1] && block / (32 * c.opts.num_warps) <= kMaxElementsPerThread;
}

Tunable base_sized(std::string name, std::string description, bool one_tile, std::string group, bool fused,
                   std::vector<SizeArgs> sizes);

std::vector<Config> loop_space(const SizeArgs&) { return block_warps({512, 1024, 2048, 4096}, {4, 8}); }
Config loop_default(const SizeArgs&) { return block_config(1024, 4); }

Tunable base(std::string name, std::string description, bool one_tile, std::string group, bool fused = true) {
  return base_sized(std::move(name), std::move(description), one_tile, std::move(group), fused,
                    one_tile ? kTileSizes : kLoopSizes);
}

Tunable base_sized(std::string name, std::string description, bool one_tile, std::string group, bool fused,
                   std::vector<SizeArgs> sizes) {
  Tunable t;
  t.name = name;
  t.kernel = name;
  t.description = std::move(description);
  t.size_names = {"rows", "cols"};
  t.sizes = std::move(sizes);
  t.configs = one_tile ? tile_space : loop_space;
  t.default_config = one_tile ? tile_default : loop_default;
  if (one_tile) t.keep = tile_keep;
  // The kernels see cols (and strides) only: rows is the grid, not an argument.
  t.key = jit::tune::KeySpec{{{"cols", Bucket::PowerOfTwo}}};
  t.group = std::move(group);
  t.fused = fused;
  return t;
}

Problem problem(const Tunable& t, const std::string& signature, const SizeArgs& s) {
  Problem p;
  p.kernel = t.kernel;
  p.key = t.key.key_string(t.key_values(s), signature);
  return p;
}

Grid row_grid(int64_t rows) { return Grid{static_cast<uint32_t>(rows)}; }

// f32 per-row statistics (mean, rstd) from f32 sums of one row: a few ulp of their size.
constexpr double kStatRtol = 1e-5, kStatAtol = 1e-6;

// Appends per-row values and their f32 tolerance to a reference.
void append_stats(jit::tune::Expected& e, const std::vector<double>& v) {
  for (double x : v) {
    e.values.push_back(x);
    e.tolerance.push_back(kStatAtol + kStatRtol * std::abs(x));
  }
}

// The storage tolerance of an output element: atol + rtol * |value| (f16: one rounding, 2^-11).
auto storage_tolerance(double atol, double rtol) {
  return [atol, rtol](size_t, double v) { return atol + rtol * std::abs(v); };
}

template <class T>
std::vector<double> as_doubles(const std::vector<T>& v) {
  if constexpr (std::is_same_v<T, uint16_t>) {
    std::vector<double> out;
    out.reserve(v.size());
    for (uint16_t h : v) out.push_back(f16_value(h));
    return out;
  } else {
    return std::vector<double>(v.begin(), v.end());
  }
}

// Row softmax of a rows x cols matrix (softmax_ref): per-row max and sum, then each sampled value.
jit::tune::Expected softmax_expected(const std::vector<float>& x, int64_t rows, int64_t cols) {
  std::vector<double> mx(rows, -INFINITY), sum(rows, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = &x[r * cols];
    for (int64_t k = 0; k < cols; ++k) mx[r] = std::max<double>(mx[r], row[k]);
    for (int64_t k = 0; k < cols; ++k) sum[r] += std::exp(row[k] - mx[r]);
  }
  return sampled_reference(x.size(), [&](size_t i) {
    const size_t r = i / static_cast<size_t>(cols);
    return std::exp(x[i] - mx[r]) / sum[r];
  });
}

// ---- softmax -------------------------------------------------------------------------------

struct SoftmaxBuffers {
  SoftmaxBuffers(int64_t r, int64_t c)
      : rows(r), cols(c), x(big_random(r * c, 1, -4, 4)), out(r * c), row_max(r), row_sum(r), e(r * c) {}
  int64_t rows, cols;
  Array<float> x, out, row_max, row_sum, e;
};

// max, subtract, exp, sum, multiply
constexpr double kSoftmaxFlops = 5;

Tunable softmax() {
  Tunable t = base("softmax", "row softmax, the row in one tile (BLOCK >= cols)", true, "softmax");
  t.make_problem = [t](const SizeArgs& s) {
    const int64_t rows = s.dims[0], cols = s.dims[1];
    auto b = std::make_shared<SoftmaxBuffers>(rows, cols);
    Problem p = problem(t, signature_of(k_softmax), s);
    p.compile = [b](const Config& c) { compile_for(k_softmax, c, b->x, b->out, b->cols, b->cols, b->cols); };
    p.launch = [b](const Config& c) {
      k_softmax.launch(row_grid(b->rows), c.meta, c.opts, b->x, b->out, b->cols, b->cols, b->cols);
    };
    p.output = [b] { return sample_values(b->out.download()); };
    p.poison = [b] { b->out.poison(); };
    p.reference = [b] { return softmax_expected(b->x.download(), b->rows, b->cols); };
    p.rtol = 2e-5;  // run_softmax's bound
    p.atol = 1e-6;
    p.bytes = 8.0 * rows * cols;
    p.flops = kSoftmaxFlops * rows * cols;
    return p;
  };
  return t;
}

Tunable softmax_unfused() {
  // the sizes of the fused softmax, so the plot can set them side by side
  Tunable t = base_sized("softmax_unfused", "row softmax as three kernels (row_max, exp_sum, row_divide)", false,
                         "softmax", false, kTileSizes);
  t.make_problem = [t](const SizeArgs& s) {
    const int64_t rows = s.dims[0], cols = s.dims[1];
    auto b = std::make_shared<SoftmaxBuffers>(rows, cols);
    Problem p = problem(t, signature_of(k_softmax), s);
    p.compile = [b](const Config& c) {
      compile_for(k_row_max, c, b->x, b->row_max, b->cols, b->cols);
      compile_for(k_exp_sum, c, b->x, b->row_max, b->e, b->row_sum, b->cols, b->cols, b->cols);
      compile_for(k_row_divide, c, b->e, b->row_sum, b->out, b->cols, b->cols, b->cols);
    };
    p.launch = [b](const Config& c) {
      const Grid g = row_grid(b->rows);
      k_row_max.launch(g, c.meta, c.opts, b->x, b->row_max, b->cols, b->cols);
      k_exp_sum.launch(g, c.meta, c.opts, b->x, b->row_max, b->e, b->row_sum, b->cols, b->cols, b->cols);
      k_row_divide.launch(g, c.meta, c.opts, b->e, b->row_sum, b->out, b->cols, b->cols, b->cols);
    };
    p.output = [b] { return sample_values(b->out.download()); };
    p.poison = [b] { poison_all(b->out, b->row_max, b->row_sum, b->e); };
    p.reference = [b] { return softmax_expected(b->x.download(), b->rows, b->cols); };
    p.rtol = 2e-5;
    p.atol = 1e-6;
    // row_max reads x; exp_sum reads x and writes e; row_divide reads e and writes out (+ per-row values)
    p.bytes = 20.0 * rows * cols + 16.0 * rows;
    p.flops = kSoftmaxFlops * rows * cols;
    return p;
  };
  return t;
}

// ---- LayerNorm f16 -------------------------------------------------------------------------

// sum, subtract, square, sum, multiply by rstd, by w, add b
constexpr double kLayerNormFlops = 7;

Tunable layernorm_f16() {
  Tunable t = base("layernorm_f16", "LayerNorm forward, f16 storage, f32 math, the row in one tile", true,
                   "layernorm_f16");
  t.make_problem = [t](const SizeArgs& s) {
    const int64_t rows = s.dims[0], cols = s.dims[1];
    struct B {
      int64_t rows, cols;
      Array<uint16_t> x, w, bias, y;
      Array<float> mean, rstd;
    };
    auto b = std::make_shared<B>(B{rows, cols, Array<uint16_t>(big_random_f16(rows * cols, 1, -1, 5)),
                                   Array<uint16_t>(big_random_f16(cols, 2, 0.5f, 1.5f)),
                                   Array<uint16_t>(big_random_f16(cols, 3, -1, 1)), Array<uint16_t>(rows * cols),
                                   Array<float>(rows), Array<float>(rows)});
    Problem p = problem(t, signature_of(k_layernorm_f16), s);
    p.compile = [b](const Config& c) {
      compile_for(k_layernorm_f16, c, b->x, b->w, b->bias, b->y, b->mean, b->rstd, b->cols, b->cols, kEps);
    };
    p.launch = [b](const Config& c) {
      k_layernorm_f16.launch(row_grid(b->rows), c.meta, c.opts, b->x, b->w, b->bias, b->y, b->mean, b->rstd, b->cols,
                             b->cols, kEps);
    };
    p.output = [b] {
      std::vector<double> v = sample_values(b->y.download(), f16_value);
      for (float m : b->mean.download()) v.push_back(m);
      for (float r : b->rstd.download()) v.push_back(r);
      return v;
    };
    p.poison = [b] { poison_all(b->y, b->mean, b->rstd); };
    // layernorm_ref: y = (x - mean) * rstd * w + b, the variance over cols (not cols - 1); y at
    // f16 storage tolerance (one rounding), mean and rstd at f32 tolerance.
    p.reference = [b] {
      const std::vector<double> x = as_doubles(b->x.download()), w = as_doubles(b->w.download()),
                                bias = as_doubles(b->bias.download());
      const int64_t cols = b->cols;
      std::vector<double> mean(b->rows), rstd(b->rows);
      for (int64_t r = 0; r < b->rows; ++r) {
        const double* row = &x[r * cols];
        double m = 0, var = 0;
        for (int64_t k = 0; k < cols; ++k) m += row[k];
        m /= static_cast<double>(cols);
        for (int64_t k = 0; k < cols; ++k) var += (row[k] - m) * (row[k] - m);
        mean[r] = m;
        rstd[r] = 1.0 / std::sqrt(var / static_cast<double>(cols) + kEps);
      }
      jit::tune::Expected e = sampled_reference(
          x.size(),
          [&](size_t i) {
            const size_t r = i / static_cast<size_t>(cols), k = i % static_cast<size_t>(cols);
            return (x[i] - mean[r]) * rstd[r] * w[k] + bias[k];
          },
          storage_tolerance(2e-3, 2e-3));
      append_stats(e, mean);
      append_stats(e, rstd);
      return e;
    };
    p.rtol = p.atol = 2e-3;  // between two configs' outputs (tessel bench): one f16 rounding apart
    p.bytes = 4.0 * rows * cols + 4.0 * cols + 8.0 * rows;
    p.flops = kLayerNormFlops * rows * cols;
    return p;
  };
  return t;
}

// ---- RMSNorm -------------------------------------------------------------------------------

// square, sum, multiply by rstd, by w
constexpr double kRmsNormFlops = 4;

template <class T>
Tunable rmsnorm(std::string name, std::string description,
                jit::Kernel<Ptr<T>, Ptr<T>, Ptr<T>, Ptr<lang::f32>, Int, Int, Float, const Meta&>& k) {
  using H = std::conditional_t<std::is_same_v<T, lang::f16>, uint16_t, float>;
  Tunable t = base(name, std::move(description), false, name);
  t.make_problem = [t, &k](const SizeArgs& s) {
    const int64_t rows = s.dims[0], cols = s.dims[1];
    struct B {
      int64_t rows, cols;
      Array<H> x, w, y;
      Array<float> rstd;
    };
    auto input = [](size_t n, uint64_t seed, float lo, float hi) {
      if constexpr (std::is_same_v<H, uint16_t>) return big_random_f16(n, seed, lo, hi);
      else return big_random(n, seed, lo, hi);
    };
    auto b = std::make_shared<B>(B{rows, cols, Array<H>(input(rows * cols, 1, -2, 2)),
                                   Array<H>(input(cols, 2, 0.5f, 1.5f)), Array<H>(rows * cols), Array<float>(rows)});
    Problem p = problem(t, signature_of(k), s);
    p.compile = [b, &k](const Config& c) { compile_for(k, c, b->x, b->w, b->y, b->rstd, b->cols, b->cols, kEps); };
    p.launch = [b, &k](const Config& c) {
      k.launch(row_grid(b->rows), c.meta, c.opts, b->x, b->w, b->y, b->rstd, b->cols, b->cols, kEps);
    };
    p.output = [b] {
      std::vector<double> v;
      if constexpr (std::is_same_v<H, uint16_t>) v = sample_values(b->y.download(), f16_value);
      else v = sample_values(b->y.download());
      for (float r : b->rstd.download()) v.push_back(r);
      return v;
    };
    p.poison = [b] { poison_all(b->y, b->rstd); };
    // run_rmsnorm: y = x * rstd * w, rstd = 1 / sqrt(mean(x^2) + eps); y at storage tolerance
    // (f16: one rounding; f32: a few ulp), rstd at f32 tolerance.
    p.reference = [b] {
      const std::vector<double> x = as_doubles(b->x.download()), w = as_doubles(b->w.download());
      const int64_t cols = b->cols;
      std::vector<double> rstd(b->rows);
      for (int64_t r = 0; r < b->rows; ++r) {
        double ss = 0;
        for (int64_t k = 0; k < cols; ++k) ss += x[r * cols + k] * x[r * cols + k];
        rstd[r] = 1.0 / std::sqrt(ss / static_cast<double>(cols) + kEps);
      }
      const double tol = std::is_same_v<H, uint16_t> ? 2e-3 : 1e-5;
      jit::tune::Expected e = sampled_reference(
          x.size(),
          [&](size_t i) { return x[i] * rstd[i / static_cast<size_t>(cols)] * w[i % static_cast<size_t>(cols)]; },
          storage_tolerance(tol, tol));
      append_stats(e, rstd);
      return e;
    };
    // between two configs' outputs (tessel bench)
    if constexpr (std::is_same_v<H, uint16_t>) p.rtol = p.atol = 2e-3;
    else p.rtol = 1e-4, p.atol = 1e-5;
    const double e = sizeof(H);
    p.bytes = 2 * e * rows * cols + e * cols + 4.0 * rows;
    p.flops = kRmsNormFlops * rows * cols;
    return p;
  };
  return t;
}

// ---- cross-entropy -------------------------------------------------------------------------

// max, subtract, exp, sum (online)
constexpr double kCrossEntropyFlops = 4;

Tunable cross_entropy() {
  Tunable t = base("cross_entropy", "per-row cross-entropy loss, online logsumexp over column blocks", false,
                   "cross_entropy");
  t.make_problem = [t](const SizeArgs& s) {
    const int64_t rows = s.dims[0], cols = s.dims[1];
    std::vector<int32_t> targets(rows);
    std::mt19937_64 gen(5);
    for (auto& v : targets) v = static_cast<int32_t>(gen() % static_cast<uint64_t>(cols));
    struct B {
      int64_t rows, cols;
      Array<float> logits;
      Array<int32_t> targets;
      Array<float> loss;
    };
    auto b = std::make_shared<B>(B{rows, cols, Array<float>(big_random(rows * cols, 1, -4, 4)),
                                   Array<int32_t>(targets), Array<float>(rows)});
    Problem p = problem(t, signature_of(k_cross_entropy), s);
    p.compile = [b](const Config& c) { compile_for(k_cross_entropy, c, b->logits, b->targets, b->loss, b->cols, b->cols); };
    p.launch = [b](const Config& c) {
      k_cross_entropy.launch(row_grid(b->rows), c.meta, c.opts, b->logits, b->targets, b->loss, b->cols, b->cols);
    };
    p.output = [b] { return sample_values(b->loss.download()); };
    p.poison = [b] { b->loss.poison(); };
    // run_cross_entropy: loss = logsumexp(row) - row[target], with its bound.
    p.reference = [b] {
      const auto x = b->logits.download();
      const auto target = b->targets.download();
      const int64_t cols = b->cols;
      std::vector<double> loss(b->rows);
      for (int64_t r = 0; r < b->rows; ++r) {
        const float* row = &x[r * cols];
        double mx = -INFINITY, sum = 0;
        for (int64_t k = 0; k < cols; ++k) mx = std::max<double>(mx, row[k]);
        for (int64_t k = 0; k < cols; ++k) sum += std::exp(row[k] - mx);
        loss[r] = std::log(sum) + mx - row[target[r]];
      }
      return sampled_reference(loss.size(), [&](size_t i) { return loss[i]; });
    };
    p.rtol = 1e-5, p.atol = 1e-4;
    p.bytes = 4.0 * rows * cols + 8.0 * rows;
    p.flops = kCrossEntropyFlops * rows * cols;
    return p;
  };
  return t;
}

}  // namespace

std::vector<Tunable> row_tunables() {
  return {softmax(),
          softmax_unfused(),
          layernorm_f16(),
          rmsnorm<lang::f32>("rmsnorm_f32", "RMSNorm, f32, column blocks", k_rmsnorm_f32),
          rmsnorm<lang::f16>("rmsnorm_f16", "RMSNorm, f16 storage, f32 math, column blocks", k_rmsnorm_f16),
          cross_entropy()};
}

}  // namespace tessel::samples::tunable
