// dot in the interpreter: f16/bf16/f32 (tf32 and exact)/i8 against a host model of the
// reference semantics (k ascending, f32 rounding per product and sum), and tf32 rounding.
#include <bit>
#include <cstdint>
#include <optional>
#include <random>

#include "interp_test_util.hpp"
#include "tessel/interp/float_formats.hpp"

using namespace interp_test;

namespace {

// i32[R, C] tile holding r * ld + c.
Value* offsets2d(Builder& b, int64_t R, int64_t C, Value* ld) {
  Value* rows = b.broadcast(b.expand_dims(b.arange(0, R), 1), {R, C});
  Value* cols = b.broadcast(b.expand_dims(b.arange(0, C), 0), {R, C});
  return bin(b, OpKind::Add, bin(b, OpKind::Mul, rows, b.splat(ld, {R, C})), cols);
}

// out[M,N] = dot(a[M,K], b[K,N], c[M,N]) with row-major operands of leading dims K, N, N.
// `in_b`: b's element type where it differs from a's (two fp8 formats).
void build_dot_kernel(Function& f, Scalar in, Scalar acc, int64_t M, int64_t N, int64_t K, bool tf32,
                      std::optional<Scalar> in_b = {}) {
  Value* pa = f.add_param("a", ptr_t(in));
  Value* pb = f.add_param("b", ptr_t(in_b.value_or(in)));
  Value* pc = f.add_param("c", ptr_t(acc));
  Value* po = f.add_param("out", ptr_t(acc));
  Builder b(f);
  Value* ldk = b.const_int(K, scalar_t(Scalar::i32));
  Value* ldn = b.const_int(N, scalar_t(Scalar::i32));
  Value* a = b.value(OpKind::Load, {bin(b, OpKind::AddPtr, b.splat(pa, {M, K}), offsets2d(b, M, K, ldk))});
  Value* bt = b.value(OpKind::Load, {bin(b, OpKind::AddPtr, b.splat(pb, {K, N}), offsets2d(b, K, N, ldn))});
  Value* offs_c = offsets2d(b, M, N, ldn);
  Value* c = b.value(OpKind::Load, {bin(b, OpKind::AddPtr, b.splat(pc, {M, N}), offs_c)});
  Value* r = b.dot(a, bt, c, tf32);
  b.create(OpKind::Store, {bin(b, OpKind::AddPtr, b.splat(po, {M, N}), offs_c), r});
}

// Runs the kernel on host arrays (storage types A for operands, C for acc/out).
template <class A, class C>
std::vector<C> run_dot(Scalar in, Scalar acc, int64_t M, int64_t N, int64_t K, bool tf32, const std::vector<A>& a,
                       const std::vector<A>& bm, const std::vector<C>& c, std::optional<Scalar> in_b = {}) {
  Function f("dot");
  build_dot_kernel(f, in, acc, M, N, K, tf32, in_b);
  std::vector<C> out(static_cast<size_t>(M * N), poison<C>());
  std::vector<ArgValue> args{ArgValue::pointer(a.data()), ArgValue::pointer(bm.data()), ArgValue::pointer(c.data()),
                             ArgValue::pointer(out.data())};
  std::vector<MemRegion> mem{read_only(a), read_only(bm), read_only(c), region(out)};
  run_kernel(f, Grid{1}, args, mem);
  return out;
}

// The host model: acc + sum over k ascending, one f32 rounding per product and per sum.
std::vector<float> model(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& c,
                         int64_t M, int64_t N, int64_t K) {
  std::vector<float> r(static_cast<size_t>(M * N));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      float s = c[m * N + n];
      for (int64_t k = 0; k < K; ++k) {
        volatile float p = a[m * K + k] * b[k * N + n];
        s = s + p;
      }
      r[m * N + n] = s;
    }
  return r;
}

std::vector<float> randoms(size_t n, uint32_t seed, float lo = -3.0f, float hi = 3.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(gen);
  return v;
}

}  // namespace

TEST_CASE("round_to_tf32 keeps 10 mantissa bits, rounding to nearest with ties away from zero") {
  CHECK(round_to_tf32(1.0f) == 1.0f);
  const float ulp = std::ldexp(1.0f, -10);  // tf32 spacing at 1
  CHECK(round_to_tf32(1.0f + ulp / 2) == 1.0f + ulp);                      // a tie rounds away from zero
  CHECK(round_to_tf32(-(1.0f + ulp / 2)) == -(1.0f + ulp));
  CHECK(round_to_tf32(1.0f + ulp / 2 - std::ldexp(1.0f, -23)) == 1.0f);    // just below the tie
  CHECK(round_to_tf32(1.0f + 3 * ulp / 2) == 1.0f + 2 * ulp);              // away, not to even
  CHECK(round_to_tf32(0.1f) == std::bit_cast<float>(0x3dccc000u));         // 0x3dcccccd: low bits 0xccd, down
  CHECK(round_to_tf32(std::bit_cast<float>(0x3dcdd001u)) == std::bit_cast<float>(0x3dcde000u));  // above half: up
  CHECK(std::isinf(round_to_tf32(std::numeric_limits<float>::infinity())));
  CHECK(std::isnan(round_to_tf32(std::numeric_limits<float>::quiet_NaN())));
  CHECK(std::isinf(round_to_tf32(std::numeric_limits<float>::max())));     // carries into the exponent
  for (float x : randoms(1000, 5, -100.0f, 100.0f)) {
    float r = round_to_tf32(x);
    CHECK((std::bit_cast<uint32_t>(r) & 0x1fffu) == 0);
    CHECK(std::fabs(r - x) <= std::fabs(x) * std::ldexp(1.0f, -11));
  }
}

TEST_CASE("dot on f16 and bf16 tiles matches the k-ascending f32 model exactly") {
  struct Case {
    int64_t M, N, K;
  };
  for (Case cs : {Case{16, 16, 16}, Case{32, 16, 64}, Case{16, 64, 32}}) {
    for (Scalar s : {Scalar::f16, Scalar::bf16}) {
      CAPTURE(cs.M);
      CAPTURE(cs.N);
      CAPTURE(cs.K);
      CAPTURE(static_cast<int>(s));
      auto enc = [&](double v) { return s == Scalar::f16 ? f16_from_double(v) : bf16_from_double(v); };
      auto dec = [&](uint16_t v) { return s == Scalar::f16 ? f16_to_double(v) : bf16_to_double(v); };
      std::vector<uint16_t> a, b;
      std::vector<float> af, bf;
      for (float x : randoms(cs.M * cs.K, 1)) a.push_back(enc(x)), af.push_back(static_cast<float>(dec(a.back())));
      for (float x : randoms(cs.K * cs.N, 2)) b.push_back(enc(x)), bf.push_back(static_cast<float>(dec(b.back())));
      std::vector<float> c = randoms(cs.M * cs.N, 3);
      auto out = run_dot<uint16_t, float>(s, Scalar::f32, cs.M, cs.N, cs.K, true, a, b, c);
      auto want = model(af, bf, c, cs.M, cs.N, cs.K);
      for (size_t i = 0; i < out.size(); ++i) REQUIRE(std::bit_cast<uint32_t>(out[i]) == std::bit_cast<uint32_t>(want[i]));
      // and close to the double-precision product (the model is not trivially wrong)
      double err = 0;
      for (int64_t m = 0; m < cs.M; ++m)
        for (int64_t n = 0; n < cs.N; ++n) {
          double ref = c[m * cs.N + n];
          for (int64_t k = 0; k < cs.K; ++k) ref += static_cast<double>(af[m * cs.K + k]) * bf[k * cs.N + n];
          err = std::max(err, std::fabs(ref - out[m * cs.N + n]));
        }
      CHECK(err < 1e-3);
      CHECK(err > 0);  // f32 sums of 16-bit products do round somewhere
    }
  }
}

TEST_CASE("dot on f32 tiles: allow_tf32 rounds the inputs to tf32 first; without it, exact f32 products") {
  const int64_t M = 16, N = 32, K = 16;
  auto a = randoms(M * K, 7), b = randoms(K * N, 8), c = randoms(M * N, 9);
  auto exact = run_dot<float, float>(Scalar::f32, Scalar::f32, M, N, K, false, a, b, c);
  auto tf32 = run_dot<float, float>(Scalar::f32, Scalar::f32, M, N, K, true, a, b, c);
  auto want_exact = model(a, b, c, M, N, K);
  std::vector<float> at(a), bt(b);
  for (auto& x : at) x = round_to_tf32(x);
  for (auto& x : bt) x = round_to_tf32(x);
  auto want_tf32 = model(at, bt, c, M, N, K);
  int differ = 0;
  for (size_t i = 0; i < exact.size(); ++i) {
    double abs_sum = std::fabs(c[i]);  // sum of |a||b| (+|c|): the scale of the rounding errors
    for (int64_t k = 0; k < K; ++k) abs_sum += std::fabs(a[(i / N) * K + k] * b[k * N + i % N]);
    REQUIRE(std::bit_cast<uint32_t>(exact[i]) == std::bit_cast<uint32_t>(want_exact[i]));
    REQUIRE(std::bit_cast<uint32_t>(tf32[i]) == std::bit_cast<uint32_t>(want_tf32[i]));
    differ += exact[i] != tf32[i];
    CHECK(std::fabs(exact[i] - tf32[i]) <= 2 * std::ldexp(1.0, -11) * abs_sum);
  }
  CHECK(differ > static_cast<int>(exact.size()) / 2);  // tf32 rounding is visible
}

TEST_CASE("dot on i8 tiles accumulates in i32 and wraps") {
  const int64_t M = 16, N = 16, K = 64;
  std::mt19937 gen(4);
  std::uniform_int_distribution<int> d(-128, 127);
  std::vector<int8_t> a(M * K), b(K * N);
  for (auto& x : a) x = static_cast<int8_t>(d(gen));
  for (auto& x : b) x = static_cast<int8_t>(d(gen));
  std::vector<int32_t> c(M * N);
  for (size_t i = 0; i < c.size(); ++i) c[i] = static_cast<int32_t>(d(gen)) * 1000;
  c[5] = INT32_MAX;  // wraps as soon as a positive product is added
  auto out = run_dot<int8_t, int32_t>(Scalar::i8, Scalar::i32, M, N, K, false, a, b, c);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      int64_t ref = c[m * N + n];
      for (int64_t k = 0; k < K; ++k) ref += int64_t{a[m * K + k]} * b[k * N + n];
      CHECK(out[m * N + n] == static_cast<int32_t>(static_cast<uint32_t>(ref)));
    }
  CHECK(out[5] != INT32_MAX);
}

TEST_CASE("dot on fp8 tiles (e4m3, e5m2, mixed) matches the k-ascending f32 model exactly") {
  // Products of two fp8 values are exact in f32 (at most 8 significant bits), so the model is
  // the f16 one on the decoded values. Shapes: mma.sync-sized, and warpgroup-sized (wgmma on
  // sm_90a when test_interp_gpu reruns this).
  struct Case {
    int64_t M, N, K;
  };
  struct Formats {
    Scalar a, b;
  };
  for (Case cs : {Case{16, 16, 32}, Case{64, 64, 64}, Case{128, 64, 128}})
    for (Formats fm : {Formats{Scalar::f8e4m3, Scalar::f8e4m3}, Formats{Scalar::f8e5m2, Scalar::f8e5m2},
                       Formats{Scalar::f8e4m3, Scalar::f8e5m2}}) {
      CAPTURE(cs.M);
      CAPTURE(cs.N);
      CAPTURE(cs.K);
      CAPTURE(static_cast<int>(fm.a));
      CAPTURE(static_cast<int>(fm.b));
      auto enc = [](Scalar s, double v) { return s == Scalar::f8e4m3 ? f8e4m3_from_double(v) : f8e5m2_from_double(v); };
      auto dec = [](Scalar s, uint8_t v) { return s == Scalar::f8e4m3 ? f8e4m3_to_double(v) : f8e5m2_to_double(v); };
      std::vector<uint8_t> a, b;
      std::vector<float> af, bf;
      for (float x : randoms(cs.M * cs.K, 11, -20.0f, 20.0f))
        a.push_back(enc(fm.a, x)), af.push_back(static_cast<float>(dec(fm.a, a.back())));
      for (float x : randoms(cs.K * cs.N, 12, -2.0f, 2.0f))
        b.push_back(enc(fm.b, x)), bf.push_back(static_cast<float>(dec(fm.b, b.back())));
      std::vector<float> c = randoms(cs.M * cs.N, 13);
      auto out = run_dot<uint8_t, float>(fm.a, Scalar::f32, cs.M, cs.N, cs.K, false, a, b, c, fm.b);
      auto want = model(af, bf, c, cs.M, cs.N, cs.K);
      for (size_t i = 0; i < out.size(); ++i) REQUIRE(std::bit_cast<uint32_t>(out[i]) == std::bit_cast<uint32_t>(want[i]));
      // The inputs really are fp8: few distinct values, and the sums far from 0.
      double big = 0;
      for (float x : out) big = std::max(big, std::fabs(static_cast<double>(x)));
      CHECK(big > 10);
    }
}
