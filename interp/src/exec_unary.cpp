// Unary elementwise ops: neg, abs, not and the float math functions (computed in double).
#include <cmath>

#include "elementwise.hpp"

namespace tessel::interp {
namespace {

using ir::OpKind;

void numeric(Machine& m, const ir::Op& op) {
  const ir::DType d = op.result()->type.dtype;
  if (d.is_float()) {
    if (op.kind == OpKind::Neg) return map_float1(m, op, [](double x) { return -x; });
    return map_float1(m, op, [](double x) { return std::fabs(x); });
  }
  if (!d.is_int()) m.malformed(op, "takes numbers, not " + d.str());
  if (op.kind == OpKind::Neg) return map_int1(m, op, [](int64_t x) { return wrapping_sub(0, x); });
  if (d.is_unsigned()) return map_int1(m, op, [](int64_t x) { return x; });  // abs of an unsigned value
  // abs(INT_MIN) wraps back to INT_MIN.
  return map_int1(m, op, [](int64_t x) { return x < 0 ? wrapping_sub(0, x) : x; });
}

void bitwise_not(Machine& m, const ir::Op& op) {
  const ir::DType d = op.result()->type.dtype;
  if (!d.is_int()) m.malformed(op, "takes integers, not " + d.str());
  if (d.is_bool()) return map_int1(m, op, [](int64_t x) { return x ^ 1; });  // logical not
  return map_int1(m, op, [](int64_t x) { return ~x; });
}

void math(Machine& m, const ir::Op& op) {
  const ir::DType d = op.result()->type.dtype;
  if (!d.is_float()) m.malformed(op, "takes floats, not " + d.str());
  switch (op.kind) {
    case OpKind::Exp: return map_float1(m, op, [](double x) { return std::exp(x); });
    case OpKind::Exp2: return map_float1(m, op, [](double x) { return std::exp2(x); });
    case OpKind::Log: return map_float1(m, op, [](double x) { return std::log(x); });
    case OpKind::Log2: return map_float1(m, op, [](double x) { return std::log2(x); });
    case OpKind::Sqrt: return map_float1(m, op, [](double x) { return std::sqrt(x); });
    case OpKind::Rsqrt: return map_float1(m, op, [](double x) { return 1.0 / std::sqrt(x); });
    case OpKind::Sin: return map_float1(m, op, [](double x) { return std::sin(x); });
    case OpKind::Cos: return map_float1(m, op, [](double x) { return std::cos(x); });
    case OpKind::Tanh: return map_float1(m, op, [](double x) { return std::tanh(x); });
    case OpKind::Sigmoid: return map_float1(m, op, [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
    case OpKind::Erf: return map_float1(m, op, [](double x) { return std::erf(x); });
    case OpKind::Floor: return map_float1(m, op, [](double x) { return std::floor(x); });
    case OpKind::Ceil: return map_float1(m, op, [](double x) { return std::ceil(x); });
    default: break;
  }
  internal_error(__FILE__, __LINE__, "math on " + std::string(op.name()));
}

}  // namespace

void exec_unary(Machine& m, const ir::Op& op) {
  require_uniform(m, op, 1);
  switch (op.info().rule) {
    case ir::Rule::UnaryNumeric: return numeric(m, op);
    case ir::Rule::UnaryInt: return bitwise_not(m, op);
    case ir::Rule::UnaryFloat: return math(m, op);
    default: break;
  }
  internal_error(__FILE__, __LINE__, "exec_unary on " + std::string(op.name()));
}

}  // namespace tessel::interp
