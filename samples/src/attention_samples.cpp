// The attention samples: attention forward (f16, bf16; causal or not; grouped-query), the same
// with RoPE applied to Q and K inside the kernel, and the split-KV decode, each checked against
// a double-precision host reference (attention_reference.hpp).
//
// Sizes (SampleShape::Attention): RunConfig::attention, else seq_q = rows, seq_k = cols (else
// seq_q); the head dim and the mask are the meta-parameters HEAD_DIM and CAUSAL (-D HEAD_DIM=128
// -D CAUSAL=0); num_warps / num_stages from RunConfig::options. Defaults suit the interpreter:
// batch 1, 2 heads, 100 queries and keys, head dim 64, causal. Q and O are stored as [batch,
// seq, heads, dim] (token-major, so their head and sequence strides differ from K's and V's),
// K and V as [batch, kv_heads, seq, dim].
#include <fmt/format.h>

#include <cmath>

#include "attention_reference.hpp"
#include "tessel/samples/attention_kernels.hpp"

namespace tessel::samples {
namespace {
using jit::Array;
using jit::Grid;

const AttentionDefaults kForwardDefaults{1, 2, 2, 100, 100};

// Index of element (b, h, s, x) of a [batch, seq, heads, dim] tensor.
int64_t bshd(const AttentionDims& d, int64_t b, int64_t h, int64_t s, int64_t x) {
  return ((b * d.seq_q + s) * d.heads + h) * d.dim + x;
}

// Q's canonical [batch, heads, seq_q, dim] values stored token-major ([batch, seq_q, heads, dim]).
template <class T>
std::vector<typename Host<T>::type> to_bshd(const AttentionDims& d, const HostTensor<T>& q) {
  std::vector<typename Host<T>::type> bits(q.bits.size());
  int64_t i = 0;
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t h = 0; h < d.heads; ++h)
      for (int64_t s = 0; s < d.seq_q; ++s)
        for (int64_t x = 0; x < d.dim; ++x) bits[bshd(d, b, h, s, x)] = q.bits[i++];
  return bits;
}

// The token-major output compared with the canonical reference, element by element.
template <class T>
RunResult check_bshd(const AttentionDims& d, const std::vector<typename Host<T>::type>& out,
                     const std::vector<double>& ref, int launches) {
  std::vector<float> got;
  got.reserve(ref.size());
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t h = 0; h < d.heads; ++h)
      for (int64_t s = 0; s < d.seq_q; ++s)
        for (int64_t x = 0; x < d.dim; ++x)
          got.push_back(static_cast<float>(Host<T>::decode(out[bshd(d, b, h, s, x)])));
  RunResult r = compare(got, ref, attention_tolerance<T>(), attention_tolerance<T>());
  r.launches = launches;
  return r;
}

// What T holds of v (the kernel rounds the rotated Q and K to T for the dots).
template <class T>
double round_like(double v) {
  return Host<T>::decode(Host<T>::encode(v));
}

// attention_fwd and attention_fwd_bf16 (Rope = false), attention_fwd_rope (Rope = true).
template <class T, bool Rope, class K>
RunResult run_forward(const RunConfig& c, K& kernel) {
  using H = typename Host<T>::type;
  const AttentionDims d = attention_dims(c, kernel.effective_meta(c.meta), kForwardDefaults);
  auto q = random_tensor<T>(d.q_size(), c.seed, -2.0f, 2.0f);
  auto k = random_tensor<T>(d.kv_size(), c.seed + 1, -2.0f, 2.0f);
  auto v = random_tensor<T>(d.kv_size(), c.seed + 2, -1.0f, 1.0f);
  Array<H> qd(to_bshd(d, q)), kd(k.bits), vd(v.bits);
  Array<H> out(static_cast<size_t>(d.q_size()));
  out.poison();
  const jit::Meta eff = kernel.effective_meta(c.meta);
  const Grid grid = attention_fwd_grid(eff, d.seq_q, d.batch * d.heads);
  // strides: Q and O token-major, K and V head-major
  const int64_t sqb = d.seq_q * d.heads * d.dim, sqh = d.dim, sqs = d.heads * d.dim;
  const int64_t skb = d.kv_heads * d.seq_k * d.dim, skh = d.seq_k * d.dim, sks = d.dim;
  const float scale = static_cast<float>(d.scale());
  std::vector<double> qv = q.values, kv = k.values;
  if constexpr (Rope) {
    const RopeTables t = rope_tables(std::max(d.seq_q, d.seq_k), d.dim);
    Array<float> cd(t.cos), sd(t.sin);
    kernel.launch(grid, c.meta, c.options, qd, kd, vd, out, cd, sd, d.seq_q, d.seq_k, d.heads, d.kv_heads, sqb, sqh,
                  sqs, skb, skh, sks, skb, skh, sks, sqb, sqh, sqs, scale);
    qv = rope_rotate(qv, d.seq_q, d.dim, t, round_like<T>);
    kv = rope_rotate(kv, d.seq_k, d.dim, t, round_like<T>);
  } else {
    kernel.launch(grid, c.meta, c.options, qd, kd, vd, out, d.seq_q, d.seq_k, d.heads, d.kv_heads, sqb, sqh, sqs, skb,
                  skh, sks, skb, skh, sks, sqb, sqh, sqs, scale);
  }
  return check_bshd<T>(d, out.download(), attention_reference(d, qv, kv, v.values), 1);
}

}  // namespace

// attention_decode.cpp
RunResult run_attention_decode(const RunConfig& c);

std::vector<Sample> attention_samples() {
  using S = SampleShape;
  return {
      {"attention_fwd",
       "attention forward, f16: O = softmax(Q K^T / sqrt(d)) V; seq_q = rows, seq_k = cols, -D CAUSAL=0|1, "
       "-D HEAD_DIM=64|128, grouped-query by RunConfig::attention",
       {"attention_fwd"}, [](const RunConfig& c) { return run_forward<lang::f16, false>(c, k_attention_fwd); },
       S::Attention},
      {"attention_fwd_bf16", "attention forward, bf16 (sizes as attention_fwd)", {"attention_fwd_bf16"},
       [](const RunConfig& c) { return run_forward<lang::bf16, false>(c, k_attention_fwd_bf16); }, S::Attention},
      {"attention_fwd_rope",
       "attention forward, f16, with rotate-half RoPE applied to Q and K in the kernel from f32 cos/sin tables "
       "(sizes as attention_fwd)",
       {"attention_fwd_rope"}, [](const RunConfig& c) { return run_forward<lang::f16, true>(c, k_attention_fwd_rope); },
       S::Attention},
      {"attention_decode",
       "split-KV decode, f16: one query per (batch, head) against seq_k = cols keys (default 300; batch 2, 4 heads, "
       "2 KV heads, -D HEAD_DIM=128|64), partials per KV chunk, then a combining kernel",
       {"attention_decode_partial", "attention_decode_combine"}, run_attention_decode, S::Attention},
  };
}

void register_attention_kernels(jit::Registry& r) {
  r.add(jit::entry_of(k_attention_fwd, "O = softmax(Q K^T * scale) V, f16, causal by CAUSAL, grouped-query"));
  r.add(jit::entry_of(k_attention_fwd_bf16, "O = softmax(Q K^T * scale) V, bf16, causal by CAUSAL, grouped-query"));
  r.add(jit::entry_of(k_attention_fwd_rope, "attention forward, f16, rotate-half RoPE on Q and K from cos/sin tables"));
  r.add(jit::entry_of(k_attention_decode_partial,
                      "split-KV decode: one query per head, partial (max, sum, acc) per KV chunk, f16"));
  r.add(jit::entry_of(k_attention_decode_combine, "split-KV decode: combines the partials into O, f16"));
}

}  // namespace tessel::samples
