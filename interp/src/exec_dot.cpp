// dot: the reference semantics of the tensor-core matrix multiply-accumulate (see ops.def).
//
// result[m][n] = acc[m][n] + a[m][0]*b[0][n] + a[m][1]*b[1][n] + ... with k ascending; every
// product and every partial sum is rounded to f32 (for i8 operands: wrapping i32). With
// allow_tf32 = 1, each f32 input is first rounded to tf32 like PTX cvt.rna.tf32.f32. fp8
// operands (e4m3 and e5m2, which may mix) follow the f32 rule.
#include <fmt/format.h>

#include <bit>
#include <cstdint>
#include <vector>

#include "machine.hpp"
#include "tessel/interp/float_formats.hpp"

namespace tessel::interp {

namespace {

// The f32 sum of products, one rounding per product and per addition. The product goes
// through a volatile so the compiler cannot contract it with the addition into an FMA.
void dot_f32(const std::vector<float>& a, const std::vector<float>& b, const std::vector<double>& acc,
             std::vector<double>& out, int64_t M, int64_t N, int64_t K) {
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      float s = static_cast<float>(acc[m * N + n]);
      for (int64_t k = 0; k < K; ++k) {
        volatile float p = a[m * K + k] * b[k * N + n];
        s = s + p;
      }
      out[m * N + n] = s;
    }
}

void dot_i8(const std::vector<int64_t>& a, const std::vector<int64_t>& b, const std::vector<int64_t>& acc,
            std::vector<int64_t>& out, int64_t M, int64_t N, int64_t K) {
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      uint32_t s = static_cast<uint32_t>(acc[m * N + n]);  // unsigned: wrapping is defined
      for (int64_t k = 0; k < K; ++k)
        s += static_cast<uint32_t>(static_cast<int32_t>(a[m * K + k]) * static_cast<int32_t>(b[k * N + n]));
      out[m * N + n] = static_cast<int32_t>(s);
    }
}

}  // namespace

void exec_dot(Machine& m, const ir::Op& op) {
  const ir::Type &ta = op.operand(0)->type, &tb = op.operand(1)->type, &tc = op.operand(2)->type;
  if (ta.rank() != 2 || tb.rank() != 2 || tc.rank() != 2 || ta.shape[1] != tb.shape[0] ||
      tc.shape[0] != ta.shape[0] || tc.shape[1] != tb.shape[1] || op.result()->type != tc)
    m.malformed(op, fmt::format("bad dot shapes {} x {} -> {}", ta.str(), tb.str(), tc.str()));
  const int64_t M = ta.shape[0], K = ta.shape[1], N = tb.shape[1];
  const Tile &a = m.in(op, 0), &b = m.in(op, 1), &acc = m.in(op, 2);
  Tile& out = m.out(op.result());
  const ir::Scalar s = ta.dtype.scalar;
  if (s == ir::Scalar::i8 && tc.dtype.scalar == ir::Scalar::i32) return dot_i8(a.i, b.i, acc.i, out.i, M, N, K);
  const bool fp8 = ta.dtype.is_fp8() && tb.dtype.is_fp8();  // e4m3 and e5m2 may mix
  if (!ta.dtype.is_float() || tc.dtype.scalar != ir::Scalar::f32 || (tb.dtype != ta.dtype && !fp8))
    m.malformed(op, fmt::format("unsupported dot dtypes {} x {} -> {}", ta.str(), tb.str(), tc.str()));
  // f16, bf16 and fp8 values are exact in f32, and so is the product of two fp8 values (at most
  // 8 significant bits); f32 values already are f32.
  const bool tf32 = s == ir::Scalar::f32 && m.int_attr(op, "allow_tf32") != 0;
  auto to_f32 = [&](const std::vector<double>& v) {
    std::vector<float> r(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      float x = static_cast<float>(v[i]);
      r[i] = tf32 ? round_to_tf32(x) : x;
    }
    return r;
  };
  dot_f32(to_f32(a.f), to_f32(b.f), acc.f, out.f, M, N, K);
}

}  // namespace tessel::interp
