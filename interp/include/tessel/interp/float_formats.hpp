// Exact conversions between double and the 16-bit float formats, and rounding to any float dtype.
//
// Conversions from double round to nearest, ties to even, in one step (never through float,
// which could round twice). Overflow gives a signed infinity; NaN stays NaN, keeping its sign
// and the top payload bits, with the quiet bit set. f16 has subnormals; so has bf16.
// They do not depend on the floating-point environment's rounding mode.
#pragma once
#include <cstdint>

#include "tessel/ir/types.hpp"

namespace tessel::interp {

uint16_t f16_from_double(double x);
double f16_to_double(uint16_t bits);  // exact
uint16_t bf16_from_double(double x);
double bf16_to_double(uint16_t bits);  // exact

// The OCP 8-bit floats, to nearest even and saturating (PTX cvt.rn.satfinite): magnitudes
// beyond the largest finite value (448 for e4m3, 57344 for e5m2), infinities included, give
// that value with x's sign; NaN gives NaN (0x7f / 0xff). e4m3 has no infinities.
uint8_t f8e4m3_from_double(double x);
double f8e4m3_to_double(uint8_t bits);  // exact; 0x7f and 0xff are NaN
uint8_t f8e5m2_from_double(double x);
double f8e5m2_to_double(uint8_t bits);  // exact

// The bit pattern of x, a value of the float scalar `s` (x must be representable in it),
// and back: what bitcast reads and writes. NaN payloads are not kept (a quiet NaN's pattern).
uint64_t float_bits(double x, ir::Scalar s);
double float_from_bits(uint64_t bits, ir::Scalar s);

// x rounded to the float scalar `s` (f64: unchanged; f32: through float; f16, bf16, fp8: above).
double round_to_float(double x, ir::Scalar s);

// The integer v as a double rounded to the float scalar `s` in one step (a plain
// int64 -> double conversion followed by a second rounding could round twice).
double int_to_float(int64_t v, ir::Scalar s);

// x rounded to tf32 (10 mantissa bits, to nearest, ties away from zero; PTX cvt.rna.tf32.f32),
// as dot does with f32 inputs when allow_tf32 is set. Infinities and NaN are unchanged.
float round_to_tf32(float x);

}  // namespace tessel::interp
