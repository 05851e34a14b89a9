// Loops that apply one element function over whole tiles, with the dtype's rounding or wrapping.
//
// Each helper is instantiated per op and per float format, so the inner loop is a plain
// loop over elements with the rounding inlined: the op kind is switched on once per op.
#pragma once
#include <fmt/format.h>

#include <cmath>

#include "machine.hpp"
#include "tessel/interp/float_formats.hpp"

namespace tessel::interp {

// Calls body(round) with `round` a function object rounding a double to the float scalar s.
template <class Body>
void with_rounding(ir::Scalar s, Body&& body) {
  switch (s) {
    case ir::Scalar::f64: return body([](double x) { return x; });
    case ir::Scalar::f32: return body([](double x) { return static_cast<double>(static_cast<float>(x)); });
    case ir::Scalar::f16: return body([](double x) { return f16_to_double(f16_from_double(x)); });
    case ir::Scalar::bf16: return body([](double x) { return bf16_to_double(bf16_from_double(x)); });
    default: break;
  }
  internal_error(__FILE__, __LINE__, "with_rounding on an integer scalar");
}

// Checks that the first `count` operands and the result share one dtype and element count.
inline void require_uniform(const Machine& m, const ir::Op& op, int count) {
  const ir::Value* r = op.result();
  require_same_numel(m, op, r->type.numel());
  for (int k = 0; k < count; ++k)
    if (op.operand(k)->type.dtype != r->type.dtype)
      m.malformed(op, fmt::format("operand {} is {} but the result is {}", k,
                                  op.operand(k)->type.str(), r->type.str()));
}

// result[k] = round(f(a[k])) over floats.
template <class F>
void map_float1(Machine& m, const ir::Op& op, F f) {
  const ir::Value* r = op.result();
  const std::vector<double>& a = m.in(op, 0).f;
  std::vector<double>& out = m.out(r).f;
  with_rounding(r->type.dtype.scalar, [&](auto round) {
    for (size_t k = 0; k < out.size(); ++k) out[k] = round(f(a[k]));
  });
}

// result[k] = round(f(a[k], b[k])) over floats.
template <class F>
void map_float2(Machine& m, const ir::Op& op, F f) {
  const ir::Value* r = op.result();
  const std::vector<double>& a = m.in(op, 0).f;
  const std::vector<double>& b = m.in(op, 1).f;
  std::vector<double>& out = m.out(r).f;
  with_rounding(r->type.dtype.scalar, [&](auto round) {
    for (size_t k = 0; k < out.size(); ++k) out[k] = round(f(a[k], b[k]));
  });
}

// result[k] = wrap(f(a[k])) over integers of the result's width.
template <class F>
void map_int1(Machine& m, const ir::Op& op, F f) {
  const ir::Value* r = op.result();
  const ir::Scalar s = r->type.dtype.scalar;
  const std::vector<int64_t>& a = m.in(op, 0).i;
  std::vector<int64_t>& out = m.out(r).i;
  for (size_t k = 0; k < out.size(); ++k) out[k] = wrap_to(f(a[k]), s);
}

// result[k] = wrap(f(a[k], b[k], width)) over integers of the result's type (unsigned kinds
// zero-extended in their slots: f sees values in 0 .. 2^width - 1, u64 as its bit pattern).
template <class F>
void map_int2(Machine& m, const ir::Op& op, F f) {
  const ir::Value* r = op.result();
  const ir::Scalar s = r->type.dtype.scalar;
  const int w = ir::bit_width(s);
  const std::vector<int64_t>& a = m.in(op, 0).i;
  const std::vector<int64_t>& b = m.in(op, 1).i;
  std::vector<int64_t>& out = m.out(r).i;
  for (size_t k = 0; k < out.size(); ++k) out[k] = wrap_to(f(a[k], b[k], w), s);
}

// Float min/max: NaN if either operand is NaN (shared by min/max, reductions and atomic_max).
inline double nan_min(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return NAN;
  return b < a ? b : a;
}
inline double nan_max(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return NAN;
  return b > a ? b : a;
}

// Two's complement arithmetic on the sign-extended slots, without signed-overflow UB.
inline int64_t wrapping_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t wrapping_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
inline int64_t wrapping_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

}  // namespace tessel::interp
