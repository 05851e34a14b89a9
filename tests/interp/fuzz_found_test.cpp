// Behaviours the differential fuzzer (tests/fuzz) found the GPU disagreeing with the interpreter
// on, each checked here against a host reference (and, in test_interp_gpu, on the GPU).
#include "interp_test_util.hpp"
#include "tessel/interp/float_formats.hpp"

using namespace interp_test;

TEST_CASE("shifts of i1: shr by any amount keeps the bit (the sign fills it), shl by 1 clears it") {
  // interpreter.hpp: a shift amount outside [0, width) gives 0 for shl and fills with the sign
  // bit for shr; an i1's only bit is its sign bit, so shr(a, 1) == a. The lowering gave 0.
  for (OpKind k : {OpKind::Shr, OpKind::Shl}) {
    CAPTURE(std::string(name_of(k)));
    Function f("shift_i1");
    build_map_kernel(f, {Scalar::i1, Scalar::i1}, Scalar::i1,
                     [k](Builder& b, const std::vector<Value*>& in) { return bin(b, k, in[0], in[1]); }, 64);
    std::mt19937 rng(29);
    std::vector<uint8_t> a(100), s(100);
    for (size_t i = 0; i < a.size(); ++i) a[i] = rng() & 1, s[i] = rng() & 1;
    std::vector<uint8_t> out = run_map<uint8_t, uint8_t>(f, {a, s}, 64);
    for (size_t i = 0; i < a.size(); ++i) {
      CAPTURE(i);
      const uint8_t want = k == OpKind::Shr ? a[i] : (s[i] ? 0 : a[i]);
      CHECK(int{out[i]} == int{want});
    }
  }
}

TEST_CASE("rem of an infinity is NaN and a zero remainder has the dividend's sign, as fmod's") {
  // The GPU's expansion a - trunc(a / b) * b returned the infinity, and +0 for -3 rem 3.
  Function f("rem_inf");
  build_map_kernel(f, {Scalar::f32, Scalar::f32}, Scalar::f32,
                   [](Builder& b, const std::vector<Value*>& in) { return bin(b, OpKind::Rem, in[0], in[1]); }, 32);
  const float inf = INFINITY, nan = NAN;
  // Pairs where the GPU's a - trunc(a / b) * b is exact (interpreter.hpp: rem is fmod).
  const std::vector<std::pair<float, float>> cases = {
      {inf, inf}, {-inf, inf}, {inf, -inf}, {-inf, -inf}, {inf, 2.f}, {-inf, 0.5f}, {inf, 0.f}, {3.f, inf},
      {-3.f, -inf}, {0.f, 0.f}, {5.5f, 2.f}, {-5.5f, 2.f}, {7.f, -4.f}, {nan, 1.f}, {1.f, nan}, {-0.f, 3.f},
      {-3.f, 3.f}, {-3.f, -3.f}, {3.f, -3.f}, {-4.f, 2.f}, {-2.5f, 0.5f}, {-0.f, -inf}};
  std::vector<float> a, b;
  for (const auto& [x, y] : cases) a.push_back(x), b.push_back(y);
  std::vector<float> out = run_map<float, float>(f, {a, b}, 32);
  for (size_t i = 0; i < cases.size(); ++i) {
    CAPTURE(a[i]);
    CAPTURE(b[i]);
    const float want = std::fmod(a[i], b[i]);
    if (std::isnan(want)) CHECK(std::isnan(out[i]));
    else CHECK((out[i] == want && std::signbit(out[i]) == std::signbit(want)));
  }
}

TEST_CASE("neg and abs of the narrow integers' minimum wrap, also when widened afterwards") {
  // -(-32768) and |-32768| are -32768 in i16 (interpreter.hpp: integers wrap; abs(INT_MIN) is
  // INT_MIN), so widening them gives -32768. On the GPU the widening was lost (+32768).
  for (Scalar s : {Scalar::i8, Scalar::i16}) {
    for (OpKind k : {OpKind::Neg, OpKind::Abs}) {
      CAPTURE(std::string(name_of(s)));
      CAPTURE(std::string(name_of(k)));
      Function f("narrow_neg");
      build_map_kernel(f, {s}, Scalar::i32,
                       [k](Builder& b, const std::vector<Value*>& in) { return b.cast(b.value(k, {in[0]}), i32()); }, 16);
      const int bits = s == Scalar::i8 ? 8 : 16;
      const int64_t lo = -(int64_t{1} << (bits - 1)), hi = (int64_t{1} << (bits - 1)) - 1;
      std::vector<int16_t> xs = {static_cast<int16_t>(lo), static_cast<int16_t>(lo + 1), -1, 0, 1, 5, static_cast<int16_t>(hi)};
      std::vector<int32_t> out;
      if (s == Scalar::i8) {
        std::vector<int8_t> in(xs.begin(), xs.end());
        out = run_map<int32_t, int8_t>(f, {in}, 16);
      } else {
        out = run_map<int32_t, int16_t>(f, {xs}, 16);
      }
      for (size_t i = 0; i < xs.size(); ++i) {
        CAPTURE(xs[i]);
        int64_t v = k == OpKind::Neg ? -int64_t{xs[i]} : std::llabs(xs[i]);
        if (v > hi) v -= int64_t{1} << bits;  // wraps: only the minimum does
        CHECK(out[i] == v);
      }
    }
  }
}

TEST_CASE("f16 and bf16 scalar arguments reach the kernel rounded to their format") {
  // interpreter.hpp: Float arguments are rounded to the parameter's type. The GPU launcher
  // passed the double's low bytes for 2-byte floats (NaN or garbage in the kernel).
  for (Scalar s : {Scalar::f16, Scalar::bf16}) {
    CAPTURE(std::string(name_of(s)));
    Function f("half_arg");
    Value* out = f.add_param("out", ptr_t(Scalar::f32));
    Value* x = f.add_param("x", scalar_t(s));
    Builder b(f);
    b.create(OpKind::Store, {bin(b, OpKind::AddPtr, out, b.program_id(0)), b.cast(x, f32())});
    for (double v : {3.140625, -2.5, 1e-3, 65504.0, 3.0e4 + 0.3}) {
      CAPTURE(v);
      std::vector<float> os(1, std::nanf(""));
      ArgValue args[] = {ArgValue::pointer(os.data()), ArgValue::floating(v)};
      MemRegion mem[] = {region(os)};
      run_kernel(f, Grid{}, args, mem);
      const double want = s == Scalar::f16 ? tessel::interp::f16_to_double(tessel::interp::f16_from_double(v))
                                           : tessel::interp::bf16_to_double(tessel::interp::bf16_from_double(v));
      CHECK(os[0] == static_cast<float>(want));
    }
  }
}

TEST_CASE("min and max of narrow integers with 0, compared with 0") {
  // cmp_eq(min(x, 0), 0) is x >= 0 and cmp_eq(max(x, 0), 0) is x <= 0. On the GPU both came out
  // inverted for i8 and i16 (fuzz seed 4567): ptxas mistranslated min.s16 / max.s16 with a zero
  // operand compared with zero.
  for (Scalar s : {Scalar::i8, Scalar::i16}) {
    for (OpKind k : {OpKind::Min, OpKind::Max}) {
      CAPTURE(std::string(name_of(s)));
      CAPTURE(std::string(name_of(k)));
      Function f("narrow_min_zero");
      build_map_kernel(f, {s}, Scalar::i1,
                       [k, s](Builder& b, const std::vector<Value*>& in) {
                         Value* zero = b.const_int(0, Type{DType{s}, in[0]->type.shape});
                         return bin(b, OpKind::CmpEq, bin(b, k, in[0], zero), zero);
                       },
                       16);
      std::vector<int16_t> xs = {-1, -5, 3, 0, -128, 127, 1, -2};
      std::vector<uint8_t> out;
      if (s == Scalar::i8) {
        std::vector<int8_t> in(xs.begin(), xs.end());
        out = run_map<uint8_t, int8_t>(f, {in}, 16);
      } else {
        out = run_map<uint8_t, int16_t>(f, {xs}, 16);
      }
      for (size_t i = 0; i < xs.size(); ++i) {
        CAPTURE(xs[i]);
        CHECK(int{out[i]} == (k == OpKind::Min ? xs[i] >= 0 : xs[i] <= 0));
      }
    }
  }
}

TEST_CASE("abs of INT_MIN stays INT_MIN, also as a dividend") {
  // abs(INT_MIN) wraps to INT_MIN (interpreter.hpp), so rem(abs(INT_MIN), 57) is -41. On the GPU
  // it came out 41 (fuzz seed 27245): ptxas took abs.s32's result for non-negative.
  Function f("abs_rem");
  build_map_kernel(f, {Scalar::i32, Scalar::i32}, Scalar::i32,
                   [](Builder& b, const std::vector<Value*>& in) {
                     return bin(b, OpKind::Rem, b.value(OpKind::Abs, {in[0]}), in[1]);
                   },
                   16);
  const std::vector<int32_t> xs = {INT32_MIN, -7, 5, INT32_MIN + 1, INT32_MIN, -100};
  const std::vector<int32_t> ys = {57, 3, 4, 57, 2, -7};
  std::vector<int32_t> out = run_map<int32_t, int32_t>(f, {xs, ys}, 16);
  for (size_t i = 0; i < xs.size(); ++i) {
    CAPTURE(xs[i]);
    CAPTURE(ys[i]);
    const int64_t a = xs[i] == INT32_MIN ? int64_t{INT32_MIN} : std::llabs(xs[i]);
    CHECK(out[i] == a % ys[i]);
  }
}
