// Round-to-nearest-even conversions between double and f16/bf16, written from the IEEE 754 layout.
#include "tessel/interp/float_formats.hpp"

#include <bit>
#include <cmath>

#include "tessel/ir/error.hpp"

namespace tessel::interp {
namespace {

// A binary floating-point format narrower than double: 1 sign, E exponent, M mantissa bits.
struct Format {
  int exp_bits;
  int mant_bits;
  int bias() const { return (1 << (exp_bits - 1)) - 1; }
  int min_exp() const { return 1 - bias(); }  // exponent of the smallest normal
  uint32_t inf_bits() const { return ((1u << exp_bits) - 1) << mant_bits; }
};
constexpr Format kF16{5, 10};
constexpr Format kBF16{8, 7};

// Rounds a non-negative integral-range double to the nearest integer, ties to even, without
// consulting the rounding mode. v < 2^53, so floor and the difference are exact.
double round_half_even(double v) {
  double fl = std::floor(v);
  double frac = v - fl;
  if (frac > 0.5) return fl + 1;
  if (frac < 0.5) return fl;
  return std::fmod(fl, 2.0) == 0 ? fl : fl + 1;
}

uint16_t narrow(double x, Format fmt) {
  uint64_t xb = std::bit_cast<uint64_t>(x);
  uint32_t sign = static_cast<uint32_t>(xb >> 63) << (fmt.exp_bits + fmt.mant_bits);
  if (std::isnan(x)) {
    // Keep the top payload bits, force the quiet bit so the result is never an infinity.
    uint32_t payload = static_cast<uint32_t>((xb & 0x000F'FFFF'FFFF'FFFFull) >> (52 - fmt.mant_bits));
    payload |= 1u << (fmt.mant_bits - 1);
    return static_cast<uint16_t>(sign | fmt.inf_bits() | payload);
  }
  double a = std::fabs(x);
  // Anything at or above the midpoint between the largest finite value and 2^(emax+1)
  // rounds to infinity (the largest finite has an odd mantissa, so the tie goes up).
  double overflow = std::ldexp(2.0 - std::ldexp(1.0, -(fmt.mant_bits + 1)), fmt.bias());
  if (a >= overflow) return static_cast<uint16_t>(sign | fmt.inf_bits());
  if (a < std::ldexp(1.0, fmt.min_exp())) {
    // Subnormal (or zero): count in units of the smallest subnormal. A result of
    // 2^mant_bits is the smallest normal, whose bit pattern is that same number.
    double q = round_half_even(std::ldexp(a, fmt.mant_bits - fmt.min_exp()));
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(q));
  }
  int e = std::ilogb(a);  // a is a normal double here, so this is exact
  double q = round_half_even(std::ldexp(a, fmt.mant_bits - e));  // in [2^M, 2^(M+1)]
  // A mantissa that rounded up to 2^(M+1) carries into the exponent by plain addition.
  uint32_t bits = (static_cast<uint32_t>(e + fmt.bias()) << fmt.mant_bits) +
                  (static_cast<uint32_t>(q) - (1u << fmt.mant_bits));
  return static_cast<uint16_t>(sign | bits);
}

double widen(uint16_t bits, Format fmt) {
  uint32_t b = bits;
  bool neg = (b >> (fmt.exp_bits + fmt.mant_bits)) & 1;
  uint32_t exp = (b >> fmt.mant_bits) & ((1u << fmt.exp_bits) - 1);
  uint32_t mant = b & ((1u << fmt.mant_bits) - 1);
  double v;
  if (exp == (1u << fmt.exp_bits) - 1) {
    if (mant == 0) {
      v = INFINITY;
    } else {
      uint64_t db = 0x7FF0'0000'0000'0000ull | (uint64_t{1} << 51) |
                    (uint64_t{mant} << (52 - fmt.mant_bits));
      v = std::bit_cast<double>(db);
    }
  } else if (exp == 0) {
    v = std::ldexp(static_cast<double>(mant), fmt.min_exp() - fmt.mant_bits);
  } else {
    v = std::ldexp(static_cast<double>(mant | (1u << fmt.mant_bits)),
                   static_cast<int>(exp) - fmt.bias() - fmt.mant_bits);
  }
  return neg ? -v : v;
}

constexpr Format kE5M2{5, 2};

}  // namespace

uint8_t f8e4m3_from_double(double x) {
  const uint8_t sign = std::signbit(x) ? 0x80 : 0;
  if (std::isnan(x)) return 0x7f | sign;
  const double a = std::fabs(x);
  if (a >= 448.0) return 0x7e | sign;  // satfinite: 1.75 * 2^8
  if (a < std::ldexp(1.0, -6)) {       // subnormal: units of 2^-9
    return static_cast<uint8_t>(sign | static_cast<uint32_t>(round_half_even(std::ldexp(a, 9))));
  }
  const int e = std::ilogb(a);
  const double q = round_half_even(std::ldexp(a, 3 - e));  // in [8, 16]; a carry adds into the exponent
  return static_cast<uint8_t>(sign | ((static_cast<uint32_t>(e + 7) << 3) + (static_cast<uint32_t>(q) - 8)));
}

double f8e4m3_to_double(uint8_t bits) {
  const bool neg = bits & 0x80;
  const uint32_t exp = (bits >> 3) & 0xf, mant = bits & 7;
  double v;
  if (exp == 0xf && mant == 7) return std::nan("");
  if (exp == 0) v = std::ldexp(static_cast<double>(mant), -9);
  else v = std::ldexp(static_cast<double>(mant | 8), static_cast<int>(exp) - 7 - 3);
  return neg ? -v : v;
}

uint8_t f8e5m2_from_double(double x) {
  if (std::isnan(x)) return std::signbit(x) ? 0xff : 0x7f;
  const uint8_t sign = std::signbit(x) ? 0x80 : 0;
  if (std::fabs(x) >= 57344.0) return 0x7b | sign;  // satfinite: 1.75 * 2^15, infinities too
  return static_cast<uint8_t>(narrow(x, kE5M2));
}

double f8e5m2_to_double(uint8_t bits) { return widen(bits, kE5M2); }

uint64_t float_bits(double x, ir::Scalar s) {
  switch (s) {
    case ir::Scalar::f64: return std::bit_cast<uint64_t>(x);
    case ir::Scalar::f32: return std::bit_cast<uint32_t>(static_cast<float>(x));
    case ir::Scalar::f16: return f16_from_double(x);
    case ir::Scalar::bf16: return bf16_from_double(x);
    case ir::Scalar::f8e4m3: return f8e4m3_from_double(x);
    case ir::Scalar::f8e5m2: return f8e5m2_from_double(x);
    default: break;
  }
  internal_error(__FILE__, __LINE__, "float_bits on an integer scalar");
}

double float_from_bits(uint64_t bits, ir::Scalar s) {
  switch (s) {
    case ir::Scalar::f64: return std::bit_cast<double>(bits);
    case ir::Scalar::f32: return static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(bits)));
    case ir::Scalar::f16: return f16_to_double(static_cast<uint16_t>(bits));
    case ir::Scalar::bf16: return bf16_to_double(static_cast<uint16_t>(bits));
    case ir::Scalar::f8e4m3: return f8e4m3_to_double(static_cast<uint8_t>(bits));
    case ir::Scalar::f8e5m2: return f8e5m2_to_double(static_cast<uint8_t>(bits));
    default: break;
  }
  internal_error(__FILE__, __LINE__, "float_from_bits on an integer scalar");
}

uint16_t f16_from_double(double x) { return narrow(x, kF16); }
double f16_to_double(uint16_t bits) { return widen(bits, kF16); }
uint16_t bf16_from_double(double x) { return narrow(x, kBF16); }
double bf16_to_double(uint16_t bits) { return widen(bits, kBF16); }

double round_to_float(double x, ir::Scalar s) {
  switch (s) {
    case ir::Scalar::f64: return x;
    case ir::Scalar::f32: return static_cast<double>(static_cast<float>(x));
    case ir::Scalar::f16: return f16_to_double(f16_from_double(x));
    case ir::Scalar::bf16: return bf16_to_double(bf16_from_double(x));
    case ir::Scalar::f8e4m3: return f8e4m3_to_double(f8e4m3_from_double(x));
    case ir::Scalar::f8e5m2: return f8e5m2_to_double(f8e5m2_from_double(x));
    default: break;
  }
  internal_error(__FILE__, __LINE__, "round_to_float on an integer scalar");
}

double int_to_float(int64_t v, ir::Scalar s) {
  if (s == ir::Scalar::f64) return static_cast<double>(v);
  if (s == ir::Scalar::f32) return static_cast<double>(static_cast<float>(v));
  // Round to odd into 53 bits (exact below 2^53), then once to the narrow format: round to
  // odd with >= 2 spare bits makes the second rounding equal to a single direct one.
  uint64_t mag = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  double d;
  int len = 64 - std::countl_zero(mag);
  if (len <= 53) {
    d = static_cast<double>(mag);
  } else {
    int shift = len - 53;
    uint64_t hi = mag >> shift;
    if (mag & ((uint64_t{1} << shift) - 1)) hi |= 1;
    d = std::ldexp(static_cast<double>(hi), shift);
  }
  return round_to_float(v < 0 ? -d : d, s);
}

float round_to_tf32(float x) {
  uint32_t bits = std::bit_cast<uint32_t>(x);
  if ((bits & 0x7f800000u) == 0x7f800000u) return x;  // inf and NaN pass through
  // Keep 10 mantissa bits: add half of the dropped range (ties away from zero on the
  // magnitude) and clear the 13 low bits; a carry into the exponent is the correct rounding.
  bits = (bits + 0x1000u) & ~0x1fffu;
  return std::bit_cast<float>(bits);
}

}  // namespace tessel::interp
