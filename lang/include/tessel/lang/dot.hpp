// dot: the tile matrix multiply-accumulate that runs on tensor cores (f16, bf16, tf32, i8).
#pragma once
#include "tessel/lang/tile.hpp"

namespace tessel::lang {

// Options of dot. allow_tf32 only matters for f32 operands: true (the default, as in Triton)
// rounds each f32 input to tf32 (10 mantissa bits) and uses the tensor cores; false computes in
// exact fp32 FMA (slower). Write `dot(a, b, acc, DotOptions{.allow_tf32 = false})`.
struct DotOptions {
  bool allow_tf32 = true;
};

// a [M, K] x b [K, N] (+ acc [M, N]) -> [M, N]. Operand dtypes and the accumulator/result dtype:
//   f16 x f16 -> f32, bf16 x bf16 -> f32, f32 x f32 -> f32, i8 x i8 -> i32 (wrapping).
// M, N and K must be powers of two >= 16. Without `acc` the accumulator is zeros. Products
// and sums are f32 (i32); the interpreter adds along k in ascending order, the GPU in its own
// order, so float results agree up to rounding. In a K loop:
//   Var acc{zeros<f32>({BM, BN})};
//   for (auto k : range(0, K, BK)) { ...; acc = dot(a, b, acc); }
Tile dot(const Operand& a, const Operand& b, DotOptions opts = {});
Tile dot(const Operand& a, const Operand& b, const Operand& acc, DotOptions opts = {});

}  // namespace tessel::lang
