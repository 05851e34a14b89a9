// Every user mistake the DSL detects: the CompileError names the user's line and what was expected.
#include <doctest/doctest.h>

#include <string>

#include "../common/expect_compile_error.hpp"
#include "tessel/lang/lang.hpp"

using namespace tessel::lang;
using tessel::CompileError;

namespace {
int g_line = 0;

template <class... A>
void expect_error(void (*fn)(A...), const Meta& meta, const std::string& needle) {
  tessel_test::expect_compile_error(fn, meta, needle, g_line, "test_errors.cpp");
}

void shape_mismatch(Ptr<f32> x, const Meta&) {
  auto a = arange(0, 128);
  auto b = arange(0, 256);
  g_line = __LINE__; auto c = a + b;
}

void mask_shape(Ptr<f32> x, const Meta&) {
  auto offs = arange(0, 128);
  auto small = arange(0, 64) < 10;
  g_line = __LINE__; auto v = load(x + offs, small);
}

void store_mask_shape(Ptr<f32> x, const Meta&) {
  auto offs = arange(0, 128);
  auto m = arange(0, 256) < 3;
  g_line = __LINE__; store(x + offs, 1.0f, m);
}

void ptr_plus_float(Ptr<f32> x, Float f, const Meta&) {
  g_line = __LINE__; auto p = x + f;
}

void bitwise_float(Ptr<f32> x, const Meta&) {
  auto v = load(x + arange(0, 16));
  g_line = __LINE__; auto w = v & 3;
}

void ptr_times_int(Ptr<f32> x, const Meta&) {
  g_line = __LINE__; auto w = x * 2;
}

void store_non_pointer(Ptr<f32> x, Int n, const Meta&) {
  auto offs = arange(0, 16);
  g_line = __LINE__; store(offs + n, 1.0f);
}

void load_non_pointer(Ptr<f32> x, const Meta&) {
  g_line = __LINE__; auto v = load(arange(0, 16));
}

void non_pow2(Ptr<f32> x, const Meta& m) {
  g_line = __LINE__; auto a = arange(0, m["BLOCK"]);
}

void over_limit(Ptr<f32> x, const Meta&) {
  g_line = __LINE__; auto z = zeros<f32>({2048, 1024});
}

void unknown_meta(Ptr<f32> x, const Meta& m) {
  g_line = __LINE__; int b = m["BLOK"];
  (void)b;
}

Tile g_leaked;
void leak(Ptr<f32> x, const Meta&) { g_leaked = arange(0, 16); }
void use_leaked(Ptr<f32> x, const Meta&) {
  g_line = __LINE__; store(x + g_leaked, 1.0f);
}

void escape_loop(Ptr<f32> x, Int n, const Meta&) {
  Tile inner;
  for (auto i : range(0, n)) inner = arange(0, 16) + i;
  g_line = __LINE__; store(x + inner, 1.0f);
}

void break_loop(Ptr<f32> x, Int n, const Meta&) {
  g_line = __LINE__; for (auto i : range(0, n)) {
    store(x + i, 1.0f);
    break;
  }
}

void var_dtype_change(Ptr<f32> x, Ptr<f16> h, Int n, const Meta&) {
  Var acc{zeros<f32>({16})};
  for (auto i : range(0, n)) {
    g_line = __LINE__; acc = load(h + arange(0, 16));
  }
}

void math_on_int(Ptr<f32> x, const Meta&) {
  g_line = __LINE__; auto e = exp(arange(0, 16));
}

void bad_axis(Ptr<f32> x, const Meta&) {
  g_line = __LINE__; auto p = program_id(3);
}

void where_non_bool(Ptr<f32> x, const Meta&) {
  g_line = __LINE__; auto w = where(arange(0, 16), 1.0f, 2.0f);
}

void rand_float_seed(Ptr<f32> x, Float s, const Meta&) {
  g_line = __LINE__; auto r = rand(s, arange(0, 16));
}
void literal_too_big(Ptr<i8> p, const Meta&) {
  g_line = __LINE__; store(p + arange(0, 16), 1000);
}

void other_shape(Ptr<f32> x, const Meta&) {
  auto offs = arange(0, 16);
  auto other = zeros<f32>({8});
  g_line = __LINE__; auto v = load(x + offs, offs < 3, other);
}

void store_value_shape(Ptr<f32> x, const Meta&) {
  auto row = expand_dims(arange(0, 16), 0);  // [1,16]
  auto big = zeros<f32>({4, 16});
  g_line = __LINE__; store(x + row, big);
}

void var_into_load(Ptr<f32> x, Int n, const Meta&) {
  Var offs{arange(0, 16)};
  auto bad_mask = arange(0, 32) < 3;
  g_line = __LINE__; auto v = load(x + offs, bad_mask);
}
}  // namespace

TEST_CASE("literals that do not fit the target type, and shapes of `other` and stored values") {
  expect_error(literal_too_big, {}, "the literal 1000 does not fit in i8");
  expect_error(other_shape, {}, "load: `other` of shape [8] does not match the pointer tile's shape [16]");
  expect_error(store_value_shape, {}, "store: the value of shape [4,16] does not match the pointer tile's shape [1,16]");
  expect_error(var_into_load, {}, "load: mask of shape [32] does not match");
}

TEST_CASE("shape mismatch in a binary op names the op, both shapes and the line") {
  expect_error(shape_mismatch, {}, "shape mismatch in '+': [128] and [256] cannot be broadcast together");
}

TEST_CASE("a mask whose shape differs from the pointer tile is rejected") {
  expect_error(mask_shape, {}, "load: mask of shape [64] does not match the pointer tile's shape [128]");
  expect_error(store_mask_shape, {}, "store: mask of shape [256] does not match the pointer tile's shape [128]");
}

TEST_CASE("dtypes that cannot be promoted are rejected") {
  expect_error(ptr_plus_float, {}, "pointer offsets must be integers");
  expect_error(bitwise_float, {}, "'&' needs integer operands, got f32 and i32");
  expect_error(ptr_times_int, {}, "'*' cannot combine ptr<f32> with i32");
}

TEST_CASE("store and load through a non-pointer") {
  expect_error(store_non_pointer, {}, "store through a non-pointer: expected a pointer tile");
  expect_error(load_non_pointer, {}, "load through a non-pointer");
}

TEST_CASE("tile sizes must be powers of two and within the limit") {
  expect_error(non_pow2, Meta{{"BLOCK", 1000}}, "tile dimension 1000 must be a power of two");
  expect_error(over_limit, {}, "exceeds the limit of 1048576");
}

TEST_CASE("unknown meta-parameter lists the known ones") {
  expect_error(unknown_meta, Meta{{"BLOCK", 64}}, "unknown meta-parameter 'BLOK' (known: BLOCK)");
}

TEST_CASE("a value from another trace is rejected") {
  trace(leak, {});
  expect_error(use_leaked, {}, "use of a value outside the kernel being traced");
}

TEST_CASE("builtins outside any trace throw, naming the call site") {
  int line = 0;
  try {
    line = __LINE__; auto p = program_id(0);
    FAIL("no error");
  } catch (const CompileError& e) {
    CHECK(e.line() == static_cast<uint32_t>(line));
    CHECK(std::string(e.what()).find("program_id used outside a kernel being traced") != std::string::npos);
  }
}

TEST_CASE("loop errors: escaping values, early exit, Var type change") {
  expect_error(escape_loop, {}, "used after the loop");
  expect_error(break_loop, {}, "the body of a range() loop was left early");
  expect_error(var_dtype_change, {}, "a Var keeps its dtype");
}

TEST_CASE("other checks: math on ints, axis range, where condition, rand seed") {
  expect_error(math_on_int, {}, "exp expects a floating-point tile, got i32[16]");
  expect_error(bad_axis, {}, "program_id: axis must be 0, 1 or 2, got 3");
  expect_error(where_non_bool, {}, "where: the condition must be boolean (i1), got i32");
  expect_error(rand_float_seed, {}, "rand: the seed must be an integer scalar, got f32");
}
