// The attention samples' host reference, shapes and RoPE tables (see attention_reference.hpp).
#include "attention_reference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <thread>

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

// The rows (b, h, i) are independent: split into contiguous runs over the host's cores (the GPU
// tests check thousands of rows per config against it).
std::vector<double> attention_reference(const AttentionDims& d, const std::vector<double>& q,
                                        const std::vector<double>& k, const std::vector<double>& v) {
  std::vector<double> out(static_cast<size_t>(d.q_size()), 0.0);
  auto at = [](const std::vector<double>& t) { return [&t](int64_t n) { return t[static_cast<size_t>(n)]; }; };
  const int64_t rows = d.batch * d.heads * d.seq_q;
  auto run = [&](int64_t first, int64_t last) {
    std::vector<double> s(static_cast<size_t>(d.seq_k));
    for (int64_t r = first; r < last; ++r) {
      const int64_t i = r % d.seq_q, bh = r / d.seq_q;
      attention_reference_row(d, at(q), at(k), at(v), bh / d.heads, bh % d.heads, i, s, &out[r * d.dim]);
    }
  };
  // A thread for at least 64 rows x 1024 keys of work.
  const int64_t work = rows * std::max<int64_t>(d.seq_k, 1) * d.dim;
  const int64_t threads = std::clamp<int64_t>(std::min<int64_t>(std::thread::hardware_concurrency(), work >> 23), 1, 16);
  if (threads == 1) {
    run(0, rows);
    return out;
  }
  std::vector<std::thread> pool;
  for (int64_t t = 0; t < threads; ++t) pool.emplace_back(run, rows * t / threads, rows * (t + 1) / threads);
  for (std::thread& t : pool) t.join();
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
