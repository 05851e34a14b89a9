// Interpreter: float->int casts at the saturation boundaries, for every int width from every float dtype.
//
// The inputs are built as bit patterns of each IEEE format by hand and the expected values are
// written from the documented rule (interpreter.hpp: "float->int truncates toward zero and
// saturates to the target range, NaN -> 0"), so nothing here reuses interpreter code.
#include <cstdint>
#include <string>

#include "interp_test_util.hpp"

using namespace interp_test;

namespace {

// An IEEE binary format: bit layout only.
struct Format {
  Scalar scalar;
  const char* name;
  int exp_bits, mant_bits;

  int64_t bias() const { return (int64_t{1} << (exp_bits - 1)) - 1; }  // also the largest normal exponent
  uint64_t sign() const { return uint64_t{1} << (exp_bits + mant_bits); }
  uint64_t inf() const { return ((uint64_t{1} << exp_bits) - 1) << mant_bits; }
  uint64_t nan() const { return inf() | (uint64_t{1} << (mant_bits - 1)); }
  // 2^e, for a normal exponent e.
  uint64_t pow2(int e) const { return static_cast<uint64_t>(e + bias()) << mant_bits; }
  // 1.5 * 2^e and 1.75 * 2^e.
  uint64_t pow2_x1_5(int e) const { return pow2(e) | (uint64_t{1} << (mant_bits - 1)); }
  uint64_t pow2_x1_75(int e) const { return pow2(e) | (uint64_t{3} << (mant_bits - 2)); }
};

const Format kF16{Scalar::f16, "f16", 5, 10};
const Format kBF16{Scalar::bf16, "bf16", 8, 7};
const Format kF32{Scalar::f32, "f32", 8, 23};
const Format kF64{Scalar::f64, "f64", 11, 52};

// -0.9 rounded to each format (any rounding of it truncates to 0; these are the nearest values).
uint64_t minus_0_9(const Format& f) {
  if (f.scalar == Scalar::f16) return 0xBB33;   // -0.89990234375
  if (f.scalar == Scalar::bf16) return 0xBF66;  // -0.8984375
  if (f.scalar == Scalar::f32) {
    const float v = -0.9f;
    uint32_t b;
    std::memcpy(&b, &v, 4);
    return b;
  }
  const double v = -0.9;
  uint64_t b;
  std::memcpy(&b, &v, 8);
  return b;
}

struct Case {
  uint64_t bits;
  int64_t want;
  std::string what;
};

// The boundary cases of a cast from `f` to a signed `width`-bit integer.
std::vector<Case> boundary_cases(const Format& f, int width) {
  const int e = width - 1;
  const int64_t hi = width == 64 ? INT64_MAX : (int64_t{1} << e) - 1;  // 2^(w-1) - 1
  const int64_t lo = -hi - 1;                                           // -2^(w-1)
  const int M = f.mant_bits;
  std::vector<Case> cs;
  if (e <= f.bias()) {
    // The spacing of f just below 2^e is 2^(e-1-M); when it is below 1 the neighbour is not
    // an integer and truncates to 2^e - 1.
    const int64_t ulp_below = e - 1 - M >= 0 ? int64_t{1} << (e - 1 - M) : 1;
    cs.push_back({f.pow2(e), hi, "2^(w-1) saturates to the max"});
    cs.push_back({f.pow2(e) - 1, hi - (ulp_below - 1), "the largest float below 2^(w-1) is in range"});
    cs.push_back({f.sign() | f.pow2(e), lo, "-2^(w-1) is the min exactly"});
    cs.push_back({(f.sign() | f.pow2(e)) + 1, lo, "the next float below -2^(w-1) saturates to the min"});
    cs.push_back({(f.sign() | f.pow2(e)) - 1, lo + ulp_below, "the float just above -2^(w-1) truncates toward 0"});
    if (e + 1 <= f.bias()) {
      cs.push_back({f.pow2(e + 1), hi, "2^w saturates"});
      cs.push_back({f.sign() | f.pow2(e + 1), lo, "-2^w saturates"});
    }
  } else {
    // 2^(w-1) is beyond f's range (f16 into i32/i64): its largest finite values are in range.
    const int64_t max_finite = (int64_t{1} << (f.bias() + 1)) - (int64_t{1} << (f.bias() - M));  // 65504 for f16
    cs.push_back({f.inf() - 1, max_finite, "the largest finite float fits"});
    cs.push_back({f.sign() | (f.inf() - 1), -max_finite, "the most negative finite float fits"});
  }
  cs.push_back({f.inf(), hi, "+inf saturates to the max"});
  cs.push_back({f.sign() | f.inf(), lo, "-inf saturates to the min"});
  cs.push_back({f.nan(), 0, "NaN gives 0"});
  cs.push_back({f.sign() | f.nan(), 0, "-NaN gives 0"});
  cs.push_back({f.pow2(-1), 0, "0.5 truncates to 0"});
  cs.push_back({f.sign() | f.pow2(-1), 0, "-0.5 truncates to 0"});
  cs.push_back({minus_0_9(f), 0, "-0.9 truncates toward zero, not down to -1"});
  cs.push_back({0, 0, "+0"});
  cs.push_back({f.sign(), 0, "-0"});
  cs.push_back({f.pow2_x1_75(0), 1, "1.75 truncates to 1"});
  cs.push_back({f.sign() | f.pow2_x1_5(0), -1, "-1.5 truncates to -1"});
  cs.push_back({f.sign() | f.pow2_x1_5(5), -48, "-48 is exact"});
  return cs;
}

template <class Tout, class Tin>
void check_casts(const Format& f, int width) {
  const std::vector<Case> cs = boundary_cases(f, width);
  std::vector<Tin> x(cs.size());
  for (size_t i = 0; i < cs.size(); ++i) {
    const uint64_t b = cs[i].bits;
    std::memcpy(&x[i], &b, sizeof(Tin));  // little-endian: the low bytes hold the pattern
  }
  Function fn("cast_saturation");
  const Scalar to = width == 8 ? Scalar::i8 : width == 16 ? Scalar::i16 : width == 32 ? Scalar::i32 : Scalar::i64;
  // block 8 over ~20 elements: three programs, the last one partly masked
  build_map_kernel(fn, {f.scalar}, to,
                   [to](Builder& b, const std::vector<Value*>& v) { return b.cast(v[0], DType{to, false}); }, 8);
  const std::vector<Tout> got = run_map<Tout>(fn, std::vector<std::vector<Tin>>{x}, 8);
  for (size_t i = 0; i < cs.size(); ++i) {
    INFO(f.name << " -> i" << width << ": " << cs[i].what << " (bits 0x" << std::hex << cs[i].bits << std::dec << ")");
    CHECK(static_cast<int64_t>(got[i]) == cs[i].want);
  }
}

template <class Tin>
void check_all_widths(const Format& f) {
  check_casts<int8_t, Tin>(f, 8);
  check_casts<int16_t, Tin>(f, 16);
  check_casts<int32_t, Tin>(f, 32);
  check_casts<int64_t, Tin>(f, 64);
}

}  // namespace

TEST_CASE("the hand-built bit patterns are the values they claim") {
  // A check of the test's own inputs against the host compiler's floats (f32/f64 only).
  auto as_float = [](uint64_t b) { float v; uint32_t w = static_cast<uint32_t>(b); std::memcpy(&v, &w, 4); return v; };
  auto as_double = [](uint64_t b) { double v; std::memcpy(&v, &b, 8); return v; };
  CHECK(as_float(kF32.pow2(31)) == 2147483648.0f);
  CHECK(as_float(kF32.pow2(31) - 1) == 2147483520.0f);
  CHECK(as_float((kF32.sign() | kF32.pow2(63)) + 1) == std::nextafter(-0x1p63f, -INFINITY));
  CHECK(as_float(kF32.pow2_x1_75(0)) == 1.75f);
  CHECK(as_double(kF64.sign() | kF64.pow2_x1_5(5)) == -48.0);
  CHECK(as_double(kF64.pow2(63) - 1) == std::nextafter(0x1p63, 0.0));
  CHECK(std::isnan(as_double(kF64.sign() | kF64.nan())));
  CHECK(as_double(kF64.inf()) == INFINITY);
  // f16 / bf16 spot values: 2^15 = 0x7800, 65504 = 0x7BFF, 2^63 in bf16 = 0x5F00.
  CHECK(kF16.pow2(15) == 0x7800);
  CHECK(kF16.inf() - 1 == 0x7BFF);
  CHECK(kBF16.pow2(63) == 0x5F00);
  CHECK(kBF16.pow2(7) - 1 == 0x42FF);  // 127.5
}

TEST_CASE("f16 to i8/i16/i32/i64 saturates at exactly 2^(w-1), truncates toward zero, NaN -> 0") {
  check_all_widths<uint16_t>(kF16);
}

TEST_CASE("bf16 to i8/i16/i32/i64 saturates at exactly 2^(w-1), truncates toward zero, NaN -> 0") {
  check_all_widths<uint16_t>(kBF16);
}

TEST_CASE("f32 to i8/i16/i32/i64 saturates at exactly 2^(w-1), truncates toward zero, NaN -> 0") {
  check_all_widths<float>(kF32);
}

TEST_CASE("f64 to i8/i16/i32/i64 saturates at exactly 2^(w-1), truncates toward zero, NaN -> 0") {
  check_all_widths<double>(kF64);
}
