// The attention samples' shapes, random inputs and double-precision host reference (plain
// loops: scores, max-subtracted softmax, weighted sum), shared by the forward, RoPE and decode
// samples.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "host_dtype.hpp"
#include "tessel/samples/sample.hpp"

namespace tessel::samples {

// One attention problem: Q [batch, heads, seq_q, dim], K and V [batch, kv_heads, seq_k, dim].
struct AttentionDims {
  int64_t batch = 1, heads = 1, kv_heads = 1, seq_q = 1, seq_k = 1, dim = 64;
  bool causal = false;
  int64_t q_size() const { return batch * heads * seq_q * dim; }
  int64_t kv_size() const { return batch * kv_heads * seq_k * dim; }
  int64_t group() const { return heads / kv_heads; }
  double scale() const;  // 1 / sqrt(dim)
};

// The problem a RunConfig asks for (RunConfig::attention, rows, cols; HEAD_DIM and CAUSAL from
// the effective meta-parameters), over the sample's defaults. UserError for sizes below 1,
// kv_heads not dividing heads, or a tensor past i32 offsets.
struct AttentionDefaults {
  int64_t batch, heads, kv_heads, seq_q, seq_k;
  bool decode = false;  // one query token: seq_q is 1, seq_k = attention.seq_k, else cols, else the default
};
AttentionDims attention_dims(const RunConfig& c, const jit::Meta& effective, const AttentionDefaults& d);

// Random values stored as T (`bits`) and the values T holds (`values`), in [lo, hi).
template <class T>
struct HostTensor {
  std::vector<typename Host<T>::type> bits;
  std::vector<double> values;
};
template <class T>
HostTensor<T> random_tensor(int64_t n, uint64_t seed, float lo, float hi) {
  HostTensor<T> t;
  t.bits.reserve(static_cast<size_t>(n));
  t.values.reserve(static_cast<size_t>(n));
  for (float f : random_floats(static_cast<size_t>(n), seed, lo, hi)) {
    t.bits.push_back(Host<T>::encode(f));
    t.values.push_back(Host<T>::decode(t.bits.back()));
  }
  return t;
}

// O [batch, heads, seq_q, dim] from q [batch, heads, seq_q, dim] and k, v [batch, kv_heads,
// seq_k, dim] (all row-major), in double: query head h reads KV head h / group; with `causal`,
// key j is visible to query i iff j <= i.
std::vector<double> attention_reference(const AttentionDims& d, const std::vector<double>& q,
                                        const std::vector<double>& k, const std::vector<double>& v);

// One output row of attention_reference: query i of head h in batch b, written to out[0, dim).
// q(n), k(n), v(n): the value at flat index n of those tensors (stored values of any type);
// `scores` is scratch of at least seq_k doubles.
template <class Q, class K, class V>
void attention_reference_row(const AttentionDims& d, const Q& q, const K& k, const V& v, int64_t b, int64_t h,
                             int64_t i, std::vector<double>& scores, double* out) {
  const int64_t D = d.dim, kv0 = (b * d.kv_heads + h / d.group()) * d.seq_k * D;
  const int64_t q0 = ((b * d.heads + h) * d.seq_q + i) * D;
  const int64_t visible = d.causal ? std::min(i + 1, d.seq_k) : d.seq_k;
  double mx = -INFINITY, total = 0;
  for (int64_t j = 0; j < visible; ++j) {
    double dot = 0;
    for (int64_t x = 0; x < D; ++x) dot += q(q0 + x) * k(kv0 + j * D + x);
    scores[static_cast<size_t>(j)] = dot * d.scale();
    mx = std::max(mx, scores[static_cast<size_t>(j)]);
  }
  for (int64_t j = 0; j < visible; ++j) total += scores[static_cast<size_t>(j)] = std::exp(scores[static_cast<size_t>(j)] - mx);
  for (int64_t x = 0; x < D; ++x) out[x] = 0;
  for (int64_t j = 0; j < visible; ++j)
    for (int64_t x = 0; x < D; ++x) out[x] += scores[static_cast<size_t>(j)] / total * v(kv0 + j * D + x);
}

// cos and sin tables [positions, dim / 2] (f32, row-major) of the standard RoPE angles
// position * 10000^(-2j / dim).
struct RopeTables {
  std::vector<float> cos, sin;
};
RopeTables rope_tables(int64_t positions, int64_t dim);

// x [rows, seq, dim] (row-major) rotated in the rotate-half convention by the tables (position
// = the seq index): x'[d] = x[d] cos - x[d + dim/2] sin, x'[d + dim/2] = x[d + dim/2] cos + x[d] sin,
// with j = d mod dim/2. `round` then maps each value to what the kernel's storage type holds.
std::vector<double> rope_rotate(const std::vector<double>& x, int64_t seq, int64_t dim, const RopeTables& t,
                                double (*round)(double));

// Error bounds of an attention output stored as T: P and the output are rounded to T, so the
// error is a few units of T's rounding relative to sum_j p_j |v_j| <= max |v| = 1.
template <class T>
constexpr double attention_tolerance() {
  return std::is_same_v<T, lang::bf16> ? 1e-2 : 2e-3;
}

}  // namespace tessel::samples
