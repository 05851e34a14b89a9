// f16 and bf16 conversions: exhaustive round trips, ties to even, subnormals, overflow and NaN.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

#include "tessel/interp/float_formats.hpp"

using namespace tessel::interp;
using tessel::ir::Scalar;

TEST_CASE("f16: every bit pattern round-trips through double") {
  int64_t bad = 0, nans = 0;
  for (uint32_t b = 0; b < 0x10000; ++b) {
    uint16_t h = static_cast<uint16_t>(b);
    double d = f16_to_double(h);
    bool is_nan = (h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0;
    if (is_nan) {
      nans += std::isnan(d);
      // quiet NaNs keep their payload; signalling ones come back quiet
      bad += f16_from_double(d) != (h | 0x200);
      continue;
    }
    bad += f16_from_double(d) != h;
    bad += std::signbit(d) != ((h >> 15) != 0);
  }
  CHECK(bad == 0);
  CHECK(nans == 2 * 1023);
}

TEST_CASE("f16: values and ties") {
  CHECK(f16_from_double(1.0) == 0x3C00);
  CHECK(f16_from_double(-2.0) == 0xC000);
  CHECK(f16_from_double(65504.0) == 0x7BFF);
  CHECK(f16_from_double(65519.99) == 0x7BFF);
  CHECK(f16_from_double(65520.0) == 0x7C00);   // tie at the top goes to infinity
  CHECK(f16_from_double(-1e10) == 0xFC00);
  CHECK(f16_from_double(INFINITY) == 0x7C00);
  CHECK(f16_from_double(0.1) == 0x2E66);
  CHECK(f16_from_double(1.0 + 0x1p-11) == 0x3C00);        // tie, even stays
  CHECK(f16_from_double(1.0 + 3 * 0x1p-11) == 0x3C02);    // tie, odd rounds up
  CHECK(f16_from_double(1.0 + 0x1p-11 + 0x1p-40) == 0x3C01);  // just above the tie
  CHECK(f16_from_double(2047.5 + 0.5) == 0x6800);         // 2048
  CHECK(f16_from_double(0x1p-24) == 0x0001);              // smallest subnormal
  CHECK(f16_from_double(0x1p-25) == 0x0000);              // tie with 0 goes to even 0
  CHECK(f16_from_double(0x1p-25 * 1.0000001) == 0x0001);
  CHECK(f16_from_double(3 * 0x1p-25) == 0x0002);          // tie between 1 and 2 ulps -> 2
  CHECK(f16_from_double(0x1p-14 - 0x1p-26) == 0x0400);    // rounds up into the smallest normal
  CHECK(f16_from_double(-0.0) == 0x8000);
  CHECK(std::isnan(f16_to_double(f16_from_double(NAN))));
  CHECK(f16_to_double(0x0001) == 0x1p-24);
  CHECK(f16_to_double(0x03FF) == 1023 * 0x1p-24);
  CHECK(f16_to_double(0xFC00) == -INFINITY);
}

TEST_CASE("f16: conversions from double match the compiler's _Float16 on random inputs") {
#ifdef __FLT16_MAX__
  std::mt19937_64 rng(42);
  int64_t bad = 0;
  for (int i = 0; i < 200000; ++i) {
    // random bit patterns near the f16 range, including subnormal and overflowing magnitudes
    double d = std::ldexp(1.0 + static_cast<double>(rng() >> 11) * 0x1p-53, static_cast<int>(rng() % 50) - 30);
    if (rng() & 1) d = -d;
    _Float16 ref = static_cast<_Float16>(d);
    uint16_t rb;
    std::memcpy(&rb, &ref, 2);
    bad += rb != f16_from_double(d);
  }
  CHECK(bad == 0);
#else
  MESSAGE("no _Float16 in this compiler; oracle comparison skipped");
#endif
}

TEST_CASE("bf16: every bit pattern round-trips; ties go to even") {
  int64_t bad = 0;
  for (uint32_t b = 0; b < 0x10000; ++b) {
    uint16_t h = static_cast<uint16_t>(b);
    double d = bf16_to_double(h);
    bool is_nan = (h & 0x7F80) == 0x7F80 && (h & 0x7F) != 0;
    // bf16 is the top half of an f32: the widened value must agree with that reading
    float as_f32 = std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
    if (is_nan) {
      bad += !std::isnan(d) || bf16_from_double(d) != (h | 0x40);
      continue;
    }
    bad += d != static_cast<double>(as_f32);
    bad += bf16_from_double(d) != h;
  }
  CHECK(bad == 0);
  CHECK(bf16_from_double(1.0) == 0x3F80);
  CHECK(bf16_from_double(1.0 + 0x1p-8) == 0x3F80);       // tie, even stays
  CHECK(bf16_from_double(1.0 + 3 * 0x1p-8) == 0x3F82);   // tie, odd rounds up
  CHECK(bf16_from_double(3.4e38) == 0x7F80);             // above the largest bf16 (~3.39e38)
  CHECK(bf16_from_double(-1e-45) == 0x8000);
  CHECK(bf16_from_double(0x1p-133) == 0x0001);           // smallest bf16 subnormal
}

TEST_CASE("round_to_float and int_to_float") {
  CHECK(round_to_float(0.1, Scalar::f64) == 0.1);
  CHECK(round_to_float(0.1, Scalar::f32) == static_cast<double>(0.1f));
  CHECK(round_to_float(0.1, Scalar::f16) == f16_to_double(0x2E66));
  CHECK(round_to_float(1.0 + 3 * 0x1p-8, Scalar::bf16) == 1.0 + 4 * 0x1p-8);
  CHECK(int_to_float(-16777217, Scalar::f32) == -16777216.0);
  CHECK(int_to_float(INT64_MAX, Scalar::f64) == 0x1p63);
  CHECK(int_to_float(2049, Scalar::f16) == 2048.0);
  CHECK(int_to_float(70000, Scalar::f16) == INFINITY);
}
