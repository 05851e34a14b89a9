// The interpreter's state for one run: value slots, the current program, memory, error reporting.
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tessel/interp/interpreter.hpp"
#include "tessel/ir/ir.hpp"

namespace tessel::interp {

// The elements of one SSA value in the current program. Floats use `f`; integers and
// pointers use `i` (pointers as the bit pattern of their uint64 address). Only one is sized.
struct Tile {
  std::vector<int64_t> i;
  std::vector<double> f;
};

// Wraps v to a signed integer of `width` bits, sign-extended to int64; i1 keeps only bit 0.
inline int64_t wrap_int(int64_t v, int width) {
  if (width >= 64) return v;
  if (width == 1) return v & 1;
  unsigned sh = 64u - static_cast<unsigned>(width);
  return static_cast<int64_t>(static_cast<uint64_t>(v) << sh) >> sh;
}

// Wraps v to the integer scalar `s`: signed kinds sign-extend (wrap_int), unsigned ones keep
// the low bits zero-extended (u64: the bit pattern), i1 keeps bit 0.
inline int64_t wrap_to(int64_t v, ir::Scalar s) {
  const int w = ir::bit_width(s);
  if (ir::is_unsigned(s) && w < 64) return static_cast<int64_t>(static_cast<uint64_t>(v) & ((uint64_t{1} << w) - 1));
  return wrap_int(v, w);
}

// Stores its elements as floats (vs. integers or pointers)?
inline bool holds_floats(const ir::DType& d) { return d.is_float(); }

class Machine {
 public:
  Machine(const ir::Function& f, Grid grid, std::span<const MemRegion> memory);

  const ir::Function& fn;
  Grid grid;
  std::array<int64_t, 3> pid{0, 0, 0};  // the running program's (x, y, z)

  // An operand's elements; throws VerifyError if it was never defined in this program.
  const Tile& in(const ir::Op& op, int operand) const;
  // A value's slot sized for its type's numel; the caller fills every element.
  Tile& out(const ir::Value* v);
  Tile& slot(const ir::Value* v) { return values_[v->id]; }

  // Finds the region holding [addr, addr + bytes); for writes, a writable one. Throws the
  // standard out-of-bounds / misaligned / read-only InterpError for element `k` of `op`.
  void check_access(const ir::Op& op, int64_t k, uint64_t addr, int bytes, bool write,
                    bool masked);

  // "interpreter: op 'load' at kernel.cpp:42 in program (3,0,0): <what>"
  [[noreturn]] void fail(const ir::Op& op, const std::string& what) const;
  // Malformed IR: VerifyError naming the op and its location.
  [[noreturn]] void malformed(const ir::Op& op, const std::string& what) const;
  // An integer attribute, or VerifyError when it is missing or not an integer.
  int64_t int_attr(const ir::Op& op, std::string_view name) const;

 private:
  std::string element_name(const ir::Op& op, int64_t k) const;

  std::vector<Tile> values_;
  std::vector<MemRegion> memory_;
  size_t last_hit_ = 0;  // the region that served the previous access, tried first
};

// One op family each (exec_*.cpp); `op` has already been dispatched on its kind.
void exec_source(Machine& m, const ir::Op& op);   // constant, program_id, num_programs, arange
void exec_shape(Machine& m, const ir::Op& op);    // splat, broadcast, expand_dims, reshape, trans
void exec_cast(Machine& m, const ir::Op& op);
void exec_bits(Machine& m, const ir::Op& op);     // bitcast, unpack
void exec_binary(Machine& m, const ir::Op& op);   // arithmetic, bitwise and comparisons
void exec_unary(Machine& m, const ir::Op& op);    // neg, abs, not and the float math functions
void exec_ternary(Machine& m, const ir::Op& op);  // fma, select
void exec_memory(Machine& m, const ir::Op& op);   // addptr, load, store
void exec_random(Machine& m, const ir::Op& op);   // rand, randn
void exec_reduce(Machine& m, const ir::Op& op);   // reduce_*, argmax/argmin, reduce (region), cumsum
void exec_atomic(Machine& m, const ir::Op& op);   // atomic_add, atomic_max (in exec_memory.cpp)
void exec_dot(Machine& m, const ir::Op& op);
void exec_hint(Machine& m, const ir::Op& op);     // multiple_of / max_contiguous (checked)

// Runs the ops of `b` up to its terminator (yield); the generic reduce runs its body with it.
void exec_block(Machine& m, const ir::Block& b);

// Checks that every operand of an elementwise op has the result's element count.
void require_same_numel(const Machine& m, const ir::Op& op, int64_t numel);

}  // namespace tessel::interp
