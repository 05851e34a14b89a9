// User mistakes with reductions, shape ops and atomics: CompileErrors naming the user's line.
#include <doctest/doctest.h>

#include <string>

#include "../common/expect_compile_error.hpp"
#include "tessel/lang/lang.hpp"

using namespace tessel::lang;

namespace {
int g_line = 0;

template <class... A>
void expect_error(void (*fn)(A...), const std::string& needle) {
  tessel_test::expect_compile_error(fn, Meta{}, needle, g_line, "reduce_errors_test.cpp");
}

Tile tile2d(Ptr<f32> x) { return load(x + arange(0, 4).col() * 8 + arange(0, 8).row()); }

void axis_out_of_range(Ptr<f32> x, const Meta&) {
  auto v = tile2d(x);
  g_line = __LINE__; auto s = sum(v, 2);
}
void negative_axis(Ptr<f32> x, const Meta&) {
  auto v = tile2d(x);
  g_line = __LINE__; auto s = argmax(v, -1);
}
void reduce_scalar(Ptr<f32> x, Float f, const Meta&) {
  g_line = __LINE__; auto s = max(f, 0);
}
void reduce_literal(Ptr<f32> x, const Meta&) {
  g_line = __LINE__; auto s = min(3, 0);
}
void reduce_pointer(Ptr<f32> x, const Meta&) {
  g_line = __LINE__; auto s = sum(x + arange(0, 8), 0);
}
void cumsum_axis(Ptr<f32> x, const Meta&) {
  g_line = __LINE__; auto s = cumsum(arange(0, 8), 1);
}
void reshape_numel(Ptr<f32> x, const Meta&) {
  auto v = tile2d(x);
  g_line = __LINE__; auto r = reshape(v, {16, 4});
}
void reshape_non_pow2(Ptr<f32> x, const Meta&) {
  g_line = __LINE__; auto r = reshape(arange(0, 16), {3, 5});
}
void trans_1d(Ptr<f32> x, const Meta&) {
  g_line = __LINE__; auto r = trans(arange(0, 16));
}
void col_of_scalar(Ptr<f32> x, Int n, const Meta&) {
  g_line = __LINE__; auto r = n.col();
}
void atomic_f16(Ptr<f16> h, const Meta&) {
  g_line = __LINE__; auto r = atomic_add(h + arange(0, 8), 1.0f);
}
void atomic_max_f64(Ptr<f64> d, const Meta&) {
  g_line = __LINE__; auto r = atomic_max(d + arange(0, 8), 1.0);
}
void atomic_non_pointer(Ptr<f32> x, const Meta&) {
  g_line = __LINE__; auto r = atomic_add(arange(0, 8), 1);
}
void atomic_mask_shape(Ptr<f32> x, const Meta&) {
  g_line = __LINE__; auto r = atomic_add(x + arange(0, 8), 1.0f, arange(0, 16) < 3);
}
void atomic_value_shape(Ptr<f32> x, const Meta&) {
  auto v = tile2d(x);
  g_line = __LINE__; auto r = atomic_add(x + arange(0, 8), v);
}
void combine_wrong_dtype(Ptr<f32> x, const Meta&) {
  auto v = tile2d(x);
  g_line = __LINE__; auto r = reduce(v, 1, [](Tile a, Tile b) { return cast<f64>(a + b); });
}
void combine_returns_tile(Ptr<f32> x, const Meta&) {
  auto v = tile2d(x);
  g_line = __LINE__; auto r = reduce(v, 1, [&](Tile a, Tile b) { return a + v; });
}
void combine_loads(Ptr<f32> x, const Meta&) {
  auto v = tile2d(x);
  auto r = reduce(v, 1, [&](Tile a, Tile b) {
    g_line = __LINE__; return a + load(x);
  });
}
void combine_assigns_var(Ptr<f32> x, const Meta&) {
  auto v = tile2d(x);
  Var seen{0.0f};
  auto r = reduce(v, 1, [&](Tile a, Tile b) {
    g_line = __LINE__; seen = a;
    return a + b;
  });
}
void combine_loops(Ptr<f32> x, Int n, const Meta&) {
  auto v = tile2d(x);
  auto r = reduce(v, 1, [&](Tile a, Tile b) {
    Var t{a};
    g_line = __LINE__; for (auto i : range(0, n)) t += b;
    return t.get();
  });
}
void combine_value_escapes(Ptr<f32> x, const Meta&) {
  auto v = tile2d(x);
  Tile inner;
  auto r = reduce(v, 1, [&](Tile a, Tile b) {
    inner = a * 2.0f;
    return a + b;
  });
  g_line = __LINE__; store(x, inner);
}
}  // namespace

TEST_CASE("reduction errors name the line and the problem") {
  expect_error(axis_out_of_range, "sum: axis 2 out of range for a tile of rank 2 (f32[4,8])");
  expect_error(negative_axis, "argmax: axis -1 out of range for a tile of rank 2");
  expect_error(reduce_scalar, "max: expects a tile, got the scalar f32");
  expect_error(reduce_literal, "min: expects a tile, got a literal");
  expect_error(reduce_pointer, "sum: expects a numeric tile, got ptr<f32>[8]");
  expect_error(cumsum_axis, "cumsum: axis 1 out of range for a tile of rank 1");
}

TEST_CASE("shape op errors") {
  expect_error(reshape_numel, "reshape: cannot reshape f32[4,8] (32 elements) to [16,4] (64 elements)");
  expect_error(reshape_non_pow2, "reshape: tile dimension 3 must be a power of two (shape [3,5])");
  expect_error(trans_1d, "trans: expects a 2-D tile, got i32[16]");
  expect_error(col_of_scalar, "col(): expects a tile, got the scalar i32");
}

TEST_CASE("atomic errors") {
  expect_error(atomic_f16, "atomic_add: not supported on f16 elements (supported: i32, i64, f32, f64)");
  expect_error(atomic_max_f64, "atomic_max: not supported on f64 elements (supported: i32, i64, f32)");
  expect_error(atomic_non_pointer, "atomic_add through a non-pointer");
  expect_error(atomic_mask_shape, "atomic_add: mask of shape [16] does not match the pointer tile's shape [8]");
  expect_error(atomic_value_shape, "atomic_add: the value of shape [4,8] does not match the pointer tile's shape [8]");
}

TEST_CASE("combine function errors") {
  expect_error(combine_wrong_dtype, "reduce: the combine function must return a scalar of the element type f32, got f64");
  expect_error(combine_returns_tile, "reduce: the combine function must return a scalar of the element type f32, got f32[4,8]");
  expect_error(combine_loads, "load cannot be used inside a reduce() combine function");
  expect_error(combine_assigns_var, "assignment inside a reduce() combine function to a Var declared outside it");
  expect_error(combine_loops, "range cannot be used inside a reduce() combine function");
  expect_error(combine_value_escapes, "a value computed inside a reduce() combine function is used outside it");
}
