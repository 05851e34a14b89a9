// The reduction seed kernels: row softmax, LayerNorm, RMSNorm, residual add + LayerNorm,
// cross-entropy, sum of squares and MSE, written in the DSL (plus softmax's unfused pieces).
//
// Row kernels run one program per row (grid = rows), except the "persistent" ones, whose
// programs loop over rows (grid: about one or two per SM). A row of `cols` elements starts at
// `row * stride` (stride >= cols: rows may be padded). Kernels whose name has no "looped"
// and no "online" hold the whole row in one tile of BLOCK >= cols elements; the others walk
// the row in column blocks of BLOCK with a range() loop, so any width works.
#pragma once
#include <limits>
#include <string>
#include <vector>

#include "tessel/tessel.hpp"

namespace tessel::samples {
using namespace tessel::lang;

inline constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// ---- softmax ---------------------------------------------------------------------------

// out[row, :] = softmax(x[row, :]), the row in one tile (BLOCK >= cols): one read, one write.
inline void softmax_kernel(Ptr<f32> x, Ptr<f32> out, Int cols, Int x_stride, Int out_stride, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto row = program_id(0);
  auto offs = arange(0, BLOCK);
  auto mask = offs < cols;
  auto v = load(x + row * x_stride + offs, mask, kNegInf);  // masked lanes: exp(-inf) = 0
  auto e = exp(v - max(v, 0));
  auto inv = 1.0f / sum(e, 0);  // one division per row, then multiplies
  store(out + row * out_stride + offs, e * inv, mask);
}

// softmax as a persistent kernel: program p handles rows p, p + P, ... (P = num_programs,
// about one per SM), the row in one tile, and loads its next row before reducing the current
// one, so the memory never waits for a program's reductions.
inline void softmax_persistent_kernel(Ptr<f32> x, Ptr<f32> out, Int rows, Int cols, Int x_stride, Int out_stride,
                                      const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto p = program_id(0);
  auto P = num_programs(0);
  auto offs = arange(0, BLOCK);
  auto mask = offs < cols;
  Var cur{load(x + p * x_stride + offs, mask & (p < rows), kNegInf)};
  for (auto r : range(p, rows, P)) {
    auto next_row = r + P;
    auto next = load(x + next_row * x_stride + offs, mask & (next_row < rows), kNegInf);
    auto v = Tile(cur);
    auto e = exp(v - max(v, 0));
    auto inv = 1.0f / sum(e, 0);
    store(out + r * out_stride + offs, e * inv, mask);
    cur = next;
  }
}

// The online max / sum-of-exponentials pass over one row (a DSL helper: plain C++ composes).
// Walks `cols` elements from `xrow` in blocks of BLOCK, keeping the running max and the sum of
// exp(x - max), rescaled whenever the max grows. Returns {max, sum} as f32 scalars.
struct RowMaxSum {
  Tile max, sum;
};
inline RowMaxSum online_max_sum(const Tile& xrow, const Tile& cols, int BLOCK) {
  Var run_max(kNegInf);
  Var run_sum(0.0f);
  for (auto c : range(0, cols, BLOCK)) {
    auto idx = c + arange(0, BLOCK);
    auto v = load(xrow + idx, idx < cols, kNegInf);
    auto new_max = maximum(run_max, max(v, 0));
    run_sum = run_sum * exp(run_max - new_max) + sum(exp(v - new_max), 0);
    run_max = new_max;
  }
  return {run_max.get(), run_sum.get()};
}

// softmax for rows of any width: an online pass keeps the running max and the sum of
// exp(x - max) rescaled whenever the max grows; a second pass writes exp(x - max) / sum.
inline void softmax_online_kernel(Ptr<f32> x, Ptr<f32> out, Int cols, Int x_stride, Int out_stride, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto row = program_id(0);
  auto xrow = x + row * x_stride;
  auto orow = out + row * out_stride;
  auto [row_max, row_sum] = online_max_sum(xrow, cols, BLOCK);
  auto inv = 1.0f / row_sum;  // one division per row
  for (auto c : range(0, cols, BLOCK)) {
    auto idx = c + arange(0, BLOCK);
    auto mask = idx < cols;
    store(orow + idx, exp(load(xrow + idx, mask) - row_max) * inv, mask);
  }
}

// Unfused softmax, step 1 of 3: row_max[row] = max(x[row, :]).
inline void row_max_kernel(Ptr<f32> x, Ptr<f32> row_max, Int cols, Int x_stride, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto row = program_id(0);
  Var acc{full<f32>({BLOCK}, kNegInf)};
  for (auto c : range(0, cols, BLOCK)) {
    auto idx = c + arange(0, BLOCK);
    acc = maximum(acc, load(x + row * x_stride + idx, idx < cols, kNegInf));
  }
  store(row_max + row, max(acc, 0));
}

// Unfused softmax, step 2 of 3: e[row, :] = exp(x[row, :] - row_max[row]); row_sum[row] = sum(e[row, :]).
inline void exp_sum_kernel(Ptr<f32> x, Ptr<f32> row_max, Ptr<f32> e, Ptr<f32> row_sum, Int cols, Int x_stride,
                           Int e_stride, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto row = program_id(0);
  auto mx = load(row_max + row);
  Var acc{zeros<f32>({BLOCK})};
  for (auto c : range(0, cols, BLOCK)) {
    auto idx = c + arange(0, BLOCK);
    auto mask = idx < cols;
    auto ev = exp(load(x + row * x_stride + idx, mask, kNegInf) - mx);
    store(e + row * e_stride + idx, ev, mask);
    acc += ev;
  }
  store(row_sum + row, sum(acc, 0));
}

// Unfused softmax, step 3 of 3: out[row, :] = e[row, :] / row_sum[row].
inline void row_divide_kernel(Ptr<f32> e, Ptr<f32> row_sum, Ptr<f32> out, Int cols, Int e_stride, Int out_stride,
                              const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto row = program_id(0);
  auto s = load(row_sum + row);
  for (auto c : range(0, cols, BLOCK)) {
    auto idx = c + arange(0, BLOCK);
    auto mask = idx < cols;
    store(out + row * out_stride + idx, load(e + row * e_stride + idx, mask) / s, mask);
  }
}

// ---- LayerNorm, RMSNorm ----------------------------------------------------------------
// Storage in T (f32, f16 or bf16), math in f32. y = (x - mean) * rstd * w + b with
// rstd = 1 / sqrt(var + eps) and the biased variance; mean and rstd are written per row.
// The row-in-one-tile kernels take both statistics in one pass over shifted data: with
// t = x - c for c = the row's first element, mean = c + E[t] and var = E[t^2] - E[t]^2 (the
// shift keeps the cancellation of E[x^2] - E[x]^2 away when |mean| >> std), so the two sums
// are independent and the row waits for one reduction round, not two.

template <DTypeTag T>
void layernorm_kernel(Ptr<T> x, Ptr<T> w, Ptr<T> b, Ptr<T> y, Ptr<f32> mean_out, Ptr<f32> rstd_out, Int cols,
                      Int stride, Float eps, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto row = program_id(0);
  auto offs = arange(0, BLOCK);
  auto mask = offs < cols;
  auto n = cast<f32>(cols);
  auto c = cast<f32>(load(x + row * stride));
  auto t = where(mask, cast<f32>(load(x + row * stride + offs, mask, 0)) - c, 0.0f);
  auto mean_t = sum(t, 0) / n;
  auto rstd = rsqrt(maximum(sum(t * t, 0) / n - mean_t * mean_t, 0.0f) + eps);
  auto wv = cast<f32>(load(w + offs, mask));
  auto bv = cast<f32>(load(b + offs, mask));
  store(y + row * stride + offs, (t - mean_t) * rstd * wv + bv, mask);
  store(mean_out + row, c + mean_t);
  store(rstd_out + row, rstd);
}

// LayerNorm for rows of any width: three passes over column blocks (mean, variance, output).
template <DTypeTag T>
void layernorm_looped_kernel(Ptr<T> x, Ptr<T> w, Ptr<T> b, Ptr<T> y, Ptr<f32> mean_out, Ptr<f32> rstd_out,
                             Int cols, Int stride, Float eps, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto row = program_id(0);
  auto xrow = x + row * stride;
  auto n = cast<f32>(cols);
  Var acc{zeros<f32>({BLOCK})};
  for (auto c : range(0, cols, BLOCK)) {
    auto idx = c + arange(0, BLOCK);
    acc += cast<f32>(load(xrow + idx, idx < cols, 0));
  }
  auto mean = sum(acc, 0) / n;
  Var acc2{zeros<f32>({BLOCK})};
  for (auto c : range(0, cols, BLOCK)) {
    auto idx = c + arange(0, BLOCK);
    auto mask = idx < cols;
    auto d = where(mask, cast<f32>(load(xrow + idx, mask, 0)) - mean, 0.0f);
    acc2 += d * d;
  }
  auto rstd = rsqrt(sum(acc2, 0) / n + eps);
  for (auto c : range(0, cols, BLOCK)) {
    auto idx = c + arange(0, BLOCK);
    auto mask = idx < cols;
    auto v = cast<f32>(load(xrow + idx, mask, 0));
    auto wv = cast<f32>(load(w + idx, mask));
    auto bv = cast<f32>(load(b + idx, mask));
    store(y + row * stride + idx, (v - mean) * rstd * wv + bv, mask);
  }
  store(mean_out + row, mean);
  store(rstd_out + row, rstd);
}

// LayerNorm as a persistent kernel: program p normalises rows p, p + P, p + 2P, ... (P =
// num_programs, about one per SM) with the row in one tile, and issues the load of its next
// row before normalising the current one, so every program always has a row in flight (the
// one-row-per-program kernel leaves the memory idle while it reduces). Statistics in one pass
// over shifted data, as layernorm_kernel.
template <DTypeTag T>
void layernorm_persistent_kernel(Ptr<T> x, Ptr<T> w, Ptr<T> b, Ptr<T> y, Ptr<f32> mean_out, Ptr<f32> rstd_out,
                                 Int rows, Int cols, Int stride, Float eps, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto p = program_id(0);
  auto P = num_programs(0);
  auto offs = arange(0, BLOCK);
  auto mask = offs < cols;
  auto n = cast<f32>(cols);
  Var cur{load(x + p * stride + offs, mask & (p < rows), 0)};  // the raw row, in T
  Var first{cast<f32>(load(x + p * stride, p < rows, 0))};    // its first element
  for (auto r : range(p, rows, P)) {
    auto next_row = r + P;
    auto next = load(x + next_row * stride + offs, mask & (next_row < rows), 0);
    auto next_first = cast<f32>(load(x + next_row * stride, next_row < rows, 0));
    auto c = Tile(first);
    auto t = where(mask, cast<f32>(Tile(cur)) - c, 0.0f);
    auto mean_t = sum(t, 0) / n;
    auto var = maximum(sum(t * t, 0) / n - mean_t * mean_t, 0.0f);
    auto rstd = rsqrt(var + eps);
    auto wv = cast<f32>(load(w + offs, mask));
    auto bv = cast<f32>(load(b + offs, mask));
    store(y + r * stride + offs, (t - mean_t) * rstd * wv + bv, mask);
    store(mean_out + r, c + mean_t);
    store(rstd_out + r, rstd);
    cur = next;
    first = next_first;
  }
}

// y = x * rstd * w with rstd = 1 / sqrt(mean(x^2) + eps); rstd written per row.
template <DTypeTag T>
void rmsnorm_kernel(Ptr<T> x, Ptr<T> w, Ptr<T> y, Ptr<f32> rstd_out, Int cols, Int stride, Float eps, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto row = program_id(0);
  auto xrow = x + row * stride;
  Var acc{zeros<f32>({BLOCK})};
  for (auto c : range(0, cols, BLOCK)) {
    auto idx = c + arange(0, BLOCK);
    auto v = cast<f32>(load(xrow + idx, idx < cols, 0));
    acc += v * v;
  }
  auto rstd = rsqrt(sum(acc, 0) / cast<f32>(cols) + eps);
  for (auto c : range(0, cols, BLOCK)) {
    auto idx = c + arange(0, BLOCK);
    auto mask = idx < cols;
    auto v = cast<f32>(load(xrow + idx, mask));
    store(y + row * stride + idx, v * rstd * cast<f32>(load(w + idx, mask)), mask);
  }
  store(rstd_out + row, rstd);
}

// Residual add + LayerNorm: h = x + res (written out, the next residual), y = LayerNorm(h).
// h is recomputed from x and res in each pass rather than read back from h_out.
inline void add_layernorm_kernel(Ptr<f32> x, Ptr<f32> res, Ptr<f32> w, Ptr<f32> b, Ptr<f32> h_out, Ptr<f32> y,
                                 Ptr<f32> mean_out, Ptr<f32> rstd_out, Int cols, Int stride, Float eps,
                                 const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto row = program_id(0);
  auto base = row * stride;
  auto n = cast<f32>(cols);
  Var acc{zeros<f32>({BLOCK})};
  for (auto c : range(0, cols, BLOCK)) {
    auto idx = c + arange(0, BLOCK);
    auto mask = idx < cols;
    auto h = load(x + base + idx, mask, 0.0f) + load(res + base + idx, mask, 0.0f);
    store(h_out + base + idx, h, mask);
    acc += h;
  }
  auto mean = sum(acc, 0) / n;
  Var acc2{zeros<f32>({BLOCK})};
  for (auto c : range(0, cols, BLOCK)) {
    auto idx = c + arange(0, BLOCK);
    auto mask = idx < cols;
    auto d = where(mask, load(x + base + idx, mask) + load(res + base + idx, mask) - mean, 0.0f);
    acc2 += d * d;
  }
  auto rstd = rsqrt(sum(acc2, 0) / n + eps);
  for (auto c : range(0, cols, BLOCK)) {
    auto idx = c + arange(0, BLOCK);
    auto mask = idx < cols;
    auto h = load(x + base + idx, mask) + load(res + base + idx, mask);
    store(y + base + idx, (h - mean) * rstd * load(w + idx, mask) + load(b + idx, mask), mask);
  }
  store(mean_out + row, mean);
  store(rstd_out + row, rstd);
}

// ---- cross-entropy ---------------------------------------------------------------------

// loss[row] = logsumexp(logits[row, :]) - logits[row, target[row]], with an online
// logsumexp over column blocks: no probabilities are written.
inline void cross_entropy_kernel(Ptr<f32> logits, Ptr<i32> targets, Ptr<f32> loss, Int cols, Int stride,
                                 const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto row = program_id(0);
  auto xrow = logits + row * stride;
  auto [row_max, row_sum] = online_max_sum(xrow, cols, BLOCK);
  auto target_logit = load(xrow + load(targets + row));
  store(loss + row, log(row_sum) + row_max - target_logit);
}

// ---- pointwise into reduction: sum of squares and MSE ---------------------------------
// Each program reduces its BLOCK elements and adds the partial result into one scalar with
// atomic_add (the output must start at 0).

inline void sum_squares_kernel(Ptr<f32> x, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto v = load(x + offs, offs < n, 0.0f);
  atomic_add(out, sum(v * v, 0));
}

// out += sum((pred - target)^2) / n over this program's block.
inline void mse_kernel(Ptr<f32> pred, Ptr<f32> target, Ptr<f32> out, Int n, Float inv_n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  auto d = load(pred + offs, mask, 0.0f) - load(target + offs, mask, 0.0f);
  atomic_add(out, sum(d * d, 0) * inv_n);
}

// ---- the Kernel objects ------------------------------------------------------------------
// Row-in-one-tile kernels get BLOCK from the sample (the next power of two >= cols).
inline const Meta kRowBlock{{"BLOCK", 1024}};
inline jit::Kernel k_softmax{"softmax", &softmax_kernel, {"x", "out", "cols", "x_stride", "out_stride"}, kRowBlock};
inline jit::Kernel k_softmax_online{"softmax_online", &softmax_online_kernel,
                                    {"x", "out", "cols", "x_stride", "out_stride"}, kRowBlock};
inline jit::Kernel k_softmax_persistent{"softmax_persistent", &softmax_persistent_kernel,
                                        {"x", "out", "rows", "cols", "x_stride", "out_stride"}, kRowBlock};
inline jit::Kernel k_row_max{"row_max", &row_max_kernel, {"x", "row_max", "cols", "x_stride"}, kRowBlock};
inline jit::Kernel k_exp_sum{"exp_sum", &exp_sum_kernel,
                             {"x", "row_max", "e", "row_sum", "cols", "x_stride", "e_stride"}, kRowBlock};
inline jit::Kernel k_row_divide{"row_divide", &row_divide_kernel,
                                {"e", "row_sum", "out", "cols", "e_stride", "out_stride"}, kRowBlock};

inline const std::vector<std::string> kLayerNormParams{"x", "w", "b", "y", "mean", "rstd", "cols", "stride", "eps"};
inline jit::Kernel k_layernorm_f32{"layernorm_f32", &layernorm_kernel<f32>, kLayerNormParams, kRowBlock};
inline jit::Kernel k_layernorm_f16{"layernorm_f16", &layernorm_kernel<f16>, kLayerNormParams, kRowBlock};
inline jit::Kernel k_layernorm_bf16{"layernorm_bf16", &layernorm_kernel<bf16>, kLayerNormParams, kRowBlock};
inline jit::Kernel k_layernorm_looped_f32{"layernorm_looped_f32", &layernorm_looped_kernel<f32>,
                                          kLayerNormParams, kRowBlock};
inline jit::Kernel k_layernorm_looped_f16{"layernorm_looped_f16", &layernorm_looped_kernel<f16>,
                                          kLayerNormParams, kRowBlock};
inline jit::Kernel k_layernorm_looped_bf16{"layernorm_looped_bf16", &layernorm_looped_kernel<bf16>,
                                           kLayerNormParams, kRowBlock};
inline const std::vector<std::string> kLayerNormPersistentParams{"x",    "w",    "b",      "y",  "mean",
                                                                  "rstd", "rows", "cols", "stride", "eps"};
inline jit::Kernel k_layernorm_persistent_f16{"layernorm_persistent_f16", &layernorm_persistent_kernel<f16>,
                                              kLayerNormPersistentParams, kRowBlock};
inline jit::Kernel k_rmsnorm_f32{"rmsnorm_f32", &rmsnorm_kernel<f32>, {"x", "w", "y", "rstd", "cols", "stride", "eps"},
                                 kRowBlock};
inline jit::Kernel k_rmsnorm_f16{"rmsnorm_f16", &rmsnorm_kernel<f16>, {"x", "w", "y", "rstd", "cols", "stride", "eps"},
                                 kRowBlock};
inline jit::Kernel k_add_layernorm{"add_layernorm", &add_layernorm_kernel,
                                   {"x", "res", "w", "b", "h", "y", "mean", "rstd", "cols", "stride", "eps"},
                                   kRowBlock};
inline jit::Kernel k_cross_entropy{"cross_entropy", &cross_entropy_kernel,
                                   {"logits", "targets", "loss", "cols", "stride"}, kRowBlock};
inline jit::Kernel k_sum_squares{"sum_squares", &sum_squares_kernel, {"x", "out", "n"}, Meta{{"BLOCK", 1024}}};
inline jit::Kernel k_mse{"mse", &mse_kernel, {"pred", "target", "out", "n", "inv_n"}, Meta{{"BLOCK", 1024}}};

}  // namespace tessel::samples
