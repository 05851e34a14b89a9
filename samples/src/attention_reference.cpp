// The attention samples' host reference, shapes and RoPE tables (see attention_reference.hpp).
#include "attention_reference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tessel::samples {

double AttentionDims::scale() const { return 1.0 / std::sqrt(static_cast<double>(dim)); }

AttentionDims attention_dims(const RunConfig& c, const jit::Meta& effective, const AttentionDefaults& def) {
  const auto& a = c.attention;
  AttentionDims d;
  d.batch = a.batch > 0 ? a.batch : def.batch;
  d.heads = a.heads > 0 ? a.heads : def.heads;
  d.kv_heads = a.kv_heads > 0 ? a.kv_heads : a.heads > 0 ? a.heads : def.kv_heads;
  if (def.decode) {
    d.seq_q = 1;
    d.seq_k = a.seq_k > 0 ? a.seq_k : c.cols > 0 ? c.cols : def.seq_k;
  } else {
    d.seq_q = a.seq_q > 0 ? a.seq_q : c.rows > 0 ? c.rows : def.seq_q;
    d.seq_k = a.seq_k > 0 ? a.seq_k : c.cols > 0 ? c.cols : d.seq_q;
  }
  d.dim = effective["HEAD_DIM"];
  d.causal = !def.decode && effective["CAUSAL"] != 0;
  // Sizes are the user's input (tessel run --rows/--cols, -D): UserError, exit 1.
  if (d.heads % d.kv_heads != 0)
    throw UserError(fmt::format("attention: {} KV heads do not divide {} query heads", d.kv_heads, d.heads));
  const int64_t largest = std::max(d.q_size(), d.kv_size());
  if (largest > kMaxI32Offset)
    throw UserError(fmt::format("attention: a tensor of {} elements does not fit i32 offsets (at most {}, 2^31 - 1)",
                                largest, kMaxI32Offset));
  return d;
}

std::vector<double> attention_reference(const AttentionDims& d, const std::vector<double>& q,
                                        const std::vector<double>& k, const std::vector<double>& v) {
  std::vector<double> out(static_cast<size_t>(d.q_size()), 0.0), s(static_cast<size_t>(d.seq_k));
  auto at = [](const std::vector<double>& t) { return [&t](int64_t n) { return t[static_cast<size_t>(n)]; }; };
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t h = 0; h < d.heads; ++h)
      for (int64_t i = 0; i < d.seq_q; ++i)
        attention_reference_row(d, at(q), at(k), at(v), b, h, i, s, &out[((b * d.heads + h) * d.seq_q + i) * d.dim]);
  return out;
}

RopeTables rope_tables(int64_t positions, int64_t dim) {
  RopeTables t;
  const int64_t half = dim / 2;
  for (int64_t p = 0; p < positions; ++p)
    for (int64_t j = 0; j < half; ++j) {
      const double angle = static_cast<double>(p) * std::pow(10000.0, -2.0 * static_cast<double>(j) / dim);
      t.cos.push_back(static_cast<float>(std::cos(angle)));
      t.sin.push_back(static_cast<float>(std::sin(angle)));
    }
  return t;
}

std::vector<double> rope_rotate(const std::vector<double>& x, int64_t seq, int64_t dim, const RopeTables& t,
                                double (*round)(double)) {
  const int64_t half = dim / 2;
  std::vector<double> r(x.size());
  for (size_t row = 0; row < x.size() / static_cast<size_t>(dim); ++row) {
    const int64_t pos = static_cast<int64_t>(row) % seq;
    const double* xi = &x[row * dim];
    for (int64_t j = 0; j < half; ++j) {
      const double c = t.cos[pos * half + j], s = t.sin[pos * half + j];
      r[row * dim + j] = round(xi[j] * c - xi[j + half] * s);
      r[row * dim + j + half] = round(xi[j + half] * c + xi[j] * s);
    }
  }
  return r;
}

}  // namespace tessel::samples
