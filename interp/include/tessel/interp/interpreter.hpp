// The CPU reference interpreter: runs a tile-IR kernel over host memory, one program at a time.
//
// It is the reference the GPU backend is tested against and a debugging mode for users, so
// every semantic choice below is the contract the GPU backend implements too (except where
// a point says "interpreter only").
//
// Values. Each SSA value of a program instance is an array of numel elements in row-major
// order (a scalar has one). Elements live in 64-bit slots:
//  - integers as sign-extended int64, wrapped to the dtype's width after every op (two's
//    complement for i8/i16/i32/i64; i1 is always 0 or 1);
//  - floats as double, rounded to the dtype after every op (f32 through float; f16 and bf16
//    round-to-nearest-even, f16 with subnormals, infinities and NaN; see float_formats.hpp);
//  - pointers as 64-bit host addresses.
// Broadcasting is explicit in the IR (splat, broadcast, expand_dims); elementwise ops take
// operands of one shape.
//
// Ops (ops.def lists them):
//  - constant: a scalar, or a tile filled with one value. arange {start, end}: start..end-1.
//    program_id / num_programs {axis}: i32 scalars.
//  - cast: int->int wraps; int->float rounds to nearest even; float->int truncates toward
//    zero and saturates to the target range, NaN -> 0 (PTX cvt.rzi.sat); float->float
//    rounds to nearest even; anything->i1 is (x != 0), so NaN -> 1; i1->int/float is 0 or 1;
//    ptr<->i64 and ptr->ptr reinterpret the address.
//  - add sub mul: wrap for ints, IEEE for floats. div rem: ints truncate toward zero
//    (C++ / and %); an integer division (or remainder) by zero gives 0 on every device
//    (masked-off lanes may legitimately hold junk divisors, so it is not an error) and
//    INT_MIN / -1 wraps to INT_MIN with remainder 0. Float rem is fmod (sign of the dividend)
//    here; the GPU computes a - trunc(a / b) * b, which can differ by its rounding (docs/dsl.md).
//  - min max: for floats, NaN if either operand is NaN; min(-0, +0) may be either zero.
//  - and or xor: bitwise. shl: a shift amount outside [0, width) gives 0. shr is arithmetic;
//    a shift amount outside [0, width) fills with the sign bit.
//  - cmp_*: i1 results; ints compare signed (i1 as 0 < 1), pointers as unsigned addresses,
//    floats IEEE ordered (every comparison with NaN is false except cmp_ne).
//  - neg abs (abs(INT_MIN) wraps to INT_MIN); not: bitwise for ints, logical for i1.
//  - exp exp2 log log2 sqrt rsqrt sin cos tanh sigmoid (1/(1+exp(-x))) erf floor ceil and fma
//    are computed in double and then rounded to the dtype (f32 fma is exactly fused; f16/bf16
//    fma rounds twice, through double, which differs from a single rounding only in rare
//    ties). GPU math functions may differ from these by a few ulp.
//  - select %cond, %a, %b: per element. addptr %p, %off: p + off * sizeof(pointee).
//  - load %ptr [, %mask [, %other]]: masked-off elements take `other`, or 0 without one; every
//    other element must lie wholly inside one MemRegion and be aligned to its size. i1 is one
//    byte in memory; a nonzero byte loads as 1.
//  - store %ptr, %value [, %mask]: same checks, and the region must be writable. Masked-off
//    elements are not written. Elements of one store are written in element order (the last
//    of several elements to one address wins here; on the GPU that is unordered).
//  - rand / randn %seed, %offset: the Philox stream of ir/philox.hpp exactly; the seed is the
//    sign-extended integer, each offset is taken as int32.
//  - reduce_sum / reduce_max / reduce_min {axis}: the dimension `axis` is dropped (rank 1 ->
//    scalar); same dtype as the operand, rounding (floats: an f16 sum accumulates in f16) or
//    wrapping (ints) after every combine. Each row is combined in one fixed pairwise tree:
//    (x0+x1), (x2+x3), ..., then adjacent pairs of those, left operand the lower index. The
//    GPU's order differs, so float sums agree only to rounding. max/min propagate NaN.
//  - argmax / argmin {axis}: i32 index along the axis of the max / min; ties give the smallest
//    index; NaN is larger than every number for argmax and smaller for argmin, so the first
//    NaN wins.
//  - reduce %x {axis} { ^(%acc, %elem): ... yield %c }: the body combines two scalars of x's
//    dtype, in the same pairwise tree as reduce_sum (acc = the lower-index side). The combine
//    should be associative and commutative; the GPU uses another tree.
//  - cumsum {axis}: inclusive prefix sum, left to right, rounding/wrapping at each step (the
//    GPU's scan order differs, so float results agree only to rounding).
//  - reshape: the same row-major elements with another shape. trans: 2-D transpose.
//  - atomic_add / atomic_max %ptr, %value [, %mask]: per element, in element order, a
//    read-modify-write of memory checked like a store (bounds, alignment, writable); the
//    result is the old values (0 where masked off). Duplicate addresses within one tile each
//    apply. Floats: add rounds once to the element type; max propagates NaN (the GPU's f32
//    atomic_max with NaN is unspecified). Ints wrap (add) or compare signed (max).
//  - dot %a, %b, %acc {allow_tf32}: result[m][n] = acc[m][n] + a[m][0]*b[0][n] + a[m][1]*b[1][n]
//    + ..., k ascending, each product and each partial sum rounded to f32 (f16/bf16/f32
//    operands; with allow_tf32 = 1, f32 operands are first rounded to tf32 like PTX
//    cvt.rna.tf32.f32: round_to_tf32 in float_formats.hpp), or wrapping i32 for i8 operands.
//    The GPU's tensor cores sum in their own order: compare float results with a tolerance.
//  - for %lo, %hi, %step, %init...: iv runs from lo while iv < hi, by step; step <= 0 is an
//    InterpError. The body's args are (iv, carried...); its yield gives the next carried
//    values; the loop's results are the final carried values (the inits if it never runs).
//
// Programs run sequentially, x fastest (z outermost, then y, then x). Stores from different
// programs to one address: the last program wins in the interpreter (interpreter only: the
// GPU runs programs concurrently and in no order, so kernels must not rely on it). Atomics
// from different programs all apply; only the order of float additions (hence rounding) and
// the old values returned depend on the program order.
//
// Errors. Runtime mistakes (bad arguments, grid, out-of-bounds, misaligned or read-only
// accesses, non-positive loop steps) throw InterpError, whose message names the op, its
// source line and the program, e.g.
//   interpreter: op 'load' at kernel.cpp:42 in program (3,0,0): element 17 reads 4 bytes at
//   0x7f00deadbeef which is outside every buffer (mask did not cover it)
// IR the interpreter cannot make sense of (operand shapes or types that break an op's rule)
// throws ir's VerifyError; run ir::verify first for the full diagnosis.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <span>

#include "tessel/ir/ir.hpp"

namespace tessel::interp {

// The number of program instances along each axis. Limits are the GPU's: x < 2^31,
// y and z <= 65535. A zero extent runs no program.
struct Grid {
  int64_t x = 1, y = 1, z = 1;
};

// One kernel argument: pointers are host addresses; ints and floats are passed by value.
struct ArgValue {
  enum Kind { Int, Float, Pointer } kind = Int;
  int64_t i = 0;
  double f = 0;
  uint64_t addr = 0;

  static ArgValue integer(int64_t v) { return ArgValue{Int, v, 0, 0}; }
  static ArgValue floating(double v) { return ArgValue{Float, 0, v, 0}; }
  static ArgValue pointer(const void* p) {
    return ArgValue{Pointer, 0, 0, static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p))};
  }
};

// Host memory the kernel may touch: every unmasked load or store must fall inside one region.
struct MemRegion {
  const void* base = nullptr;
  size_t bytes = 0;
  bool writable = true;
};

// A kernel misbehaving at run time (or called wrongly); the message says where and why.
class InterpError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Runs `f` once per program of `grid`. Arguments must match the kernel's parameters in
// number and kind: Pointer for ptr<...>, Int for integer (range-checked against the
// parameter's width), Float for f16/bf16/f32/f64 (rounded to it).
void run(const ir::Function& f, Grid grid, std::span<const ArgValue> args,
         std::span<const MemRegion> memory);

}  // namespace tessel::interp
