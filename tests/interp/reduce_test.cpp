// Interpreter: reductions, argmax/argmin, the generic reduce, cumsum, reshape and trans vs host code.
#include <algorithm>
#include <memory>

#include "interp_test_util.hpp"
#include "tile_kernel.hpp"
#include "tessel/interp/float_formats.hpp"
#include "tessel/ir/verify.hpp"

using namespace interp_test;

namespace {

std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -4.f, float hi = 4.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& e : v) e = d(rng);
  return v;
}

// The documented order: adjacent pairs, then pairs of pairs, left operand the lower index.
template <class T, class F>
T host_tree(std::vector<T> row, F combine) {
  for (size_t n = row.size(); n > 1; n /= 2)
    for (size_t k = 0; k < n / 2; ++k) row[k] = combine(row[2 * k], row[2 * k + 1]);
  return row[0];
}

// Row `i` of x viewed as [R, C], along axis 1 (or column `i` along axis 0).
template <class T>
std::vector<T> line(const std::vector<T>& x, int64_t R, int64_t C, int axis, int64_t i) {
  std::vector<T> out;
  if (axis == 1)
    for (int64_t j = 0; j < C; ++j) out.push_back(x[i * C + j]);
  else
    for (int64_t j = 0; j < R; ++j) out.push_back(x[j * C + i]);
  return out;
}

}  // namespace

TEST_CASE("reduce_sum of f32 along either axis follows the pairwise tree exactly") {
  const int64_t R = 8, C = 32;
  auto x = random_floats(R * C, 1);
  for (int axis : {0, 1}) {
    CAPTURE(axis);
    auto f = build_tile_kernel(Scalar::f32, {R, C}, Scalar::f32,
                               [&](Builder& b, Value* v) { return b.reduce(OpKind::ReduceSum, v, axis); });
    const int64_t lines = axis == 1 ? R : C;
    auto got = run_tile<float>(*f, x, lines);
    for (int64_t i = 0; i < lines; ++i) {
      float want = host_tree(line(x, R, C, axis, i), [](float a, float b) { return a + b; });
      double exact = 0;
      for (float e : line(x, R, C, axis, i)) exact += e;
      CHECK(got[i] == want);  // bit for bit: each add rounds to f32
      CHECK(std::fabs(got[i] - exact) < 1e-4);
    }
  }
}

TEST_CASE("reduce_sum of f16 accumulates (and rounds) in f16") {
  // 2048 + 1 + 1 + 1 + 1 ...: in f16 (11-bit significand) 2048 + 1 rounds back to 2048 (ties to even).
  std::vector<uint16_t> x(16, f16_from_double(1.0));
  x[0] = f16_from_double(2048.0);
  auto f = build_tile_kernel(Scalar::f16, {16}, Scalar::f16,
                             [](Builder& b, Value* v) { return b.reduce(OpKind::ReduceSum, v, 0); });
  auto got = run_tile<uint16_t>(*f, x, 1);
  // tree: (2048+1)=2048, (1+1)=2, ... -> 2048 + 2 + 4 + 8 = 2062 (pairs of ones sum exactly)
  CHECK(f16_to_double(got[0]) == 2062.0);
}

TEST_CASE("integer reductions wrap; max/min are signed; a rank-1 tile reduces to a scalar") {
  std::vector<int8_t> x(64);
  std::mt19937 rng(7);
  for (auto& e : x) e = static_cast<int8_t>(rng());
  auto f = build_tile_kernel(Scalar::i8, {64}, Scalar::i8, [](Builder& b, Value* v) {
    Value* s = b.reduce(OpKind::ReduceSum, v, 0);
    return s;
  });
  auto got = run_tile<int8_t>(*f, x, 1);
  int sum = 0;
  for (int8_t e : x) sum += e;
  CHECK(got[0] == static_cast<int8_t>(sum));

  std::vector<int32_t> y(4 * 16);
  for (auto& e : y) e = static_cast<int32_t>(rng());
  for (OpKind k : {OpKind::ReduceMax, OpKind::ReduceMin}) {
    auto g = build_tile_kernel(Scalar::i32, {4, 16}, Scalar::i32, [&](Builder& b, Value* v) { return b.reduce(k, v, 1); });
    auto r = run_tile<int32_t>(*g, y, 4);
    for (int i = 0; i < 4; ++i) {
      auto l = line(y, 4, 16, 1, i);
      CHECK(r[i] == (k == OpKind::ReduceMax ? *std::max_element(l.begin(), l.end()) : *std::min_element(l.begin(), l.end())));
    }
  }
}

TEST_CASE("reduce over the middle axis of a rank-3 tile") {
  const int64_t A = 2, B = 8, C = 4;
  auto x = random_floats(A * B * C, 3);
  auto f = build_tile_kernel(Scalar::f32, {A, B, C}, Scalar::f32,
                             [](Builder& b, Value* v) { return b.reduce(OpKind::ReduceMax, v, 1); });
  auto got = run_tile<float>(*f, x, A * C);
  for (int64_t a = 0; a < A; ++a)
    for (int64_t c = 0; c < C; ++c) {
      float want = -INFINITY;
      for (int64_t k = 0; k < B; ++k) want = std::max(want, x[(a * B + k) * C + c]);
      CHECK(got[a * C + c] == want);
    }
}

TEST_CASE("float max/min propagate NaN") {
  auto x = random_floats(4 * 8, 5);
  x[1 * 8 + 5] = std::nanf("");
  for (OpKind k : {OpKind::ReduceMax, OpKind::ReduceMin}) {
    auto f = build_tile_kernel(Scalar::f32, {4, 8}, Scalar::f32, [&](Builder& b, Value* v) { return b.reduce(k, v, 1); });
    auto got = run_tile<float>(*f, x, 4);
    CHECK(std::isnan(got[1]));
    CHECK(!std::isnan(got[0]));
    auto l = line(x, 4, 8, 1, 2);
    CHECK(got[2] == (k == OpKind::ReduceMax ? *std::max_element(l.begin(), l.end()) : *std::min_element(l.begin(), l.end())));
  }
}

TEST_CASE("argmax/argmin: ties take the smallest index, the first NaN wins") {
  const int64_t R = 4, C = 16;
  auto x = random_floats(R * C, 11);
  // row 0: a tie for the max at 3 and 9, a tie for the min at 4 and 12
  x[0 * C + 3] = x[0 * C + 9] = 100.f;
  x[0 * C + 4] = x[0 * C + 12] = -100.f;
  // row 1: NaNs at 6 and 2 -> index 2 for both argmax and argmin
  x[1 * C + 6] = std::nanf("");
  x[1 * C + 2] = std::nanf("");
  for (OpKind k : {OpKind::ArgMax, OpKind::ArgMin}) {
    CAPTURE(static_cast<int>(k));
    auto f = build_tile_kernel(Scalar::f32, {R, C}, Scalar::i32, [&](Builder& b, Value* v) { return b.reduce(k, v, 1); });
    auto got = run_tile<int32_t>(*f, x, R);
    CHECK(got[0] == (k == OpKind::ArgMax ? 3 : 4));
    CHECK(got[1] == 2);
    for (int64_t i = 2; i < R; ++i) {
      auto l = line(x, R, C, 1, i);
      auto it = k == OpKind::ArgMax ? std::max_element(l.begin(), l.end()) : std::min_element(l.begin(), l.end());
      CHECK(got[i] == it - l.begin());
    }
  }
  // along axis 0, on integers
  std::vector<int32_t> y(R * C);
  std::mt19937 rng(2);
  for (auto& e : y) e = static_cast<int32_t>(rng() % 7);  // many ties
  auto f = build_tile_kernel(Scalar::i32, {R, C}, Scalar::i32,
                             [](Builder& b, Value* v) { return b.reduce(OpKind::ArgMax, v, 0); });
  auto got = run_tile<int32_t>(*f, y, C);
  for (int64_t j = 0; j < C; ++j) {
    auto l = line(y, R, C, 0, j);
    CHECK(got[j] == std::max_element(l.begin(), l.end()) - l.begin());
  }
}

TEST_CASE("generic reduce runs its body over the pairwise tree with acc on the lower-index side") {
  // combine(a, b) = 2a + b is not commutative: the result pins down the order.
  InterpreterOnly only("2a + b is neither associative nor commutative: the GPU's tree differs");
  std::vector<int32_t> x(4 * 8);
  std::mt19937 rng(3);
  for (auto& e : x) e = static_cast<int32_t>(rng() % 100) - 50;
  auto f = build_tile_kernel(Scalar::i32, {4, 8}, Scalar::i32, [](Builder& b, Value* v) {
    Op& red = b.reduce_region(v, 1);
    Block* outer = b.block();
    b.set_block(&red.body());
    Value* a = red.body().args[0];
    Value* e = red.body().args[1];
    Value* two_a = bin(b, OpKind::Add, a, a);
    b.create(OpKind::Yield, {bin(b, OpKind::Add, two_a, e)});
    b.set_block(outer);
    return red.result(0);
  });
  auto got = run_tile<int32_t>(*f, x, 4);
  for (int i = 0; i < 4; ++i)
    CHECK(got[i] == host_tree(line(x, 4, 8, 1, i), [](int32_t a, int32_t b) { return 2 * a + b; }));
}

TEST_CASE("generic reduce over floats with a body that uses a value from outside") {
  // combine(a, b) = max(a, b * scale) with scale computed before the reduce
  auto x = random_floats(8 * 4, 9);
  auto f = build_tile_kernel(Scalar::f32, {8, 4}, Scalar::f32, [](Builder& b, Value* v) {
    Value* scale = b.const_float(0.5, Type{f32(), {}});
    Op& red = b.reduce_region(v, 0);
    Block* outer = b.block();
    b.set_block(&red.body());
    Value* scaled = bin(b, OpKind::Mul, red.body().args[1], scale);
    b.create(OpKind::Yield, {bin(b, OpKind::Max, red.body().args[0], scaled)});
    b.set_block(outer);
    return red.result(0);
  });
  auto got = run_tile<float>(*f, x, 4);
  for (int j = 0; j < 4; ++j)
    CHECK(got[j] == host_tree(line(x, 8, 4, 0, j), [](float a, float b) { return std::max(a, b * 0.5f); }));
}

TEST_CASE("cumsum is an inclusive left-to-right prefix sum along the axis") {
  const int64_t R = 4, C = 16;
  auto x = random_floats(R * C, 13);
  for (int axis : {0, 1}) {
    CAPTURE(axis);
    auto f = build_tile_kernel(Scalar::f32, {R, C}, Scalar::f32,
                               [&](Builder& b, Value* v) { return b.reduce(OpKind::CumSum, v, axis); });
    auto got = run_tile<float>(*f, x, R * C);
    for (int64_t i = 0; i < R; ++i)
      for (int64_t j = 0; j < C; ++j) {
        float acc = 0;
        if (axis == 1)
          for (int64_t k = 0; k <= j; ++k) acc += x[i * C + k];
        else
          for (int64_t k = 0; k <= i; ++k) acc += x[k * C + j];
        CHECK(got[i * C + j] == acc);
      }
  }
  // i16 wraps
  std::vector<int16_t> y(8, 20000);
  auto g = build_tile_kernel(Scalar::i16, {8}, Scalar::i16, [](Builder& b, Value* v) { return b.reduce(OpKind::CumSum, v, 0); });
  auto got = run_tile<int16_t>(*g, y, 8);
  for (int k = 0; k < 8; ++k) CHECK(got[k] == static_cast<int16_t>(20000 * (k + 1)));
}

TEST_CASE("reshape keeps row-major order; trans swaps the two dims") {
  const int64_t R = 4, C = 8;
  auto x = random_floats(R * C, 17);
  // trans: out viewed as [C, R] holds x[i, j] at [j, i]
  auto f = build_tile_kernel(Scalar::f32, {R, C}, Scalar::f32, [](Builder& b, Value* v) { return b.trans(v); });
  auto got = run_tile<float>(*f, x, R * C);
  for (int64_t i = 0; i < R; ++i)
    for (int64_t j = 0; j < C; ++j) CHECK(got[j * R + i] == x[i * C + j]);
  // reshape [4, 8] -> [2, 16] -> [32]: the element order never changes
  auto g = build_tile_kernel(Scalar::f32, {R, C}, Scalar::f32, [](Builder& b, Value* v) {
    return b.reshape(b.reshape(v, {2, 16}), {32});
  });
  CHECK(run_tile<float>(*g, x, R * C) == x);
  // reshape then reduce: [4, 8] -> [8, 4] summed along axis 1 = sums of 4 consecutive elements
  auto h = build_tile_kernel(Scalar::f32, {R, C}, Scalar::f32, [](Builder& b, Value* v) {
    return b.reduce(OpKind::ReduceMax, b.reshape(v, {8, 4}), 1);
  });
  auto m = run_tile<float>(*h, x, 8);
  for (int k = 0; k < 8; ++k) CHECK(m[k] == std::max({x[4 * k], x[4 * k + 1], x[4 * k + 2], x[4 * k + 3]}));
}
