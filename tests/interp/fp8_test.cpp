// Interpreter: the OCP 8-bit floats f8e4m3 and f8e5m2. Decoding is checked on all 256 patterns
// against the format's definition written out here; encoding (cast from f32) against the
// nearest of those 256 values found by search, ties to the even pattern, saturating.
#include "interp_test_util.hpp"
#include "tessel/interp/float_formats.hpp"
#include "tessel/ir/verify.hpp"

using namespace interp_test;

namespace {

struct Fp8Spec {
  Scalar s;
  int exp_bits, mant_bits, bias;
  bool ieee_specials;  // e5m2: exponent all-ones is inf/NaN; e4m3: only S.1111.111 is NaN
};
constexpr Fp8Spec kE4M3{Scalar::f8e4m3, 4, 3, 7, false};
constexpr Fp8Spec kE5M2{Scalar::f8e5m2, 5, 2, 15, true};

// The format's definition: (-1)^s * 2^(e - bias) * 1.m, or 2^(1 - bias) * 0.m for e = 0.
double defined_value(const Fp8Spec& f, uint8_t bits) {
  const int sign = bits >> 7, e = (bits >> f.mant_bits) & ((1 << f.exp_bits) - 1), m = bits & ((1 << f.mant_bits) - 1);
  const int emax = (1 << f.exp_bits) - 1;
  double v;
  if (f.ieee_specials && e == emax) v = m == 0 ? INFINITY : NAN;
  else if (!f.ieee_specials && e == emax && m == (1 << f.mant_bits) - 1) v = NAN;
  else if (e == 0) v = std::ldexp(m, 1 - f.bias - f.mant_bits);
  else v = std::ldexp((1 << f.mant_bits) + m, e - f.bias - f.mant_bits);
  return sign ? -v : v;
}

// The pattern x encodes to: the nearest finite value (ties: the even pattern), x beyond the
// largest finite value (infinities too) saturating to it, NaN to a NaN.
uint8_t nearest_pattern(const Fp8Spec& f, double x) {
  if (std::isnan(x)) return 0x7f;
  int best = -1;
  double best_d = INFINITY;
  for (int p = 0; p < 256; ++p) {
    const double v = defined_value(f, static_cast<uint8_t>(p));
    if (!std::isfinite(v) || std::signbit(v) != std::signbit(x)) continue;
    const double d = std::isinf(x) ? -std::fabs(v) : std::fabs(v - x);
    if (d < best_d || (d == best_d && (p & 1) == 0)) best = p, best_d = d;
  }
  return static_cast<uint8_t>(best);
}

std::vector<uint8_t> all_patterns() {
  std::vector<uint8_t> v(256);
  for (int p = 0; p < 256; ++p) v[p] = static_cast<uint8_t>(p);
  return v;
}

MapBody cast_to(Scalar to) {
  return [to](Builder& b, const std::vector<Value*>& v) { return b.cast(v[0], DType{to, false}); };
}

}  // namespace

TEST_CASE("fp8 decodes every pattern as the format defines it (cast to f32)") {
  for (const Fp8Spec& f : {kE4M3, kE5M2}) {
    CAPTURE(ir::name_of(f.s));
    Function fn("fp8_to_f32");
    build_map_kernel(fn, {f.s}, Scalar::f32, cast_to(Scalar::f32), 64);
    std::vector<float> got = run_map<float>(fn, std::vector<std::vector<uint8_t>>{all_patterns()}, 64);
    for (int p = 0; p < 256; ++p) {
      CAPTURE(p);
      const double want = defined_value(f, static_cast<uint8_t>(p));
      if (std::isnan(want)) CHECK(std::isnan(got[p]));
      else CHECK(got[p] == want);
    }
  }
  // Landmarks of both formats, from the OCP specification's tables.
  CHECK(defined_value(kE4M3, 0x7e) == 448);
  CHECK(defined_value(kE4M3, 0x01) == 0x1p-9);
  CHECK(defined_value(kE4M3, 0x38) == 1.0);
  CHECK(defined_value(kE5M2, 0x7b) == 57344);
  CHECK(defined_value(kE5M2, 0x01) == 0x1p-16);
  CHECK(std::isinf(defined_value(kE5M2, 0x7c)));
}

TEST_CASE("f32 to fp8 rounds to the nearest value, ties to even, and saturates") {
  for (const Fp8Spec& f : {kE4M3, kE5M2}) {
    CAPTURE(ir::name_of(f.s));
    std::vector<float> x;
    // Every finite value, the midpoints between neighbours (ties) and points just off them.
    for (int p = 0; p < 128; ++p) {
      const double v = defined_value(f, static_cast<uint8_t>(p)), w = defined_value(f, static_cast<uint8_t>(p + 1));
      if (!std::isfinite(v)) continue;
      x.push_back(static_cast<float>(v));
      x.push_back(static_cast<float>(-v));
      if (!std::isfinite(w)) continue;
      const float mid = static_cast<float>((v + w) / 2);
      x.push_back(mid);
      x.push_back(-mid);
      x.push_back(std::nextafter(mid, 0.0f));
      x.push_back(std::nextafter(mid, INFINITY));
    }
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> e(-12.0f, 17.0f);
    for (int k = 0; k < 400; ++k) x.push_back((k & 1 ? -1.0f : 1.0f) * std::exp2(e(rng)));
    for (float s : {500.0f, 1e6f, 60000.0f, 65536.0f, INFINITY, -INFINITY, 1e-30f, -1e-30f}) x.push_back(s);
    Function fn("f32_to_fp8");
    build_map_kernel(fn, {Scalar::f32}, f.s, cast_to(f.s), 64);
    std::vector<uint8_t> got = run_map<uint8_t>(fn, std::vector<std::vector<float>>{x}, 64);
    for (size_t i = 0; i < x.size(); ++i) {
      CAPTURE(x[i]);
      CHECK(static_cast<int>(got[i]) == static_cast<int>(nearest_pattern(f, x[i])));
    }
  }
}

TEST_CASE("fp8 casts to f16, bf16 and the other fp8 format, and NaN stays NaN") {
  Function h("e4m3_to_f16");
  build_map_kernel(h, {Scalar::f8e4m3}, Scalar::f16, cast_to(Scalar::f16), 64);
  std::vector<uint16_t> got = run_map<uint16_t>(h, std::vector<std::vector<uint8_t>>{all_patterns()}, 64);
  for (int p = 0; p < 256; ++p) {
    const double want = defined_value(kE4M3, static_cast<uint8_t>(p));
    if (std::isnan(want)) CHECK(std::isnan(tessel::interp::f16_to_double(got[p])));
    else CHECK(tessel::interp::f16_to_double(got[p]) == want);  // e4m3 values are all f16 values
  }
  Function b("e5m2_to_bf16");
  build_map_kernel(b, {Scalar::f8e5m2}, Scalar::bf16, cast_to(Scalar::bf16), 64);
  std::vector<uint16_t> gb = run_map<uint16_t>(b, std::vector<std::vector<uint8_t>>{all_patterns()}, 64);
  for (int p = 0; p < 256; ++p) {
    const double want = defined_value(kE5M2, static_cast<uint8_t>(p));
    if (std::isnan(want)) CHECK(std::isnan(tessel::interp::bf16_to_double(gb[p])));
    else CHECK(tessel::interp::bf16_to_double(gb[p]) == want);
  }
  Function c("e5m2_to_e4m3");
  build_map_kernel(c, {Scalar::f8e5m2}, Scalar::f8e4m3, cast_to(Scalar::f8e4m3), 64);
  std::vector<uint8_t> gc = run_map<uint8_t>(c, std::vector<std::vector<uint8_t>>{all_patterns()}, 64);
  for (int p = 0; p < 256; ++p) {
    CAPTURE(p);
    const double v = defined_value(kE5M2, static_cast<uint8_t>(p));
    if (std::isnan(v)) CHECK((gc[p] & 0x7f) == 0x7f);
    else CHECK(static_cast<int>(gc[p]) == static_cast<int>(nearest_pattern(kE4M3, v)));
  }
}

TEST_CASE("the verifier rejects arithmetic on fp8 values") {
  Function fn("fp8_add");
  Value* p = fn.add_param("p", ptr_t(Scalar::f8e4m3));
  Builder b(fn);
  Value* x = b.value(OpKind::Load, {b.splat(p, {16})});
  bin(b, OpKind::Add, x, x);
  CHECK_THROWS_WITH_AS(ir::verify(fn), doctest::Contains("8-bit float storage type"), tessel::VerifyError);
}
