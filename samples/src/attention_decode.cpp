// The split-KV decode sample: attention_decode_partial over KV chunks, then
// attention_decode_combine, checked against the host reference with one query token.
#include <fmt/format.h>

#include <algorithm>

#include "attention_reference.hpp"
#include "tessel/samples/attention_kernels.hpp"

namespace tessel::samples {
namespace {
using jit::Array;
using jit::Grid;

const AttentionDefaults kDecodeDefaults{2, 4, 2, 1, 300, true};

int64_t next_pow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

// How many chunks the keys are cut into, and their length (a multiple of BLOCK_N): as asked,
// else enough programs for about two per multiprocessor, never an empty chunk.
struct DecodeSplit {
  int64_t splits, len;
};
DecodeSplit decode_split(const AttentionDims& d, int64_t block_n, int64_t asked) {
  const int64_t blocks = jit::cdiv(d.seq_k, block_n);
  const int64_t programs = d.batch * d.kv_heads;
  const int64_t sms = jit::Device::current().multiprocessors();
  int64_t splits = asked > 0 ? asked : std::max<int64_t>(1, (2 * sms + programs - 1) / programs);
  splits = std::clamp<int64_t>(splits, 1, blocks);
  const int64_t len = jit::cdiv(jit::cdiv(d.seq_k, splits), block_n) * block_n;
  return {jit::cdiv(d.seq_k, len), len};
}
}  // namespace

RunResult run_attention_decode(const RunConfig& c) {
  using H = Host<lang::f16>;
  const jit::Meta eff = k_attention_decode_partial.effective_meta(c.meta);
  const AttentionDims d = attention_dims(c, eff, kDecodeDefaults);
  if (d.group() > eff["BLOCK_H"])
    throw UserError(fmt::format("attention_decode: {} query heads share each KV head, more than BLOCK_H = {} rows",
                                d.group(), eff["BLOCK_H"]));
  const DecodeSplit sp = decode_split(d, eff["BLOCK_N"], c.splits);
  auto q = random_tensor<lang::f16>(d.q_size(), c.seed, -2.0f, 2.0f);
  auto k = random_tensor<lang::f16>(d.kv_size(), c.seed + 1, -2.0f, 2.0f);
  auto v = random_tensor<lang::f16>(d.kv_size(), c.seed + 2, -1.0f, 1.0f);
  Array<H::type> qd(q.bits), kd(k.bits), vd(v.bits);
  const size_t rows = static_cast<size_t>(d.batch * d.heads * sp.splits);
  Array<float> pm(rows), pl(rows), pacc(rows * static_cast<size_t>(d.dim));
  Array<H::type> out(static_cast<size_t>(d.q_size()));
  for (auto* a : {&pm, &pl, &pacc}) a->poison();  // NaN: a partial never written spoils the result
  out.poison();
  const int64_t skb = d.kv_heads * d.seq_k * d.dim, skh = d.seq_k * d.dim;
  k_attention_decode_partial.launch(Grid{static_cast<uint32_t>(sp.splits), static_cast<uint32_t>(d.batch * d.kv_heads)},
                                    c.meta, c.options, qd, kd, vd, pm, pl, pacc, d.seq_k, d.heads, d.kv_heads, sp.len,
                                    sp.splits, d.heads * d.dim, d.dim, skb, skh, d.dim, skb, skh, d.dim,
                                    static_cast<float>(d.scale()));
  // BLOCK_S at least 16: no 1-element tiles for one chunk (the masked slots weigh 0)
  const jit::Meta combine{{"BLOCK_S", std::max<int64_t>(16, next_pow2(sp.splits))}, {"HEAD_DIM", d.dim}};
  k_attention_decode_combine(Grid{static_cast<uint32_t>(d.batch * d.heads)}, combine, pm, pl, pacc, out,
                                    d.heads, sp.splits, d.heads * d.dim, d.dim);
  std::vector<float> got;
  for (H::type b : out.download()) got.push_back(static_cast<float>(H::decode(b)));
  RunResult r = compare(got, attention_reference(d, q.values, k.values, v.values),
                        attention_tolerance<lang::f16>(), attention_tolerance<lang::f16>());
  r.launches = 2;
  return r;
}

}  // namespace tessel::samples
