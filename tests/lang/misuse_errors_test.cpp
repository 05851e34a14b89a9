// Misuses that once escaped as a read of freed memory, a VerifyError or the wrong message: each is a CompileError at the user's line.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "../common/expect_compile_error.hpp"
#include "tessel/lang/lang.hpp"

using namespace tessel::lang;
using tessel::CompileError;

namespace {
int g_line = 0;

template <class... A>
void expect_error(void (*fn)(A...), const Meta& meta, const std::string& needle) {
  tessel_test::expect_compile_error(fn, meta, needle, g_line, "misuse_errors_test.cpp");
}

// Runs `use` (one statement at line `line`) and expects a CompileError at that line carrying `needle`.
template <class F>
void expect_throw_at(F use, int line, const std::string& needle) {
  try {
    use();
    FAIL("expected a CompileError containing: " << needle);
  } catch (const CompileError& e) {
    INFO("message: " << std::string(e.what()));
    CHECK(std::string(e.what()).find(needle) != std::string::npos);
    CHECK(e.line() == static_cast<uint32_t>(line));
    CHECK(std::string(e.file()).find("misuse_errors_test.cpp") != std::string::npos);
  }
}

// ---- tiles kept past their trace ----------------------------------------------------------
Tile g_kept;      // a tile a kernel leaves in a global
Ptr<f32> g_param;  // a kernel parameter kept the same way

void keep_tiles(Ptr<f32> x, const Meta&) {
  g_kept = arange(0, 16) * 3;
  g_param = x;
}

void use_kept_shape(Ptr<f32> x, const Meta&) {
  g_line = __LINE__; auto n = g_kept.shape().size();
}

}  // namespace

TEST_CASE("a Tile kept past its trace: asking its type, shape or dtype is a CompileError, not a freed read") {
  // The IR of keep_tiles is freed when trace() returns (the unique_ptr is dropped here), so the
  // kept handles point into freed memory: the old type() read it (ASan: heap-use-after-free in
  // ir::Type::str()).
  trace(keep_tiles, {});
  const std::string ended = "use of a value outside the kernel being traced: this tile was kept after its kernel's "
                            "trace ended";
  int line = 0;
  line = __LINE__; expect_throw_at([] { (void)g_kept.type().str(); }, line, ended);
  line = __LINE__; expect_throw_at([] { (void)g_kept.shape(); }, line, ended);
  line = __LINE__; expect_throw_at([] { (void)g_kept.dtype(); }, line, ended);
  line = __LINE__; expect_throw_at([] { (void)g_kept.is_scalar(); }, line, ended);
  line = __LINE__; expect_throw_at([] { (void)g_param.dtype().str(); }, line, ended);
  // Inside another kernel's trace it is a value of a different kernel.
  expect_error(use_kept_shape, {}, "this tile was created while tracing a different kernel");
  // An empty Tile is the user's mistake too, not an internal assert.
  Tile empty;
  line = __LINE__; expect_throw_at([&] { (void)empty.shape(); }, line, "use of an empty Tile");
}

// ---- tiles past the element limit by broadcasting ------------------------------------------
namespace {
void broadcast_add(Ptr<f32> x, const Meta&) {
  auto rows = arange(0, 1024);
  auto cols = arange(0, 2048);
  g_line = __LINE__; auto big = rows.col() + cols.row();
}

void broadcast_offsets(Ptr<f32> x, const Meta&) {
  auto rows = arange(0, 2048);
  auto cols = arange(0, 1024);
  g_line = __LINE__; auto p = x + rows.col() * 1024 + cols.row();
}

void broadcast_where(Ptr<f32> x, const Meta&) {
  auto rows = arange(0, 4096).col();
  auto cols = arange(0, 512).row();
  g_line = __LINE__; auto w = where(rows < 7, 1.0f, cast<f32>(cols));
}

void broadcast_at_limit(Ptr<f32> x, const Meta&) {
  auto rows = arange(0, 1024);
  auto cols = arange(0, 1024);
  auto fits = rows.col() + cols.row();  // exactly 2^20 elements: allowed
  store(x + fits, 1.0f);
}

void dot_result_past_limit(Ptr<f16> x, const Meta&) {
  auto a = load(x + arange(0, 2048).col() * 16 + arange(0, 16).row());
  auto b = load(x + arange(0, 16).col() * 2048 + arange(0, 2048).row());
  g_line = __LINE__; auto c = dot(a, b);
}
}  // namespace

TEST_CASE("a broadcast or a dot result past 2^20 elements is a CompileError at the user's line") {
  expect_error(broadcast_add, {},
               "'+': broadcasting [1024,1] and [1,2048] gives a tile of shape [1024,2048], more than the limit of "
               "1048576 elements");
  expect_error(broadcast_offsets, {}, "gives a tile of shape [2048,1024], more than the limit");
  expect_error(broadcast_where, {}, "gives a tile of shape [4096,512], more than the limit");
  expect_error(dot_result_past_limit, {}, "dot: the result: tile of 4194304 elements exceeds the limit of 1048576");
  CHECK_NOTHROW(trace(broadcast_at_limit, {}));
}

// ---- one range() object iterated twice -----------------------------------------------------
namespace {
void range_twice(Ptr<i32> out, Int n, const Meta&) {
  Var acc(0);
  g_line = __LINE__; auto r = range(0, n);
  for (auto i : r) acc += i;
  for (auto i : r) acc += i * 2;
  store(out, acc);
}
}  // namespace

TEST_CASE("iterating one range() object twice is a CompileError at its line") {
  expect_error(range_twice, {}, "range: this range() object is iterated a second time");
}

// ---- break with a Var used after the loop ---------------------------------------------------
namespace {
void break_var_used_after(Ptr<i32> out, Int n, const Meta&) {
  Var acc(0);
  g_line = __LINE__; for (auto i : range(0, n)) {
    acc += i;
    break;
  }
  store(out, acc);  // acc is a declared Var: the problem is the break, not a missing Var
}

void break_tile_used_after(Ptr<i32> out, Int n, const Meta&) {
  Tile t = arange(0, 16);
  g_line = __LINE__; for (auto i : range(0, n)) {
    t = t + i;
    break;
  }
  store(out + arange(0, 16), t);
}

void break_inner_loop(Ptr<i32> out, Int n, const Meta&) {
  Var acc(0);
  for (auto j : range(0, n)) {
    g_line = __LINE__; for (auto i : range(0, j)) {
      acc += i;
      break;
    }
    acc += j;
  }
  store(out, acc);
}
}  // namespace

TEST_CASE("break in a loop whose Var or tile is used after it gives the documented break message") {
  const std::string left = "the body of a range() loop was left early (break, return or goto); traced loops must "
                           "run their body to the end";
  expect_error(break_var_used_after, {}, left);
  expect_error(break_tile_used_after, {}, left);
  expect_error(break_inner_loop, {}, left);
}

// ---- meta-parameters must fit the C++ ints kernels read them into ---------------------------
TEST_CASE("meta-parameter values outside the 32-bit range are refused where they are stored") {
  int line = 0;
  // 2^32 + 128 would become 128 in `const int BLOCK = m["BLOCK"]`.
  line = __LINE__; expect_throw_at([] { Meta m{{"BLOCK", int64_t{4294967424}}}; }, line,
                                   "meta-parameter BLOCK=4294967424 does not fit a 32-bit int");
  Meta m;
  line = __LINE__; expect_throw_at([&] { m.set("BLOCK", int64_t{INT32_MAX} + 1); }, line,
                                   "meta-parameter BLOCK=2147483648 does not fit a 32-bit int");
  line = __LINE__; expect_throw_at([&] { m.set("NEG", int64_t{INT32_MIN} - 1); }, line,
                                   "meta-parameter NEG=-2147483649 does not fit a 32-bit int");
  CHECK_FALSE(m.has("BLOCK"));  // a refused value is not stored
  m.set("BLOCK", INT32_MAX).set("NEG", INT32_MIN);
  CHECK(m["BLOCK"] == INT32_MAX);
  CHECK(m["NEG"] == INT32_MIN);
}
