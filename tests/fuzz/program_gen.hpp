// Random, well-typed tile programs from a seed: the kernel (tile IR), its launch and its
// buffers, and for every written buffer how closely the GPU must match the interpreter.
//
// A program is a 1-D kernel over n elements (tiles [B], offs = pid * B + arange(B), masks
// offs < n) or a 2-D one over an R x C index space (tiles [BM, BN] of rows and columns, masks
// rows < R & cols < C), with odd sizes so masks matter and grids of several programs. It
// loads inputs of random dtypes through contiguous, strided, reversed, transposed, broadcast,
// per-program scalar and gathered accesses (masked, with and without `other`), grows a random
// DAG of elementwise, bitwise, comparison, select, math, cast, broadcast, reduction, scan,
// reshape/trans ops and runtime `for` loops with carried values, and writes some results
// through masked stores (to the index space, transposed, or to per-program slabs) and
// atomics with unique targets (or integer atomics, whose result does not depend on order).
// Every value is well defined by interp/include/tessel/interp/interpreter.hpp (integer
// divisors are y | 1, float domains are guarded) and error_model.hpp bounds every float.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessel/interp/interpreter.hpp"
#include "tessel/ir/ir.hpp"

namespace fuzz {

struct Buffer {
  std::string name;              // the kernel parameter that points at it
  tessel::ir::Scalar elem = tessel::ir::Scalar::i32;
  size_t count = 0;              // elements (>= 1)
  bool written = false;          // the kernel stores to it or applies atomics to it
  std::vector<std::byte> init;   // its contents before the launch
  std::string fill;              // how `init` was made, for the reproduction
  // Written buffers: floats must match exactly (== , NaN matching NaN) when `exact`, else
  // within abs_err; integers always byte for byte.
  bool exact = true;
  double abs_err = 0;
  size_t bytes() const { return count * static_cast<size_t>(tessel::ir::DType{elem}.bytes()); }
};

// One kernel argument: a buffer (by index into Program::buffers) or a scalar value.
struct Arg {
  enum Kind { Buf, Int, Float } kind = Int;
  size_t buffer = 0;
  int64_t i = 0;
  double f = 0;
};

struct Program {
  uint64_t seed = 0;
  std::unique_ptr<tessel::ir::Function> fn;
  tessel::interp::Grid grid;
  int num_warps = 4;
  int programs_per_cta = 1;
  std::vector<Buffer> buffers;
  std::vector<Arg> args;  // one per kernel parameter, in order
  std::string shape;      // one line: "1-D n=1000 B=64" / "2-D 17x33 tile 8x16", op count
  // The launch: grid, warps, and every argument (buffers with their dtype, size and fill).
  std::string launch() const;
};

// The program of `seed` (deterministic: the same seed gives the same program and data).
// Throws std::logic_error when the generator breaks its own rules (a fuzzer bug).
Program generate(uint64_t seed);

// Host memory for one run of a program: a fresh copy of every buffer (aligned to 64 bytes) as
// the interpreter's memory regions, and the arguments pointing into them.
class HostRun {
 public:
  explicit HostRun(const Program& p);
  std::vector<tessel::interp::MemRegion> mem;
  std::vector<tessel::interp::ArgValue> args;
  const std::byte* data(size_t buffer) const { return static_cast<const std::byte*>(mem[buffer].base); }

 private:
  struct Free {
    void operator()(std::byte* p) const;
  };
  std::vector<std::unique_ptr<std::byte, Free>> storage_;
};

}  // namespace fuzz
