// Interpreter: unsigned integer kinds (u8, u16, u32, u64): arithmetic, shifts, comparisons,
// reductions and casts read the bits as unsigned. Host references are plain C++ unsigned ops.
#include "interp_test_util.hpp"

using namespace interp_test;

namespace {

using BinFn = std::function<Value*(Builder&, Value*, Value*)>;

// out[i] = op(a[i], b[i]) over n elements of scalar kind s (C type T), 4 programs' worth.
template <class T, class Tout = T>
std::vector<Tout> run_binary(Scalar s, Scalar out, const std::vector<T>& a, const std::vector<T>& b, OpKind k) {
  Function f("unsigned_binary");
  build_map_kernel(f, {s, s}, out, [k](Builder& bb, const std::vector<Value*>& v) { return bin(bb, k, v[0], v[1]); },
                   64);
  return run_map<Tout>(f, std::vector<std::vector<T>>{a, b}, 64);
}

template <class T>
std::vector<T> random_words(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(rng());
  return v;
}

}  // namespace

TEST_CASE("u32 division, remainder, min, max and compares read the high bit as 2^31") {
  const size_t n = 1000;  // not a multiple of the block: the last program is masked
  std::vector<uint32_t> a = random_words<uint32_t>(n, 1), b = random_words<uint32_t>(n, 2);
  for (size_t i = 0; i < n; ++i) {
    if (i % 3 == 0) b[i] >>= (i % 29);  // small divisors too
    b[i] |= 1;                          // no division by zero
  }
  auto q = run_binary(Scalar::u32, Scalar::u32, a, b, OpKind::Div);
  auto r = run_binary(Scalar::u32, Scalar::u32, a, b, OpKind::Rem);
  auto mn = run_binary(Scalar::u32, Scalar::u32, a, b, OpKind::Min);
  auto mx = run_binary(Scalar::u32, Scalar::u32, a, b, OpKind::Max);
  auto lt = run_binary<uint32_t, uint8_t>(Scalar::u32, Scalar::i1, a, b, OpKind::CmpLt);
  auto ge = run_binary<uint32_t, uint8_t>(Scalar::u32, Scalar::i1, a, b, OpKind::CmpGe);
  auto sum = run_binary(Scalar::u32, Scalar::u32, a, b, OpKind::Add);
  for (size_t i = 0; i < n; ++i) {
    CHECK(q[i] == a[i] / b[i]);
    CHECK(r[i] == a[i] % b[i]);
    CHECK(mn[i] == std::min(a[i], b[i]));
    CHECK(mx[i] == std::max(a[i], b[i]));
    CHECK(lt[i] == (a[i] < b[i] ? 1 : 0));
    CHECK(ge[i] == (a[i] >= b[i] ? 1 : 0));
    CHECK(sum[i] == static_cast<uint32_t>(a[i] + b[i]));
  }
}

TEST_CASE("shifts of unsigned kinds are logical; amounts of the width or more give 0") {
  const size_t n = 300;
  std::vector<uint32_t> a = random_words<uint32_t>(n, 3), s(n);
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<uint32_t>(i % 40);  // 32..39 shift everything out
  auto shr = run_binary(Scalar::u32, Scalar::u32, a, s, OpKind::Shr);
  auto shl = run_binary(Scalar::u32, Scalar::u32, a, s, OpKind::Shl);
  for (size_t i = 0; i < n; ++i) {
    CHECK(shr[i] == (s[i] < 32 ? a[i] >> s[i] : 0u));
    CHECK(shl[i] == (s[i] < 32 ? a[i] << s[i] : 0u));
  }
  // u8: 0xF0 >> 4 is 0x0F, not the sign-filled 0xFF
  std::vector<uint8_t> x = {0xF0, 0x80, 0xFF, 0x01}, k = {4, 7, 1, 0};
  CHECK(run_binary(Scalar::u8, Scalar::u8, x, k, OpKind::Shr) == std::vector<uint8_t>{0x0F, 0x01, 0x7F, 0x01});
}

TEST_CASE("u8 and u64 order as unsigned values") {
  std::vector<uint8_t> a = {200, 100, 255, 0, 128}, b = {100, 200, 1, 255, 127};
  CHECK(run_binary(Scalar::u8, Scalar::u8, a, b, OpKind::Max) == std::vector<uint8_t>{200, 200, 255, 255, 128});
  CHECK(run_binary(Scalar::u8, Scalar::u8, a, b, OpKind::Div) == std::vector<uint8_t>{2, 0, 255, 0, 1});
  const uint64_t big = 0xF000'0000'0000'0001ull;
  std::vector<uint64_t> x = {big, 5, big, 1ull << 63}, y = {3, big, 7, (1ull << 63) - 1};
  CHECK(run_binary<uint64_t, uint8_t>(Scalar::u64, Scalar::i1, x, y, OpKind::CmpGt) ==
        std::vector<uint8_t>{1, 0, 1, 1});
  CHECK(run_binary(Scalar::u64, Scalar::u64, x, y, OpKind::Div) ==
        std::vector<uint64_t>{big / 3, 0, big / 7, 1});
  CHECK(run_binary(Scalar::u64, Scalar::u64, x, y, OpKind::Rem) ==
        std::vector<uint64_t>{big % 3, 5, big % 7, 1});
}

TEST_CASE("casts from and to unsigned kinds zero-extend, wrap and saturate at 0 and 2^w - 1") {
  auto cast = [](Scalar from, Scalar to) {
    return [to](Builder& b, const std::vector<Value*>& v) { return b.cast(v[0], DType{to, false}); };
  };
  Function f1("u8_to_i32");
  build_map_kernel(f1, {Scalar::u8}, Scalar::i32, cast(Scalar::u8, Scalar::i32), 16);
  CHECK(run_map<int32_t>(f1, std::vector<std::vector<uint8_t>>{{200, 0, 255, 7}}, 16) ==
        std::vector<int32_t>{200, 0, 255, 7});
  Function f2("i32_to_u8");
  build_map_kernel(f2, {Scalar::i32}, Scalar::u8, cast(Scalar::i32, Scalar::u8), 16);
  CHECK(run_map<uint8_t>(f2, std::vector<std::vector<int32_t>>{{-1, 256, 300, 42}}, 16) ==
        std::vector<uint8_t>{255, 0, 44, 42});
  Function f3("u32_to_f32");
  build_map_kernel(f3, {Scalar::u32}, Scalar::f32, cast(Scalar::u32, Scalar::f32), 16);
  CHECK(run_map<float>(f3, std::vector<std::vector<uint32_t>>{{0xFFFFFFFFu, 0x80000000u, 3u, 0x80000081u}}, 16) ==
        std::vector<float>{4294967296.0f, 2147483648.0f, 3.0f, 2147483904.0f});
  Function f4("f32_to_u32");
  build_map_kernel(f4, {Scalar::f32}, Scalar::u32, cast(Scalar::f32, Scalar::u32), 16);
  CHECK(run_map<uint32_t>(f4, std::vector<std::vector<float>>{{-5.5f, 3e9f, 5e9f, std::nanf(""), 7.9f, INFINITY}},
                          16) == std::vector<uint32_t>{0, 3000000000u, 0xFFFFFFFFu, 0, 7, 0xFFFFFFFFu});
  Function f5("u64_to_f64");
  build_map_kernel(f5, {Scalar::u64}, Scalar::f64, cast(Scalar::u64, Scalar::f64), 16);
  CHECK(run_map<double>(f5, std::vector<std::vector<uint64_t>>{{~0ull, 1ull << 63, 12345}}, 16) ==
        std::vector<double>{18446744073709551616.0, 9223372036854775808.0, 12345.0});
  Function f6("u32_to_i64");
  build_map_kernel(f6, {Scalar::u32}, Scalar::i64, cast(Scalar::u32, Scalar::i64), 16);
  CHECK(run_map<int64_t>(f6, std::vector<std::vector<uint32_t>>{{0xFFFFFFFFu, 1u}}, 16) ==
        std::vector<int64_t>{4294967295ll, 1});
}

TEST_CASE("reductions of u32 tiles order and wrap as unsigned") {
  // One program reduces 256 words whose high bits are set in places.
  Function f("u32_reduce");
  Value* in = f.add_param("in", ptr_t(Scalar::u32));
  Value* out = f.add_param("out", ptr_t(Scalar::u32));
  Value* idx = f.add_param("idx", ptr_t(Scalar::i32));
  Builder b(f);
  Value* offs = b.arange(0, 256);
  Value* x = b.value(OpKind::Load, {bin(b, OpKind::AddPtr, b.splat(in, {256}), offs)});
  Value* mx = b.reduce(OpKind::ReduceMax, x, 0);
  Value* mn = b.reduce(OpKind::ReduceMin, x, 0);
  Value* sm = b.reduce(OpKind::ReduceSum, x, 0);
  Value* am = b.reduce(OpKind::ArgMax, x, 0);
  b.create(OpKind::Store, {out, mx});
  b.create(OpKind::Store, {bin(b, OpKind::AddPtr, out, b.const_int(1, scalar_t(Scalar::i32))), mn});
  b.create(OpKind::Store, {bin(b, OpKind::AddPtr, out, b.const_int(2, scalar_t(Scalar::i32))), sm});
  b.create(OpKind::Store, {idx, am});
  std::vector<uint32_t> data = random_words<uint32_t>(256, 9);
  std::vector<uint32_t> res(3, poison<uint32_t>());
  std::vector<int32_t> where(1, poison<int32_t>());
  std::vector<ArgValue> args{ArgValue::pointer(data.data()), ArgValue::pointer(res.data()),
                             ArgValue::pointer(where.data())};
  std::vector<MemRegion> mem{read_only(data), region(res), region(where)};
  run_kernel(f, Grid{1}, args, mem);
  uint32_t want_sum = 0;
  for (uint32_t v : data) want_sum += v;
  auto it = std::max_element(data.begin(), data.end());
  CHECK(res[0] == *it);
  CHECK(res[1] == *std::min_element(data.begin(), data.end()));
  CHECK(res[2] == want_sum);
  CHECK(where[0] == static_cast<int32_t>(it - data.begin()));
}
