// Reductions, scans, argmax/argmin, the generic reduce, reshape and trans over tiles large
// enough to span lanes, warps and registers (test_interp_gpu runs them on the GPU too, where
// those are different code paths), against host loops. Integer cases are exact everywhere.
#include <algorithm>
#include <memory>
#include <numeric>

#include "interp_test_util.hpp"
#include "tile_kernel.hpp"
#include "tessel/ir/verify.hpp"

using namespace interp_test;

namespace {

std::vector<int32_t> random_ints(size_t n, uint32_t seed, int lo, int hi) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<int32_t> v(n);
  for (auto& e : v) e = d(rng);
  return v;
}

// Element (i, j) of x viewed as [R, C].
template <class T>
T at(const std::vector<T>& x, int64_t C, int64_t i, int64_t j) {
  return x[i * C + j];
}

const std::vector<Shape> kShapes2d = {{32, 64}, {64, 32}, {8, 256}, {128, 8}, {2, 512}};

}  // namespace

TEST_CASE("i32 cumsum along each axis of 1-D and 2-D tiles spanning warps") {
  for (int64_t n : {32, 256, 1024, 4096}) {
    CAPTURE(n);
    auto x = random_ints(n, 21, -1000, 1000);
    auto f = build_tile_kernel(Scalar::i32, {n}, Scalar::i32, [](Builder& b, Value* v) { return b.reduce(OpKind::CumSum, v, 0); });
    auto got = run_tile<int32_t>(*f, x, n);
    int32_t acc = 0;
    for (int64_t k = 0; k < n; ++k) CHECK(got[k] == (acc += x[k]));
  }
  for (const Shape& s : kShapes2d)
    for (int axis : {0, 1}) {
      const int64_t R = s[0], C = s[1];
      CAPTURE(R);
      CAPTURE(C);
      CAPTURE(axis);
      auto x = random_ints(R * C, 22, -1000, 1000);
      auto f = build_tile_kernel(Scalar::i32, s, Scalar::i32, [&](Builder& b, Value* v) { return b.reduce(OpKind::CumSum, v, axis); });
      auto got = run_tile<int32_t>(*f, x, R * C);
      size_t bad = 0;
      for (int64_t i = 0; i < R; ++i)
        for (int64_t j = 0; j < C; ++j) {
          int32_t acc = 0;
          if (axis == 1)
            for (int64_t k = 0; k <= j; ++k) acc += at(x, C, i, k);
          else
            for (int64_t k = 0; k <= i; ++k) acc += at(x, C, k, j);
          bad += got[i * C + j] != acc;
        }
      CHECK(bad == 0);
    }
}

TEST_CASE("i32 sum, max and min along each axis of 2-D tiles spanning warps") {
  for (const Shape& s : kShapes2d)
    for (int axis : {0, 1})
      for (OpKind k : {OpKind::ReduceSum, OpKind::ReduceMax, OpKind::ReduceMin}) {
        const int64_t R = s[0], C = s[1];
        CAPTURE(R);
        CAPTURE(C);
        CAPTURE(axis);
        CAPTURE(static_cast<int>(k));
        auto x = random_ints(R * C, 23, -100000, 100000);
        auto f = build_tile_kernel(Scalar::i32, s, Scalar::i32, [&](Builder& b, Value* v) { return b.reduce(k, v, axis); });
        const int64_t lines = axis == 1 ? R : C, len = axis == 1 ? C : R;
        auto got = run_tile<int32_t>(*f, x, lines);
        for (int64_t l = 0; l < lines; ++l) {
          int32_t acc = k == OpKind::ReduceSum ? 0 : (k == OpKind::ReduceMax ? INT32_MIN : INT32_MAX);
          for (int64_t e = 0; e < len; ++e) {
            int32_t v = axis == 1 ? at(x, C, l, e) : at(x, C, e, l);
            acc = k == OpKind::ReduceSum ? acc + v : k == OpKind::ReduceMax ? std::max(acc, v) : std::min(acc, v);
          }
          CHECK(got[l] == acc);
        }
      }
}

TEST_CASE("argmax and argmin with many ties along each axis of 2-D tiles spanning warps") {
  for (const Shape& s : kShapes2d)
    for (int axis : {0, 1})
      for (OpKind k : {OpKind::ArgMax, OpKind::ArgMin}) {
        const int64_t R = s[0], C = s[1];
        CAPTURE(R);
        CAPTURE(C);
        CAPTURE(axis);
        CAPTURE(static_cast<int>(k));
        auto x = random_ints(R * C, 24, -5, 5);  // ties in every line: the smallest index wins
        auto f = build_tile_kernel(Scalar::i32, s, Scalar::i32, [&](Builder& b, Value* v) { return b.reduce(k, v, axis); });
        const int64_t lines = axis == 1 ? R : C, len = axis == 1 ? C : R;
        auto got = run_tile<int32_t>(*f, x, lines);
        for (int64_t l = 0; l < lines; ++l) {
          int32_t best = 0;
          for (int64_t e = 1; e < len; ++e) {
            int32_t v = axis == 1 ? at(x, C, l, e) : at(x, C, e, l);
            int32_t w = axis == 1 ? at(x, C, l, best) : at(x, C, best, l);
            if (k == OpKind::ArgMax ? v > w : v < w) best = static_cast<int32_t>(e);
          }
          CHECK(got[l] == best);
        }
      }
  // f32 with distinct values along the longest line of a 1-D tile
  std::vector<float> y(2048);
  std::mt19937 rng(25);
  for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(i) * 0.25f - 300.f;
  std::shuffle(y.begin(), y.end(), rng);
  for (OpKind k : {OpKind::ArgMax, OpKind::ArgMin}) {
    auto f = build_tile_kernel(Scalar::f32, {2048}, Scalar::i32, [&](Builder& b, Value* v) { return b.reduce(k, v, 0); });
    auto got = run_tile<int32_t>(*f, y, 1);
    auto it = k == OpKind::ArgMax ? std::max_element(y.begin(), y.end()) : std::min_element(y.begin(), y.end());
    CHECK(got[0] == it - y.begin());
  }
}

TEST_CASE("generic reduce (an associative, commutative bitwise combine) along each axis") {
  // xor is associative and commutative, and exact: every tree gives the same bits.
  for (const Shape& s : kShapes2d)
    for (int axis : {0, 1}) {
      const int64_t R = s[0], C = s[1];
      CAPTURE(R);
      CAPTURE(C);
      CAPTURE(axis);
      auto x = random_ints(R * C, 26, 0, 1 << 30);
      auto f = build_tile_kernel(Scalar::i32, s, Scalar::i32, [&](Builder& b, Value* v) {
        Op& red = b.reduce_region(v, axis);
        Block* outer = b.block();
        b.set_block(&red.body());
        b.create(OpKind::Yield, {bin(b, OpKind::Xor, red.body().args[0], red.body().args[1])});
        b.set_block(outer);
        return red.result(0);
      });
      const int64_t lines = axis == 1 ? R : C, len = axis == 1 ? C : R;
      auto got = run_tile<int32_t>(*f, x, lines);
      for (int64_t l = 0; l < lines; ++l) {
        int32_t acc = 0;
        for (int64_t e = 0; e < len; ++e) acc ^= axis == 1 ? at(x, C, l, e) : at(x, C, e, l);
        CHECK(got[l] == acc);
      }
    }
}

TEST_CASE("trans and reshape of tiles spanning warps keep every element") {
  for (const Shape& s : kShapes2d) {
    const int64_t R = s[0], C = s[1];
    CAPTURE(R);
    CAPTURE(C);
    auto x = random_ints(R * C, 27, INT32_MIN / 2, INT32_MAX / 2);
    auto t = build_tile_kernel(Scalar::i32, s, Scalar::i32, [](Builder& b, Value* v) { return b.trans(v); });
    auto got = run_tile<int32_t>(*t, x, R * C);
    size_t bad = 0;
    for (int64_t i = 0; i < R; ++i)
      for (int64_t j = 0; j < C; ++j) bad += got[j * R + i] != at(x, C, i, j);
    CHECK(bad == 0);
    // [R, C] -> [C, R] by reshape, then a sum along axis 1 pins the new rows down
    auto r = build_tile_kernel(Scalar::i32, s, Scalar::i32, [&](Builder& b, Value* v) {
      return b.reduce(OpKind::ReduceSum, b.reshape(v, {C, R}), 1);
    });
    auto sums = run_tile<int32_t>(*r, x, C);
    for (int64_t i = 0; i < C; ++i) {
      uint32_t acc = 0;  // i32 sums wrap: the reference adds modulo 2^32 (no signed overflow)
      for (int64_t j = 0; j < R; ++j) acc += static_cast<uint32_t>(x[i * R + j]);
      CHECK(sums[i] == static_cast<int32_t>(acc));
    }
  }
}

TEST_CASE("f32 sums along each axis of 2-D tiles spanning warps, within rounding of a double sum") {
  for (const Shape& s : kShapes2d)
    for (int axis : {0, 1}) {
      const int64_t R = s[0], C = s[1];
      CAPTURE(R);
      CAPTURE(C);
      CAPTURE(axis);
      std::vector<float> x(R * C);
      std::mt19937 rng(28);
      std::uniform_real_distribution<float> d(-2.f, 2.f);
      for (auto& e : x) e = d(rng);
      auto f = build_tile_kernel(Scalar::f32, s, Scalar::f32, [&](Builder& b, Value* v) { return b.reduce(OpKind::ReduceSum, v, axis); });
      const int64_t lines = axis == 1 ? R : C, len = axis == 1 ? C : R;
      auto got = run_tile<float>(*f, x, lines);
      for (int64_t l = 0; l < lines; ++l) {
        double acc = 0, mag = 0;
        for (int64_t e = 0; e < len; ++e) {
          double v = axis == 1 ? at(x, C, l, e) : at(x, C, e, l);
          acc += v, mag += std::fabs(v);
        }
        CHECK(std::fabs(got[l] - acc) <= 1e-6 * mag);
      }
    }
}
