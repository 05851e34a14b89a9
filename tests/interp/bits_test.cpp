// Interpreter: bitcast and unpack. unpack's reference extracts the fields with shifts on the
// host; the int4 case covers every nibble value in every position of a word.
#include <bit>

#include "interp_test_util.hpp"
#include "tessel/interp/float_formats.hpp"

using namespace interp_test;

namespace {

// Loads a [rows, cols] tile of words (row-major), unpacks `bits`-wide fields along `axis` as
// `to`, and stores the [rows * c, cols] or [rows, cols * c] result row-major.
// The row-major linear index of each element of an r x c tile (i32).
Value* grid_offsets(Builder& b, int64_t r, int64_t c) {
  Value* ri = b.broadcast(b.expand_dims(b.arange(0, r), 1), {r, c});
  Value* ci = b.broadcast(b.expand_dims(b.arange(0, c), 0), {r, c});
  return bin(b, OpKind::Add, bin(b, OpKind::Mul, ri, b.splat(b.const_int(c, scalar_t(Scalar::i32)), {r, c})), ci);
}

template <class Word, class Out>
std::vector<Out> run_unpack(Scalar word, Scalar to, const std::vector<Word>& w, int64_t rows, int64_t cols, int axis,
                            int bits, int64_t zero = 0) {
  const int64_t count = static_cast<int64_t>(sizeof(Word) * 8) / bits;
  const int64_t orows = axis == 0 ? rows * count : rows, ocols = axis == 1 ? cols * count : cols;
  Function f("unpack");
  Value* in = f.add_param("in", ptr_t(word));
  Value* out = f.add_param("out", ptr_t(to));
  Builder b(f);
  Value* words = b.value(OpKind::Load, {bin(b, OpKind::AddPtr, b.splat(in, {rows, cols}), grid_offsets(b, rows, cols))});
  std::vector<tessel::ir::Attr> attrs{{"axis", int64_t{axis}}, {"bits", int64_t{bits}}};
  if (zero != 0) attrs.push_back({"zero", zero});
  Value* u = b.value(OpKind::Unpack, {words}, {Type{DType{to, false}, {orows, ocols}}}, attrs);
  b.create(OpKind::Store, {bin(b, OpKind::AddPtr, b.splat(out, {orows, ocols}), grid_offsets(b, orows, ocols)), u});
  std::vector<Out> res(static_cast<size_t>(orows * ocols), poison<Out>());
  std::vector<ArgValue> args{ArgValue::pointer(w.data()), ArgValue::pointer(res.data())};
  std::vector<MemRegion> mem{read_only(w), region(res)};
  run_kernel(f, Grid{1}, args, mem);
  return res;
}

// The host's reading: element (r, c) of the unpacked tile is field j of word (r / c, c) or (r, c / count).
template <class Word>
uint64_t field_of(const std::vector<Word>& w, int64_t cols, int axis, int bits, int64_t r, int64_t c) {
  const int64_t count = static_cast<int64_t>(sizeof(Word) * 8) / bits;
  const int64_t wr = axis == 0 ? r / count : r, wc = axis == 1 ? c / count : c;
  const int64_t j = axis == 0 ? r % count : c % count;
  return (static_cast<uint64_t>(w[wr * cols + wc]) >> (j * bits)) & ((uint64_t{1} << bits) - 1);
}

// rows x cols words whose nibble j of word (r, c) is (r * a + c * 3 + j) % 16: with a odd,
// every position of a word sees all 16 values.
std::vector<uint32_t> nibble_words(int64_t rows, int64_t cols, int64_t a) {
  std::vector<uint32_t> w(rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      uint32_t v = 0;
      for (int j = 0; j < 8; ++j) v |= static_cast<uint32_t>((r * a + c * 3 + j) % 16) << (4 * j);
      w[r * cols + c] = v;
    }
  return w;
}

}  // namespace

TEST_CASE("unpack int4: every nibble value in every position, along either axis, to f16, bf16, f32 and i32") {
  const int64_t rows = 16, cols = 16;
  const std::vector<uint32_t> w = nibble_words(rows, cols, 5);
  for (int axis : {0, 1}) {
    CAPTURE(axis);
    const int64_t orows = axis == 0 ? rows * 8 : rows, ocols = axis == 1 ? cols * 8 : cols;
    auto h = run_unpack<uint32_t, uint16_t>(Scalar::u32, Scalar::f16, w, rows, cols, axis, 4);
    auto bf = run_unpack<uint32_t, uint16_t>(Scalar::u32, Scalar::bf16, w, rows, cols, axis, 4);
    auto f = run_unpack<uint32_t, float>(Scalar::u32, Scalar::f32, w, rows, cols, axis, 4);
    auto i = run_unpack<uint32_t, int32_t>(Scalar::u32, Scalar::i32, w, rows, cols, axis, 4);
    std::array<int, 16> seen{};
    for (int64_t r = 0; r < orows; ++r)
      for (int64_t c = 0; c < ocols; ++c) {
        const uint64_t want = field_of(w, cols, axis, 4, r, c);
        const size_t k = static_cast<size_t>(r * ocols + c);
        CHECK(tessel::interp::f16_to_double(h[k]) == static_cast<double>(want));
        CHECK(tessel::interp::bf16_to_double(bf[k]) == static_cast<double>(want));
        CHECK(f[k] == static_cast<float>(want));
        CHECK(i[k] == static_cast<int32_t>(want));
        ++seen[want];
      }
    for (int v = 0; v < 16; ++v) CHECK(seen[v] == static_cast<int>(rows * cols * 8 / 16));
  }
}

TEST_CASE("unpack with a zero point: every nibble minus it, to f16, bf16, f32 and i32") {
  // Zero points at both ends and the symmetric 8.
  const int64_t rows = 16, cols = 16;
  const std::vector<uint32_t> w = nibble_words(rows, cols, 7);
  for (int64_t zero : {1, 8, 15})
    for (int axis : {0, 1}) {
      CAPTURE(zero);
      CAPTURE(axis);
      const int64_t orows = axis == 0 ? rows * 8 : rows, ocols = axis == 1 ? cols * 8 : cols;
      auto h = run_unpack<uint32_t, uint16_t>(Scalar::u32, Scalar::f16, w, rows, cols, axis, 4, zero);
      auto bf = run_unpack<uint32_t, uint16_t>(Scalar::u32, Scalar::bf16, w, rows, cols, axis, 4, zero);
      auto f = run_unpack<uint32_t, float>(Scalar::u32, Scalar::f32, w, rows, cols, axis, 4, zero);
      auto i = run_unpack<uint32_t, int32_t>(Scalar::u32, Scalar::i32, w, rows, cols, axis, 4, zero);
      auto i8 = run_unpack<uint32_t, int8_t>(Scalar::u32, Scalar::i8, w, rows, cols, axis, 4, zero);
      for (int64_t r = 0; r < orows; ++r)
        for (int64_t c = 0; c < ocols; ++c) {
          const int64_t want = static_cast<int64_t>(field_of(w, cols, axis, 4, r, c)) - zero;
          const size_t k = static_cast<size_t>(r * ocols + c);
          CHECK(tessel::interp::f16_to_double(h[k]) == static_cast<double>(want));
          CHECK(tessel::interp::bf16_to_double(bf[k]) == static_cast<double>(want));
          CHECK(f[k] == static_cast<float>(want));
          CHECK(i[k] == want);
          CHECK(i8[k] == want);
        }
    }
  // 8-bit fields of bytes minus 200, to f16 (the pair path's widest fields).
  std::vector<uint32_t> w8(8 * 16);
  std::mt19937_64 rng(5);
  for (auto& x : w8) x = static_cast<uint32_t>(rng());
  auto h = run_unpack<uint32_t, uint16_t>(Scalar::u32, Scalar::f16, w8, 8, 16, 1, 8, 200);
  for (int64_t r = 0; r < 8; ++r)
    for (int64_t c = 0; c < 64; ++c)
      CHECK(tessel::interp::f16_to_double(h[r * 64 + c]) ==
            static_cast<double>(static_cast<int64_t>(field_of(w8, 16, 1, 8, r, c)) - 200));
}

TEST_CASE("f16 and bf16 arithmetic on unpacked fields and on loaded tiles rounds like one op at a time") {
  // (q * x + x) - q for q the unpacked fields minus 8 and x a loaded f16/bf16 tile: the GPU runs
  // these two lanes per instruction (tests/interp_gpu compares every result with this).
  const int64_t rows = 8, cols = 64;
  std::mt19937_64 rng(9);
  std::vector<uint32_t> w(rows * cols);
  for (auto& x : w) x = static_cast<uint32_t>(rng());
  for (Scalar hs : {Scalar::f16, Scalar::bf16}) {
    CAPTURE(static_cast<int>(hs));
    const bool bf = hs == Scalar::bf16;
    auto to_double = [&](uint16_t v) { return bf ? tessel::interp::bf16_to_double(v) : tessel::interp::f16_to_double(v); };
    auto round = [&](double v) { return bf ? tessel::interp::bf16_from_double(v) : tessel::interp::f16_from_double(v); };
    std::vector<uint16_t> x(rows * 8 * cols);
    for (auto& v : x) v = round(std::uniform_real_distribution<double>(-3, 3)(rng));
    Function f("unpack_arith");
    Value* in = f.add_param("w", ptr_t(Scalar::u32));
    Value* xs = f.add_param("x", ptr_t(hs));
    Value* out = f.add_param("out", ptr_t(hs));
    Builder b(f);
    auto offsets = [&](int64_t r, int64_t c) { return grid_offsets(b, r, c); };
    const tessel::ir::Shape s{rows * 8, cols};
    Value* words = b.value(OpKind::Load, {bin(b, OpKind::AddPtr, b.splat(in, {rows, cols}), offsets(rows, cols))});
    Value* q = b.value(OpKind::Unpack, {words}, {Type{DType{hs, false}, s}},
                       {{"axis", int64_t{0}}, {"bits", int64_t{4}}, {"zero", int64_t{8}}});
    Value* xv = b.value(OpKind::Load, {bin(b, OpKind::AddPtr, b.splat(xs, s), offsets(s[0], s[1]))});
    Value* y = bin(b, OpKind::Sub, bin(b, OpKind::Add, bin(b, OpKind::Mul, q, xv), xv), q);
    b.create(OpKind::Store, {bin(b, OpKind::AddPtr, b.splat(out, s), offsets(s[0], s[1])), y});
    std::vector<uint16_t> res(x.size(), 0xFFFF);
    std::vector<ArgValue> args{ArgValue::pointer(w.data()), ArgValue::pointer(x.data()), ArgValue::pointer(res.data())};
    std::vector<MemRegion> mem{read_only(w), read_only(x), region(res)};
    run_kernel(f, Grid{1}, args, mem);
    for (int64_t r = 0; r < s[0]; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        const size_t k = static_cast<size_t>(r * cols + c);
        const double qv = static_cast<double>(static_cast<int64_t>(field_of(w, cols, 0, 4, r, c)) - 8);
        const double xk = to_double(x[k]);
        const double want = to_double(round(to_double(round(to_double(round(qv * xk)) + xk)) - qv));
        CHECK(to_double(res[k]) == want);
      }
  }
}

TEST_CASE("unpack other widths: 1, 2, 8 and 16-bit fields of u8, u16 and u32 words") {
  std::mt19937_64 rng(11);
  std::vector<uint32_t> w32(8 * 16);
  for (auto& x : w32) x = static_cast<uint32_t>(rng());
  for (int bits : {1, 2, 8, 16}) {
    CAPTURE(bits);
    auto got = run_unpack<uint32_t, int32_t>(Scalar::u32, Scalar::i32, w32, 8, 16, 1, bits);
    const int64_t count = 32 / bits;
    for (int64_t r = 0; r < 8; ++r)
      for (int64_t c = 0; c < 16 * count; ++c) CHECK(got[r * 16 * count + c] == static_cast<int32_t>(field_of(w32, 16, 1, bits, r, c)));
  }
  std::vector<uint8_t> w8(16 * 16);
  for (auto& x : w8) x = static_cast<uint8_t>(rng());
  auto h = run_unpack<uint8_t, uint16_t>(Scalar::u8, Scalar::f16, w8, 16, 16, 0, 4);  // two nibbles per byte
  for (int64_t r = 0; r < 32; ++r)
    for (int64_t c = 0; c < 16; ++c)
      CHECK(tessel::interp::f16_to_double(h[r * 16 + c]) == static_cast<double>(field_of(w8, 16, 0, 4, r, c)));
  std::vector<uint16_t> w16(16 * 16);
  for (auto& x : w16) x = static_cast<uint16_t>(rng());
  auto u = run_unpack<uint16_t, uint8_t>(Scalar::u16, Scalar::u8, w16, 16, 16, 1, 8);
  for (int64_t r = 0; r < 16; ++r)
    for (int64_t c = 0; c < 32; ++c) CHECK(u[r * 32 + c] == field_of(w16, 16, 1, 8, r, c));
}

TEST_CASE("bitcast reads the same bits as another type of the width") {
  auto bitcast = [](Scalar to) {
    return [to](Builder& b, const std::vector<Value*>& v) {
      return b.value(OpKind::Bitcast, {v[0]}, {v[0]->type.with_dtype(DType{to, false})});
    };
  };
  Function f1("f32_bits");
  build_map_kernel(f1, {Scalar::f32}, Scalar::u32, bitcast(Scalar::u32), 16);
  CHECK(run_map<uint32_t>(f1, std::vector<std::vector<float>>{{1.0f, -2.0f, 0.0f, -0.0f, INFINITY}}, 16) ==
        std::vector<uint32_t>{0x3f800000u, 0xc0000000u, 0, 0x80000000u, 0x7f800000u});
  Function f2("u16_as_f16");
  build_map_kernel(f2, {Scalar::u16}, Scalar::f16, bitcast(Scalar::f16), 16);
  std::vector<uint16_t> hb = {0x3c00, 0xc000, 0x0001, 0x7bff};
  CHECK(run_map<uint16_t>(f2, std::vector<std::vector<uint16_t>>{hb}, 16) == hb);  // the same bits back
  Function f3("i32_as_f32");
  build_map_kernel(f3, {Scalar::i32}, Scalar::f32, bitcast(Scalar::f32), 16);
  CHECK(run_map<float>(f3, std::vector<std::vector<int32_t>>{{0x40490fdb, -1082130432}}, 16) ==
        std::vector<float>{3.14159274f, -1.0f});
  Function f4("u8_as_e4m3");
  build_map_kernel(f4, {Scalar::u8}, Scalar::f8e4m3, bitcast(Scalar::f8e4m3), 16);
  std::vector<uint8_t> eb = {0x38, 0x7e, 0x01, 0xb8};
  CHECK(run_map<uint8_t>(f4, std::vector<std::vector<uint8_t>>{eb}, 16) == eb);
}

TEST_CASE("a dot whose B is unpacked int4 times a row of scales (W4A16's register-B form on the GPU)") {
  // c[16, N] = a[16, K] x ((unpack(w, 0, bits, zero) * s[N]) as f16/bf16), k ascending in f32:
  // with 16 rows the GPU computes B in the mma's fragment layout (each lane its byte of every
  // word; f16 from 4-bit fields by a byte permute and one fma, with every nibble value and the
  // zero points 0, 8 and 15 here) and never stages it; 8-bit fields go through the staged path.
  // tests/interp_gpu compares its results with these.
  struct Fields {
    int bits;
    int64_t zero;
  };
  for (Scalar hs : {Scalar::f16, Scalar::bf16})
    for (Fields fz : {Fields{4, 8}, Fields{4, 0}, Fields{4, 15}, Fields{8, 128}, Fields{8, 0}})
    for (auto [K, N] : std::vector<std::pair<int64_t, int64_t>>{{64, 64}, {128, 32}, {32, 128}}) {
      if (hs == Scalar::bf16 && fz.bits == 8) continue;  // bf16 holds 8-bit fields minus a zero inexactly
      CAPTURE(static_cast<int>(hs));
      CAPTURE(fz.bits);
      CAPTURE(fz.zero);
      CAPTURE(K);
      CAPTURE(N);
      const bool bf = hs == Scalar::bf16;
      auto to_double = [&](uint16_t v) { return bf ? tessel::interp::bf16_to_double(v) : tessel::interp::f16_to_double(v); };
      auto round = [&](double v) { return bf ? tessel::interp::bf16_from_double(v) : tessel::interp::f16_from_double(v); };
      const int64_t M = 16, KW = K * fz.bits / 32;
      std::mt19937_64 rng(static_cast<uint64_t>(K * 7 + N + bf + fz.bits * 131 + fz.zero * 17));
      std::vector<uint32_t> w(static_cast<size_t>(KW * N));
      for (auto& x : w) x = static_cast<uint32_t>(rng());
      std::vector<uint16_t> a(static_cast<size_t>(M * K)), s(static_cast<size_t>(N));
      for (auto& v : a) v = round(std::uniform_real_distribution<double>(-2, 2)(rng));
      for (auto& v : s) v = round(std::uniform_real_distribution<double>(0.01, 0.2)(rng));
      Function f("w4_dot");
      Value* pa = f.add_param("a", ptr_t(hs));
      Value* pw = f.add_param("w", ptr_t(Scalar::u32));
      Value* ps = f.add_param("s", ptr_t(hs));
      Value* pc = f.add_param("c", ptr_t(Scalar::f32));
      Builder b(f);
      Value* at = b.value(OpKind::Load, {bin(b, OpKind::AddPtr, b.splat(pa, {M, K}), grid_offsets(b, M, K))});
      Value* words = b.value(OpKind::Load, {bin(b, OpKind::AddPtr, b.splat(pw, {KW, N}), grid_offsets(b, KW, N))});
      Value* q = b.value(OpKind::Unpack, {words}, {Type{DType{hs, false}, {K, N}}},
                         {{"axis", int64_t{0}}, {"bits", int64_t{fz.bits}}, {"zero", fz.zero}});
      Value* sv = b.value(OpKind::Load, {bin(b, OpKind::AddPtr, b.splat(ps, {N}), b.arange(0, N))});
      Value* bt = bin(b, OpKind::Mul, q, b.broadcast(b.expand_dims(sv, 0), {K, N}));
      Value* r = b.dot(at, bt, b.const_float(0.0, Type{DType{Scalar::f32}, {M, N}}), false);
      b.create(OpKind::Store, {bin(b, OpKind::AddPtr, b.splat(pc, {M, N}), grid_offsets(b, M, N)), r});
      std::vector<float> out(static_cast<size_t>(M * N), poison<float>());
      std::vector<ArgValue> args{ArgValue::pointer(a.data()), ArgValue::pointer(w.data()), ArgValue::pointer(s.data()),
                                 ArgValue::pointer(out.data())};
      std::vector<MemRegion> mem{read_only(a), read_only(w), read_only(s), region(out)};
      run_kernel(f, Grid{1}, args, mem);
      int64_t bad = 0;
      for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) {
          float acc = 0.0f;
          for (int64_t k = 0; k < K; ++k) {
            const double qv = static_cast<double>(static_cast<int64_t>(field_of(w, N, 0, fz.bits, k, n)) - fz.zero);
            const float bw = static_cast<float>(to_double(round(qv * to_double(s[static_cast<size_t>(n)]))));
            volatile float p = static_cast<float>(to_double(a[static_cast<size_t>(m * K + k)])) * bw;
            acc = acc + p;
          }
          bad += std::bit_cast<uint32_t>(out[static_cast<size_t>(m * N + n)]) != std::bit_cast<uint32_t>(acc);
        }
      CHECK(bad == 0);
    }
}
