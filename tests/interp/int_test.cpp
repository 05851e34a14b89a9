// Interpreter: integer arithmetic wraps to the dtype; division, shifts, bitwise ops, i1 logic.
#include "interp_test_util.hpp"

using namespace interp_test;

namespace {

template <class T>
std::vector<T> run_int_binary(OpKind k, Scalar s, const std::vector<T>& x, const std::vector<T>& y) {
  Function f("ibin");
  build_map_kernel(f, {s, s}, s, [k](Builder& b, const std::vector<Value*>& v) { return bin(b, k, v[0], v[1]); },
                   256);
  return run_map<T>(f, std::vector<std::vector<T>>{x, y}, 256);
}

// Reference for a T-width operation, computed in int64 and wrapped through uint64.
template <class T>
T wrap_to(int64_t v) {
  return static_cast<T>(static_cast<std::make_unsigned_t<T>>(static_cast<uint64_t>(v)));
}

template <class T>
T ref_op(OpKind k, T a, T b) {
  const int w = 8 * sizeof(T);
  const int64_t A = a, B = b;
  switch (k) {
    case OpKind::Add: return wrap_to<T>(A + B);
    case OpKind::Sub: return wrap_to<T>(A - B);
    case OpKind::Mul: return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) * static_cast<std::make_unsigned_t<T>>(b));
    case OpKind::Div: return B == 0 ? T{0} : wrap_to<T>(A / B);  // A / B in int64 never overflows for w < 64
    case OpKind::Rem: return B == 0 ? T{0} : wrap_to<T>(A % B);
    case OpKind::Min: return std::min(a, b);
    case OpKind::Max: return std::max(a, b);
    case OpKind::And: return a & b;
    case OpKind::Or: return a | b;
    case OpKind::Xor: return a ^ b;
    case OpKind::Shl: return (B < 0 || B >= w) ? T{0} : wrap_to<T>(static_cast<int64_t>(static_cast<uint64_t>(A) << B));
    case OpKind::Shr: return (B < 0 || B >= w) ? T(a < 0 ? -1 : 0) : T(A >> B);
    default: break;
  }
  FAIL("no reference for " << name_of(k));
  return 0;
}

const OpKind kIntOps[] = {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Rem, OpKind::Min,
                          OpKind::Max, OpKind::And, OpKind::Or,  OpKind::Xor, OpKind::Shl, OpKind::Shr};

}  // namespace

TEST_CASE("i8 arithmetic wraps: every pair of i8 values") {
  std::vector<int8_t> x, y;
  for (int a = -128; a < 128; ++a)
    for (int b = -128; b < 128; ++b) {
      x.push_back(static_cast<int8_t>(a));
      y.push_back(static_cast<int8_t>(b));
    }
  for (OpKind k : kIntOps) {
    CAPTURE(name_of(k));
    auto out = run_int_binary<int8_t>(k, Scalar::i8, x, y);
    int64_t bad = 0;
    for (size_t i = 0; i < x.size(); ++i) bad += out[i] != ref_op<int8_t>(k, x[i], y[i]);
    CHECK(bad == 0);
  }
  // spot checks that do not rely on the reference above
  auto add = run_int_binary<int8_t>(OpKind::Add, Scalar::i8, {127, -128, 100}, {1, -1, 100});
  CHECK(add == std::vector<int8_t>{-128, 127, -56});
  auto div = run_int_binary<int8_t>(OpKind::Div, Scalar::i8, {-128, -7, 7, 5}, {-1, 2, -2, 0});
  CHECK(div == std::vector<int8_t>{-128, -3, -3, 0});
  auto rem = run_int_binary<int8_t>(OpKind::Rem, Scalar::i8, {-128, -7, 7, 5}, {-1, 2, -2, 0});
  CHECK(rem == std::vector<int8_t>{0, -1, 1, 0});
}

TEST_CASE("i32 and i16 arithmetic wraps on random and extreme values") {
  std::mt19937 rng(31);
  std::uniform_int_distribution<int32_t> any(INT32_MIN, INT32_MAX);
  std::uniform_int_distribution<int32_t> shift(-3, 40);
  std::vector<int32_t> x, y;
  const int32_t extremes[] = {INT32_MIN, INT32_MIN + 1, -1, 0, 1, INT32_MAX, 65536, -65536};
  for (int32_t a : extremes)
    for (int32_t b : extremes) {
      x.push_back(a);
      y.push_back(b);
    }
  for (int i = 0; i < 3000; ++i) {
    x.push_back(any(rng));
    y.push_back(i % 3 == 0 ? shift(rng) : any(rng));  // small values exercise shifts
  }
  for (OpKind k : kIntOps) {
    CAPTURE(name_of(k));
    auto out = run_int_binary<int32_t>(k, Scalar::i32, x, y);
    int64_t bad = 0;
    for (size_t i = 0; i < x.size(); ++i) bad += out[i] != ref_op<int32_t>(k, x[i], y[i]);
    CHECK(bad == 0);
  }
  auto mul = run_int_binary<int32_t>(OpKind::Mul, Scalar::i32, {65536, INT32_MAX, INT32_MIN}, {65536, 2, -1});
  CHECK(mul == std::vector<int32_t>{0, -2, INT32_MIN});
  auto shl = run_int_binary<int32_t>(OpKind::Shl, Scalar::i32, {1, 1, 3, 5}, {31, 32, -1, 0});
  CHECK(shl == std::vector<int32_t>{INT32_MIN, 0, 0, 5});
  auto shr = run_int_binary<int32_t>(OpKind::Shr, Scalar::i32, {INT32_MIN, -8, 8, -8}, {31, 1, 40, 40});
  CHECK(shr == std::vector<int32_t>{-1, -4, 0, -1});

  std::vector<int16_t> xs, ys;
  for (int i = 0; i < 1000; ++i) {
    xs.push_back(static_cast<int16_t>(any(rng)));
    ys.push_back(static_cast<int16_t>(any(rng)));
  }
  for (OpKind k : {OpKind::Add, OpKind::Mul, OpKind::Sub, OpKind::Div}) {
    CAPTURE(name_of(k));
    auto out = run_int_binary<int16_t>(k, Scalar::i16, xs, ys);
    int64_t bad = 0;
    for (size_t i = 0; i < xs.size(); ++i) bad += out[i] != ref_op<int16_t>(k, xs[i], ys[i]);
    CHECK(bad == 0);
  }
}

TEST_CASE("i64 wraps at 64 bits and INT64_MIN / -1 does not trap") {
  auto add = run_int_binary<int64_t>(OpKind::Add, Scalar::i64, {INT64_MAX, 5'000'000'000}, {1, 7'000'000'000});
  CHECK(add == std::vector<int64_t>{INT64_MIN, 12'000'000'000});
  auto div = run_int_binary<int64_t>(OpKind::Div, Scalar::i64, {INT64_MIN, -9'000'000'000}, {-1, 4});
  CHECK(div == std::vector<int64_t>{INT64_MIN, -2'250'000'000});
  auto rem = run_int_binary<int64_t>(OpKind::Rem, Scalar::i64, {INT64_MIN, -9'000'000'001}, {-1, 4});
  CHECK(rem == std::vector<int64_t>{0, -1});
}

TEST_CASE("neg, abs and not on i8 wrap; not on i1 is logical") {
  std::vector<int8_t> x;
  for (int a = -128; a < 128; ++a) x.push_back(static_cast<int8_t>(a));
  for (OpKind k : {OpKind::Neg, OpKind::Abs, OpKind::Not}) {
    CAPTURE(name_of(k));
    Function f("iun");
    build_map_kernel(f, {Scalar::i8}, Scalar::i8, [k](Builder& b, const std::vector<Value*>& v) { return b.value(k, {v[0]}); },
                     64);
    auto out = run_map<int8_t>(f, std::vector<std::vector<int8_t>>{x}, 64);
    for (size_t i = 0; i < x.size(); ++i) {
      int a = x[i];
      int8_t want = k == OpKind::Neg ? wrap_to<int8_t>(-a) : k == OpKind::Abs ? wrap_to<int8_t>(a < 0 ? -a : a)
                                                                               : static_cast<int8_t>(~a);
      CHECK(out[i] == want);
    }
  }

  // i1 in memory is a byte; any nonzero byte loads as true.
  std::vector<uint8_t> p = {0, 1, 7, 255, 0, 2}, q = {0, 1, 0, 1, 1, 0};
  auto run_i1 = [&](const MapBody& body) {
    Function f("bool");
    build_map_kernel(f, {Scalar::i1, Scalar::i1}, Scalar::i1, body, 8);
    return run_map<uint8_t>(f, std::vector<std::vector<uint8_t>>{p, q}, 8);
  };
  CHECK(run_i1([](Builder& b, const std::vector<Value*>& v) { return b.value(OpKind::Not, {v[0]}); }) ==
        std::vector<uint8_t>{1, 0, 0, 0, 1, 0});
  CHECK(run_i1([](Builder& b, const std::vector<Value*>& v) { return bin(b, OpKind::And, v[0], v[1]); }) ==
        std::vector<uint8_t>{0, 1, 0, 1, 0, 0});
  CHECK(run_i1([](Builder& b, const std::vector<Value*>& v) { return bin(b, OpKind::Xor, v[0], v[1]); }) ==
        std::vector<uint8_t>{0, 0, 1, 0, 1, 1});
  CHECK(run_i1([](Builder& b, const std::vector<Value*>& v) { return bin(b, OpKind::Or, v[0], v[1]); }) ==
        std::vector<uint8_t>{0, 1, 1, 1, 1, 1});
}

TEST_CASE("integer comparisons are signed; select picks per element") {
  std::vector<int32_t> x = {-5, 3, INT32_MIN, 7, 0, -1};
  std::vector<int32_t> y = {3, -5, INT32_MAX, 7, -1, 0};
  const std::pair<OpKind, bool (*)(int32_t, int32_t)> cmps[] = {
      {OpKind::CmpEq, [](int32_t a, int32_t b) { return a == b; }}, {OpKind::CmpNe, [](int32_t a, int32_t b) { return a != b; }},
      {OpKind::CmpLt, [](int32_t a, int32_t b) { return a < b; }},  {OpKind::CmpLe, [](int32_t a, int32_t b) { return a <= b; }},
      {OpKind::CmpGt, [](int32_t a, int32_t b) { return a > b; }},  {OpKind::CmpGe, [](int32_t a, int32_t b) { return a >= b; }},
  };
  for (const auto& [k, ref] : cmps) {
    CAPTURE(name_of(k));
    Function f("icmp");
    // select(cmp(x, y), x, y): the chosen operand shows the comparison's outcome
    build_map_kernel(f, {Scalar::i32, Scalar::i32}, Scalar::i32,
                     [k = k](Builder& b, const std::vector<Value*>& v) {
                       return b.value(OpKind::Select, {bin(b, k, v[0], v[1]), v[0], v[1]});
                     },
                     8);
    auto out = run_map<int32_t>(f, std::vector<std::vector<int32_t>>{x, y}, 8);
    for (size_t i = 0; i < x.size(); ++i) CHECK(out[i] == (ref(x[i], y[i]) ? x[i] : y[i]));
  }
}
