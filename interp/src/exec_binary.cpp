// Binary elementwise ops: arithmetic, bitwise and comparisons.
#include <cmath>
#include <functional>

#include "elementwise.hpp"

namespace tessel::interp {
namespace {

using ir::OpKind;

// Integer division and remainder truncate toward zero. A zero divisor gives 0 (unspecified
// by the contract: masked-off lanes may hold junk); INT_MIN / -1 wraps to INT_MIN, rem 0.
int64_t int_div(int64_t a, int64_t b, int) {
  if (b == 0) return 0;
  if (b == -1) return wrapping_sub(0, a);
  return a / b;
}
int64_t int_rem(int64_t a, int64_t b, int) {
  if (b == 0 || b == -1) return 0;
  return a % b;
}
// Shift amounts outside [0, width) shift everything out: 0 for shl, the sign for shr.
int64_t int_shl(int64_t a, int64_t b, int w) {
  if (b < 0 || b >= w) return 0;
  return static_cast<int64_t>(static_cast<uint64_t>(a) << b);
}
int64_t int_shr(int64_t a, int64_t b, int w) {
  if (w == 1) return a;  // an i1's only bit is its sign bit
  if (b < 0 || b >= w) return a < 0 ? -1 : 0;
  return a >> b;
}

// Unsigned kinds (slots zero-extended; u64 as its bit pattern). The shift amount is read as
// unsigned too: amounts of width or more give 0.
uint64_t as_u(int64_t v) { return static_cast<uint64_t>(v); }
int64_t uint_div(int64_t a, int64_t b, int) { return b == 0 ? 0 : static_cast<int64_t>(as_u(a) / as_u(b)); }
int64_t uint_rem(int64_t a, int64_t b, int) { return b == 0 ? 0 : static_cast<int64_t>(as_u(a) % as_u(b)); }
int64_t uint_min(int64_t a, int64_t b, int) { return as_u(b) < as_u(a) ? b : a; }
int64_t uint_max(int64_t a, int64_t b, int) { return as_u(b) > as_u(a) ? b : a; }
int64_t int_min(int64_t a, int64_t b, int) { return b < a ? b : a; }
int64_t int_max(int64_t a, int64_t b, int) { return b > a ? b : a; }
int64_t uint_shl(int64_t a, int64_t b, int w) {
  return as_u(b) >= static_cast<uint64_t>(w) ? 0 : static_cast<int64_t>(as_u(a) << b);
}
int64_t uint_shr(int64_t a, int64_t b, int w) {
  return as_u(b) >= static_cast<uint64_t>(w) ? 0 : static_cast<int64_t>(as_u(a) >> b);
}

void arith(Machine& m, const ir::Op& op) {
  require_uniform(m, op, 2);
  const ir::DType d = op.result()->type.dtype;
  if (d.ptr) m.malformed(op, "arithmetic on pointers (use addptr)");
  if (d.is_float()) {
    switch (op.kind) {
      case OpKind::Add: return map_float2(m, op, std::plus<double>());
      case OpKind::Sub: return map_float2(m, op, std::minus<double>());
      case OpKind::Mul: return map_float2(m, op, std::multiplies<double>());
      case OpKind::Div: return map_float2(m, op, std::divides<double>());
      case OpKind::Rem: return map_float2(m, op, [](double a, double b) { return std::fmod(a, b); });
      case OpKind::Min: return map_float2(m, op, nan_min);
      case OpKind::Max: return map_float2(m, op, nan_max);
      default: break;
    }
  } else {
    const bool u = d.is_unsigned();
    switch (op.kind) {
      case OpKind::Add: return map_int2(m, op, [](int64_t a, int64_t b, int) { return wrapping_add(a, b); });
      case OpKind::Sub: return map_int2(m, op, [](int64_t a, int64_t b, int) { return wrapping_sub(a, b); });
      case OpKind::Mul: return map_int2(m, op, [](int64_t a, int64_t b, int) { return wrapping_mul(a, b); });
      case OpKind::Div: return map_int2(m, op, u ? uint_div : int_div);
      case OpKind::Rem: return map_int2(m, op, u ? uint_rem : int_rem);
      case OpKind::Min: return map_int2(m, op, u ? uint_min : int_min);
      case OpKind::Max: return map_int2(m, op, u ? uint_max : int_max);
      default: break;
    }
  }
  internal_error(__FILE__, __LINE__, "arith on " + std::string(op.name()));
}

void bitwise(Machine& m, const ir::Op& op) {
  require_uniform(m, op, 2);
  if (!op.result()->type.dtype.is_int())
    m.malformed(op, "bitwise ops take integers, not " + op.result()->type.dtype.str());
  switch (op.kind) {
    case OpKind::And: return map_int2(m, op, [](int64_t a, int64_t b, int) { return a & b; });
    case OpKind::Or: return map_int2(m, op, [](int64_t a, int64_t b, int) { return a | b; });
    case OpKind::Xor: return map_int2(m, op, [](int64_t a, int64_t b, int) { return a ^ b; });
    case OpKind::Shl: return map_int2(m, op, op.result()->type.dtype.is_unsigned() ? uint_shl : int_shl);
    case OpKind::Shr: return map_int2(m, op, op.result()->type.dtype.is_unsigned() ? uint_shr : int_shr);
    default: break;
  }
  internal_error(__FILE__, __LINE__, "bitwise on " + std::string(op.name()));
}

template <class T, class Pred>
void compare_loop(const std::vector<T>& a, const std::vector<T>& b, std::vector<int64_t>& out,
                  Pred pred) {
  for (size_t k = 0; k < out.size(); ++k) out[k] = pred(a[k], b[k]) ? 1 : 0;
}

// Compares with `pred` over the operands' storage: doubles (IEEE: false on NaN except !=),
// signed slots for ints (unsigned kinds below u64 hold non-negative values), unsigned bit
// patterns for u64 and addresses for pointers.
template <class Pred>
void compare_with(Machine& m, const ir::Op& op, Pred pred) {
  const ir::DType d = op.operand(0)->type.dtype;
  std::vector<int64_t>& out = m.out(op.result()).i;
  if (d.is_float()) return compare_loop(m.in(op, 0).f, m.in(op, 1).f, out, pred);
  if (!d.ptr && d.scalar != ir::Scalar::u64) return compare_loop(m.in(op, 0).i, m.in(op, 1).i, out, pred);
  const std::vector<int64_t>& a = m.in(op, 0).i;
  const std::vector<int64_t>& b = m.in(op, 1).i;
  for (size_t k = 0; k < out.size(); ++k)
    out[k] = pred(static_cast<uint64_t>(a[k]), static_cast<uint64_t>(b[k])) ? 1 : 0;
}

void compare(Machine& m, const ir::Op& op) {
  const ir::Value* r = op.result();
  require_same_numel(m, op, r->type.numel());
  if (op.operand(0)->type.dtype != op.operand(1)->type.dtype || !r->type.dtype.is_bool())
    m.malformed(op, fmt::format("compares {} with {} into {}", op.operand(0)->type.str(),
                                op.operand(1)->type.str(), r->type.str()));
  switch (op.kind) {
    case OpKind::CmpEq: return compare_with(m, op, std::equal_to<>());
    case OpKind::CmpNe: return compare_with(m, op, std::not_equal_to<>());
    case OpKind::CmpLt: return compare_with(m, op, std::less<>());
    case OpKind::CmpLe: return compare_with(m, op, std::less_equal<>());
    case OpKind::CmpGt: return compare_with(m, op, std::greater<>());
    case OpKind::CmpGe: return compare_with(m, op, std::greater_equal<>());
    default: break;
  }
  internal_error(__FILE__, __LINE__, "compare on " + std::string(op.name()));
}

}  // namespace

void exec_binary(Machine& m, const ir::Op& op) {
  switch (op.info().rule) {
    case ir::Rule::Arith: return arith(m, op);
    case ir::Rule::Bitwise: return bitwise(m, op);
    case ir::Rule::Compare: return compare(m, op);
    default: break;
  }
  internal_error(__FILE__, __LINE__, "exec_binary on " + std::string(op.name()));
}

}  // namespace tessel::interp
