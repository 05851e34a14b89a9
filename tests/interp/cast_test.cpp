// Interpreter: casts between ints, floats (f16/bf16/f32/f64), i1 and pointers.
#include "interp_test_util.hpp"
#include "tessel/interp/float_formats.hpp"

using namespace interp_test;

namespace {

template <class Tout, class Tin>
std::vector<Tout> run_cast(Scalar from, Scalar to, const std::vector<Tin>& x) {
  Function f("cast");
  build_map_kernel(f, {from}, to,
                   [to](Builder& b, const std::vector<Value*>& v) { return b.cast(v[0], DType{to, false}); }, 16);
  return run_map<Tout>(f, std::vector<std::vector<Tin>>{x}, 16);
}

}  // namespace

TEST_CASE("float to int truncates toward zero, saturates, and maps NaN to 0") {
  const float nan = std::nanf(""), inf = INFINITY;
  std::vector<float> x = {2.7f, -2.7f, 3e9f, -3e9f, nan, inf, -inf, -0.5f, 2147483520.0f, 1e20f};
  CHECK(run_cast<int32_t>(Scalar::f32, Scalar::i32, x) ==
        std::vector<int32_t>{2, -2, INT32_MAX, INT32_MIN, 0, INT32_MAX, INT32_MIN, 0, 2147483520, INT32_MAX});
  CHECK(run_cast<int8_t>(Scalar::f32, Scalar::i8, std::vector<float>{300.f, -300.f, 127.9f, -128.9f, nan, 5.5f}) ==
        std::vector<int8_t>{127, -128, 127, -128, 0, 5});
  CHECK(run_cast<int64_t>(Scalar::f32, Scalar::i64, std::vector<float>{1e19f, -1e19f, 1e18f, nan}) ==
        std::vector<int64_t>{INT64_MAX, INT64_MIN, 999999984306749440, 0});
  // to i1: nonzero (NaN included) is true
  CHECK(run_cast<uint8_t>(Scalar::f32, Scalar::i1, std::vector<float>{0.0f, -0.0f, 0.25f, nan, -3.f}) ==
        std::vector<uint8_t>{0, 0, 1, 1, 1});
}

TEST_CASE("int to int wraps; int to i1 is nonzero; i1 widens to 0 or 1") {
  CHECK(run_cast<int8_t>(Scalar::i32, Scalar::i8, std::vector<int32_t>{200, 0x1234, -129, 127, -1}) ==
        std::vector<int8_t>{-56, 0x34, 127, 127, -1});
  CHECK(run_cast<int64_t>(Scalar::i8, Scalar::i64, std::vector<int8_t>{-128, -1, 5}) ==
        std::vector<int64_t>{-128, -1, 5});
  CHECK(run_cast<int16_t>(Scalar::i64, Scalar::i16, std::vector<int64_t>{0x1'0000'8000, -32769, 42}) ==
        std::vector<int16_t>{-32768, 32767, 42});
  CHECK(run_cast<uint8_t>(Scalar::i32, Scalar::i1, std::vector<int32_t>{0, 2, -1, 256}) ==
        std::vector<uint8_t>{0, 1, 1, 1});
  CHECK(run_cast<int32_t>(Scalar::i1, Scalar::i32, std::vector<uint8_t>{0, 1, 9}) ==
        std::vector<int32_t>{0, 1, 1});
  CHECK(run_cast<float>(Scalar::i1, Scalar::f32, std::vector<uint8_t>{0, 1}) == std::vector<float>{0.0f, 1.0f});
}

TEST_CASE("int to float rounds to nearest even, once") {
  // f32 has 24 bits: 2^24 + 1 ties down to even, 2^24 + 3 ties up.
  CHECK(run_cast<float>(Scalar::i32, Scalar::f32, std::vector<int32_t>{16777217, 16777219, -16777217, 7}) ==
        std::vector<float>{16777216.f, 16777220.f, -16777216.f, 7.f});
  // f16 has 11 bits: 2049 -> 2048, 2051 -> 2052; 65520 and above overflow to inf.
  auto h = run_cast<uint16_t>(Scalar::i32, Scalar::f16, std::vector<int32_t>{2049, 2051, 65504, 65519, 65520, -3});
  CHECK(f16_to_double(h[0]) == 2048);
  CHECK(f16_to_double(h[1]) == 2052);
  CHECK(f16_to_double(h[2]) == 65504);
  CHECK(f16_to_double(h[3]) == 65504);
  CHECK(h[4] == 0x7C00);
  CHECK(f16_to_double(h[5]) == -3);
  // i64 -> bf16: 2^62 + 2^54 + 1 is just above a bf16 tie. Through double it would become the
  // tie itself and round down to 2^62; rounded once it goes up to 2^62 + 2^55.
  const int64_t v = (int64_t{1} << 62) + (int64_t{1} << 54) + 1;
  auto bf = run_cast<uint16_t>(Scalar::i64, Scalar::bf16, std::vector<int64_t>{v, -v});
  CHECK(bf16_to_double(bf[0]) == std::ldexp(1.0, 62) + std::ldexp(1.0, 55));
  CHECK(bf16_to_double(bf[1]) == -(std::ldexp(1.0, 62) + std::ldexp(1.0, 55)));
  // i64 -> f32 large values round once as well
  auto f = run_cast<float>(Scalar::i64, Scalar::f32, std::vector<int64_t>{v, INT64_MAX, INT64_MIN});
  CHECK(f == std::vector<float>{static_cast<float>(v), 0x1p63f, -0x1p63f});
}

TEST_CASE("float to float rounds to the narrower format") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-70000.f, 70000.f);
  std::vector<float> x(600);
  for (auto& e : x) e = dist(rng) * (rng() % 2 ? 1.0f : 1e-6f);  // normals and f16 subnormals
  x[0] = std::nanf("");
  x[1] = 1e-9f;  // underflows f16 to 0
  auto h = run_cast<uint16_t>(Scalar::f32, Scalar::f16, x);
  auto bf = run_cast<uint16_t>(Scalar::f32, Scalar::bf16, x);
  int64_t bad = 0;
  for (size_t i = 1; i < x.size(); ++i) {
    bad += h[i] != f16_from_double(x[i]);
    bad += bf[i] != bf16_from_double(x[i]);
  }
  CHECK(bad == 0);
  CHECK((h[0] & 0x7C00) == 0x7C00);
  CHECK((h[0] & 0x3FF) != 0);
  CHECK(h[1] == 0);
#ifdef __FLT16_MAX__
  // an independent oracle: the compiler's own correctly rounded double -> _Float16
  int64_t mismatch = 0;
  for (size_t i = 1; i < x.size(); ++i) {
    _Float16 ref = static_cast<_Float16>(static_cast<double>(x[i]));
    uint16_t rb;
    std::memcpy(&rb, &ref, 2);
    mismatch += rb != h[i];
  }
  CHECK(mismatch == 0);
#endif
  // f16 -> f32 -> f16 is exact; f32 -> f64 -> f32 is exact.
  auto back = run_cast<float>(Scalar::f16, Scalar::f32, h);
  for (size_t i = 1; i < x.size(); ++i) CHECK(static_cast<double>(back[i]) == f16_to_double(h[i]));
  auto d = run_cast<double>(Scalar::f32, Scalar::f64, x);
  auto f = run_cast<float>(Scalar::f64, Scalar::f32, d);
  for (size_t i = 1; i < x.size(); ++i) CHECK(f[i] == x[i]);
}

TEST_CASE("pointers cast to i64 and back, and to another pointee") {
  // out = load(cast<ptr<i32>>(cast<i64>(p) + 4 * k)): a hand-rolled addptr
  Function f("ptrcast");
  Value* p = f.add_param("p", ptr_t(Scalar::i32));
  Value* out = f.add_param("out", ptr_t(Scalar::i32));
  Value* raw = f.add_param("raw", ptr_t(Scalar::i8));
  Builder b(f);
  const int64_t n = 8;
  Value* k = b.cast(b.arange(0, n), i64());
  Value* addr = bin(b, OpKind::Add, b.splat(b.cast(p, i64()), {n}),
                    bin(b, OpKind::Mul, k, b.const_int(4, Type{i64(), {n}})));
  Value* ptrs = b.cast(addr, DType{Scalar::i32, true});
  Value* v = b.value(OpKind::Load, {ptrs});
  b.create(OpKind::Store, {bin(b, OpKind::AddPtr, b.splat(out, {n}), b.arange(0, n)), v});
  // a ptr<i8> reinterpreted as ptr<i32> reads whole words
  Value* word = b.value(OpKind::Load, {b.cast(raw, DType{Scalar::i32, true})});
  b.create(OpKind::Store, {bin(b, OpKind::AddPtr, out, b.const_int(n, scalar_t(Scalar::i32))), word});
  std::vector<int32_t> ps = {5, -6, 7, -8, 9, 10, 11, 12}, os(9, 0);
  std::vector<int32_t> word_src = {0x01020304};
  ArgValue args[] = {ArgValue::pointer(ps.data()), ArgValue::pointer(os.data()), ArgValue::pointer(word_src.data())};
  MemRegion mem[] = {read_only(ps), region(os), read_only(word_src)};
  run_kernel(f, Grid{}, args, mem);
  for (int i = 0; i < 8; ++i) CHECK(os[i] == ps[i]);
  CHECK(os[8] == 0x01020304);
}
