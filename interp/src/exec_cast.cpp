// The cast op: conversions between integer, float and pointer element types.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "machine.hpp"
#include "tessel/interp/float_formats.hpp"

namespace tessel::interp {
namespace {

// Truncates toward zero and saturates to a `width`-bit signed range; NaN gives 0 (PTX
// cvt.rzi.sat.sN.fM).
int64_t float_to_int(double x, int width) {
  if (std::isnan(x)) return 0;
  const int64_t lo = std::numeric_limits<int64_t>::min() >> (64 - width);  // -2^(w-1)
  const double limit = -static_cast<double>(lo);                             // 2^(w-1), exact
  if (x >= limit) return ~lo;
  if (x <= -limit) return lo;
  return static_cast<int64_t>(std::trunc(x));
}

// Truncates toward zero and saturates to 0 .. 2^width - 1; NaN gives 0 (PTX
// cvt.rzi.sat.uN.fM). u64 results are bit patterns.
int64_t float_to_uint(double x, int width) {
  if (std::isnan(x) || x <= 0) return 0;
  const double limit = std::ldexp(1.0, width);  // 2^w, exact
  if (x >= limit) return static_cast<int64_t>(width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1);
  return static_cast<int64_t>(static_cast<uint64_t>(std::trunc(x)));
}

// A u64 bit pattern as a float of `s`, rounded once (values of 2^63 and up have their low
// bit folded into a sticky bit so that the halving and the final rounding round once).
double uint64_to_float(int64_t v, ir::Scalar s) {
  const uint64_t u = static_cast<uint64_t>(v);
  if (u < (uint64_t{1} << 63)) return int_to_float(v, s);
  return 2.0 * int_to_float(static_cast<int64_t>((u >> 1) | (u & 1)), s);
}

}  // namespace

void exec_cast(Machine& m, const ir::Op& op) {
  const ir::Value* v = op.operand(0);
  const ir::Value* r = op.result();
  require_same_numel(m, op, r->type.numel());
  const ir::DType from = v->type.dtype, to = r->type.dtype;
  const Tile& s = m.in(op, 0);
  Tile& d = m.out(r);
  const size_t n = static_cast<size_t>(r->type.numel());
  auto is_i64 = [](const ir::DType& t) { return !t.ptr && t.scalar == ir::Scalar::i64; };

  if (from.ptr || to.ptr) {
    // Pointers reinterpret as i64 addresses and as other pointers, nothing else.
    if (!((from.ptr || is_i64(from)) && (to.ptr || is_i64(to))))
      m.malformed(op, fmt::format("cannot cast {} to {}: pointers cast only to and from i64",
                                  from.str(), to.str()));
    d.i = s.i;
    return;
  }
  if (from.is_int() && to.is_int()) {
    if (to.is_bool()) {
      for (size_t k = 0; k < n; ++k) d.i[k] = s.i[k] != 0;
    } else {
      for (size_t k = 0; k < n; ++k) d.i[k] = wrap_to(s.i[k], to.scalar);
    }
  } else if (from.is_int() && to.is_float()) {
    if (from.scalar == ir::Scalar::u64)
      for (size_t k = 0; k < n; ++k) d.f[k] = uint64_to_float(s.i[k], to.scalar);
    else
      for (size_t k = 0; k < n; ++k) d.f[k] = int_to_float(s.i[k], to.scalar);
  } else if (from.is_float() && to.is_int()) {
    if (to.is_bool()) {
      for (size_t k = 0; k < n; ++k) d.i[k] = s.f[k] != 0;  // NaN != 0 holds: NaN -> 1
    } else {
      int w = ir::bit_width(to.scalar);
      if (to.is_unsigned())
        for (size_t k = 0; k < n; ++k) d.i[k] = float_to_uint(s.f[k], w);
      else
        for (size_t k = 0; k < n; ++k) d.i[k] = float_to_int(s.f[k], w);
    }
  } else {
    for (size_t k = 0; k < n; ++k) d.f[k] = round_to_float(s.f[k], to.scalar);
  }
}

}  // namespace tessel::interp
