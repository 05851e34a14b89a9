// The fuzzer's tolerance model: for every value of a generated program, whether the GPU must
// reproduce the interpreter bit for bit, and otherwise a bound on |gpu - interpreter|.
//
// Each value carries an Info, computed op by op from its operands' (transfer()):
//  - exact: the GPU computes the same bits as the interpreter (up to the sign of a zero that
//    float min/max may pick either way, tracked as `zsign`). Exact are: every integer op, loads,
//    casts, comparisons, select, min/max, floor/ceil, and the correctly rounded float ops add,
//    sub, mul, div, sqrt, f32/f64 fma, on exact operands. (f16/bf16 compute in f32 on the GPU
//    and in double here; both round once to the format, and for +,-,*,/,sqrt a result rounded
//    to f32 first rounds to f16/bf16 the same way, since 24 >= 2p+2 bits.) Float rem is exact
//    only where the GPU's a - trunc(a / b) * b is: the generator divides by +-1, 2, 4, 8 or by
//    the dividend itself (elsewhere it rounds, unlike the interpreter's fmod: reported, see
//    lowering/src/lower_elementwise.cpp). reduce_max/min, argmax/argmin and integer
//    cumsum/reduce_sum are exact too.
//  - inexact: an absolute bound `err` on the difference. Sources of difference, per op:
//      exp      f32 GPU: ex2.approx(x*log2e): relative 2^-21 + |x| 2^-23 (the product's rounding);
//      exp2     relative 2^-21;
//      log/log2 absolute 2^-20 * max(1, |result|) (lg2.approx: 2^-22.6 absolute near 1);
//      rsqrt    relative 2^-21 (rsqrt.approx); f64: 1/sqrt, 2 ulp;
//      sin/cos  absolute 2^-20 + |x| 2^-22 on |x| <= 64 (sin.approx/cos.approx: their range
//               reduction loses about |x| 2^-24.8, seen on the H100: 2.2e-6 at x = 64);
//      tanh, sigmoid, erf: relative 2^-20 + absolute 2^-21 (fast_math.hpp: 1.5 ulp + ex2.approx),
//               sigmoid also + |x| 2^-23 (its exp);
//      f64 exp..sigmoid, erf: relative 2^-40 (f64_math.hpp series; erf: libdevice's __nv_erf);
//      f16/bf16: the f32 result's bound + 1 ulp of the format (the two sides round different
//               values);
//      f16/bf16 fma: 1 ulp (f32 fma then a second rounding on the GPU, double here);
//      reduce_sum / cumsum / generic reduce with add (n > 2 elements): the two sides add in
//               different orders: (d_interp + d_gpu) * 2u * n * max|x| with d_interp = log2 n
//               (pairwise), d_gpu = min(n, 128) + log2 n, u = 2^-p (a first-order bound);
//    and each op propagates its operands' bounds through its Lipschitz constant over the
//    operands' ranges, which hold both sides' values (add: e_a + e_b, mul: |b| e_a + |a| e_b +
//    e_a e_b, div: e_a / min|d| + max|a| e_d / min|d|^2, exp: exp(hi) e, log: e / min x, sqrt:
//    min(sqrt(e), e / (2 sqrt(min x))), ...), plus one ulp of the result at its largest
//    magnitude (two correctly rounded results of values that differ). A bound never exceeds
//    the width of the value's range (both sides lie in it), so a clamp ends any growth; float
//    atomic_add to a unique address adds one rounding of the sum.
//  - lo/hi: a range holding the value on both sides (floats may reach +-inf); `nan`: may be NaN.
//    NaN is tracked apart from the range so that the guard select(x != x, 0, x) followed by a
//    clamp min(max(x, -B), B) provably gives a finite value.
// Ops whose result jumps (comparisons, float->int casts, floor/ceil, argmax/argmin, float rem)
// take exact operands only, and inexact values must stay finite and away from overflow: the
// generator inserts guards (NaN -> 0 by select, clamps by min/max, abs(x)+1 before log, ...)
// and transfer() throws std::logic_error when a generator bug breaks a rule, so a tolerance
// is never silently wrong. Integers (and i1) are always exact.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>

#include "tessel/ir/ir.hpp"

namespace fuzz {

struct Info {
  bool exact = true;   // the same bits on both sides (floats: up to zsign)
  bool nan = false;    // floats: may be NaN
  bool zsign = false;  // floats: may be a zero whose sign the two sides pick differently
  double lo = 0, hi = 0;  // the value's range on both sides (ints as doubles; floats may be +-inf)
  double err = 0;      // inexact floats: |gpu - interpreter| <= err
  bool nonzero = false;  // integers: never 0 (a divisor made by `y | 1`)

  double mag() const { return std::max(std::fabs(lo), std::fabs(hi)); }
  bool finite() const { return !nan && std::isfinite(lo) && std::isfinite(hi); }
};

// Float format facts: precision p (bits with the implicit one), largest finite value, smallest
// subnormal.
struct Format {
  int p;
  double max;
  double min_sub;
};
Format format_of(tessel::ir::Scalar s);
// One ulp of `s` at magnitude m (an upper bound): 2^(1-p) m + the smallest subnormal.
double ulp_at(tessel::ir::Scalar s, double m);
// The range of an integer type, as doubles.
double int_min(tessel::ir::Scalar s);
double int_max(tessel::ir::Scalar s);

// The Info of a constant, of data with a known range, of an unknown value of a type.
Info exact_range(double lo, double hi);
Info unknown_of(tessel::ir::DType d);  // ints: the type's range; floats: anything, NaN included
Info float_range(double lo, double hi, bool nan);  // exact floats in [lo, hi] (+-inf allowed)
// The Info covering both a and b (either may be the value).
Info join(const Info& a, const Info& b);

// What transfer() needs beyond the op's operands.
struct Context {
  int64_t grid[3] = {1, 1, 1};
  // The Info of what a load reads (its memory), keyed by the load op; also atomics' old values.
  std::function<Info(const tessel::ir::Op&)> memory;
};

// The Info of op's result `index` from its operands' Infos (not for `for`: the generator
// iterates the body). Throws std::logic_error("fuzz tolerance model: ...") where the operands
// break a rule above (an inexact value into an op that jumps, an unguarded domain).
Info transfer(const tessel::ir::Op& op, std::span<const Info> in, const Context& ctx);

// Largest finite magnitude an inexact value of `s` may have before op `k` (the clamp the
// generator applies): keeps results finite and the Lipschitz bounds meaningful.
double safe_bound(tessel::ir::OpKind k, tessel::ir::Scalar s, int64_t n = 1);

// True for ops whose result jumps where the operand moves a little (exact operands only).
bool needs_exact_operands(const tessel::ir::Op& op);

}  // namespace fuzz
