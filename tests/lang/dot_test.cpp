// Tracing dot: the IR recorded (dtypes, accumulators, allow_tf32), a K loop carrying the
// accumulator and advancing pointer tiles, and the CompileErrors for bad shapes and dtypes.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "tessel/ir/accessors.hpp"
#include "tessel/ir/printer.hpp"
#include "tessel/ir/verify.hpp"
#include "../common/expect_compile_error.hpp"
#include "tessel/lang/lang.hpp"

using namespace tessel::lang;
namespace ir = tessel::ir;

namespace {
std::vector<std::string> g_types;
int g_line = 0;

void probe(const Tile& t) { g_types.push_back(t.type().str()); }

template <class... A>
std::unique_ptr<ir::Function> traced(void (*fn)(A...)) {
  g_types.clear();
  auto f = trace(fn, {});
  ir::verify(*f);
  return f;
}

std::vector<const ir::Op*> ops_of(const ir::Function& f, ir::OpKind k) {
  std::vector<const ir::Op*> r;
  ir::walk(f.body, [&](const ir::Op& op) {
    if (op.kind == k) r.push_back(&op);
  });
  return r;
}

template <class T>
Tile mat(Ptr<T> p, int R, int C) { return load(p + arange(0, R).col() * C + arange(0, C).row()); }

void dtypes(Ptr<f16> h, Ptr<bf16> b, Ptr<f32> x, Ptr<i8> c, Ptr<f32> out, const Meta&) {
  probe(dot(mat(h, 32, 16), mat(h, 16, 64)));
  probe(dot(mat(b, 16, 32), mat(b, 32, 16)));
  probe(dot(mat(x, 16, 16), mat(x, 16, 16)));
  probe(dot(mat(x, 16, 16), mat(x, 16, 16), DotOptions{.allow_tf32 = false}));
  probe(dot(mat(c, 16, 64), mat(c, 64, 32)));
  auto acc = full<f32>({32, 64}, 1.5f);
  auto r = dot(mat(h, 32, 16), mat(h, 16, 64), acc);
  probe(r);
  store(out + arange(0, 32).col() * 64 + arange(0, 64).row(), r);
}

// The K loop of a matmul: acc and both pointer tiles are loop-carried Vars.
void k_loop(Ptr<f16> a, Ptr<f16> b, Ptr<f32> c, Int M, Int N, Int K, Int lda, Int ldb, const Meta&) {
  auto rm = arange(0, 32), rn = arange(0, 16), rk = arange(0, 16);
  Var pa{a + rm.col() * lda + rk.row()};
  Var pb{b + rk.col() * ldb + rn.row()};
  Var acc{zeros<f32>({32, 16})};
  for (auto k : range(0, K, 16)) {
    auto ka = (k + rk).row() < K;
    auto at = load(pa, (rm.col() < M) & ka, 0.0f);
    auto bt = load(pb, ((k + rk).col() < K) & (rn.row() < N), 0.0f);
    acc = dot(at, bt, acc);
    pa += 16;
    pb += 16 * ldb;
  }
  store(c + rm.col() * N + rn.row(), acc, (rm.col() < M) & (rn.row() < N));
}

template <class... A>
void expect_error(void (*fn)(A...), const std::string& needle) {
  tessel_test::expect_compile_error(fn, Meta{}, needle, g_line, "dot_test.cpp");
}

void k_mismatch(Ptr<f16> h, const Meta&) {
  auto a = mat(h, 32, 32), b = mat(h, 16, 32);
  g_line = __LINE__; auto r = dot(a, b);
}
void too_small(Ptr<f16> h, const Meta&) {
  auto a = mat(h, 8, 16), b = mat(h, 16, 32);
  g_line = __LINE__; auto r = dot(a, b);
}
void small_k(Ptr<f32> x, const Meta&) {
  auto a = mat(x, 16, 8), b = mat(x, 8, 16);
  g_line = __LINE__; auto r = dot(a, b);
}
void bad_dtype(Ptr<i32> p, const Meta&) {
  auto a = mat(p, 16, 16);
  g_line = __LINE__; auto r = dot(a, a);
}
void mixed_dtypes(Ptr<f16> h, Ptr<bf16> b, const Meta&) {
  auto x = mat(h, 16, 16);
  auto y = mat(b, 16, 16);
  g_line = __LINE__; auto r = dot(x, y);
}
void bad_acc_dtype(Ptr<f16> h, const Meta&) {
  auto x = mat(h, 16, 16);
  auto acc = zeros<f16>({16, 16});
  g_line = __LINE__; auto r = dot(x, x, acc);
}
void bad_acc_shape(Ptr<f16> h, const Meta&) {
  auto x = mat(h, 16, 16);
  auto acc = zeros<f32>({16, 32});
  g_line = __LINE__; auto r = dot(x, x, acc);
}
void rank1(Ptr<f16> h, const Meta&) {
  auto x = load(h + arange(0, 16));
  g_line = __LINE__; auto r = dot(x, x);
}
void literal_acc(Ptr<f16> h, const Meta&) {
  auto x = mat(h, 16, 16);
  g_line = __LINE__; auto r = dot(x, x, 0.0f);
}
void pointer_operand(Ptr<f16> h, const Meta&) {
  auto p = h + arange(0, 16).col() * 16 + arange(0, 16).row();
  g_line = __LINE__; auto r = dot(p, p);
}

}  // namespace

TEST_CASE("dot records one op with the accumulator's type and allow_tf32") {
  auto f = traced(&dtypes);
  CHECK(g_types == std::vector<std::string>{"f32[32,64]", "f32[16,16]", "f32[16,16]", "f32[16,16]", "i32[16,32]",
                                            "f32[32,64]"});
  auto dots = ops_of(*f, ir::OpKind::Dot);
  REQUIRE(dots.size() == 6);
  CHECK(dots[0]->int_attr("allow_tf32") == 1);
  CHECK(dots[2]->int_attr("allow_tf32") == 1);
  CHECK(dots[3]->int_attr("allow_tf32") == 0);
  // dot(a, b) starts from a zero constant of the accumulator type
  const ir::Op* zero = dots[4]->operands[2]->def;
  REQUIRE(zero != nullptr);
  CHECK(zero->kind == ir::OpKind::Constant);
  CHECK(zero->results[0]->type.str() == "i32[16,32]");
  CHECK(zero->int_attr("value") == 0);
  // the explicit accumulator is used as given
  const ir::Op* fill = dots[5]->operands[2]->def;  // full<f32>: a splat of the constant 1.5
  REQUIRE(fill->kind == ir::OpKind::Splat);
  CHECK(fill->operands[0]->def->float_attr("value") == 1.5);
  CHECK(dots[5]->loc.line > 0);
}

TEST_CASE("a K loop carries the accumulator and both pointer tiles") {
  auto f = traced(&k_loop);
  auto loops = ops_of(*f, ir::OpKind::For);
  REQUIRE(loops.size() == 1);
  ir::ForOp loop{*loops[0]};
  REQUIRE(loop.num_carried() == 3);
  std::vector<std::string> carried;
  for (int i = 0; i < 3; ++i) carried.push_back(loop.carried(i)->type.str());
  std::sort(carried.begin(), carried.end());
  CHECK(carried == std::vector<std::string>{"f32[32,16]", "ptr<f16>[16,16]", "ptr<f16>[32,16]"});
  // the dot is inside the loop and its result is what the loop yields for acc
  auto dots = ops_of(*f, ir::OpKind::Dot);
  REQUIRE(dots.size() == 1);
  CHECK(dots[0]->parent == &loop.body());
  bool yielded = false;
  for (ir::Value* v : loop.yield().operands) yielded |= v == dots[0]->results[0];
  CHECK(yielded);
  // the store after the loop stores the loop's result
  auto stores = ops_of(*f, ir::OpKind::Store);
  REQUIRE(stores.size() == 1);
  CHECK(stores[0]->operands[1]->def == loops[0]);
}

TEST_CASE("dot errors name the user's line") {
  expect_error(&k_mismatch, "dot: K mismatch: a is f16[32,32] and b is f16[16,32]");
  expect_error(&too_small, "dot: M/N/K must be >= 16 and powers of two, got M = 8, N = 32, K = 16");
  expect_error(&small_k, "got M = 16, N = 16, K = 8");
  expect_error(&bad_dtype, "dot: unsupported operand dtype i32 (dot takes f16, bf16, f32, f8e4m3/f8e5m2 or i8 tiles)");
  expect_error(&mixed_dtypes, "dot: a and b must have the same dtype, got f16[16,16] and bf16[16,16]");
  expect_error(&bad_acc_dtype, "dot: the accumulator must be f32[16,16] for f16[16,16] x f16[16,16], got f16[16,16]");
  expect_error(&bad_acc_shape, "the accumulator must be f32[16,16]");
  expect_error(&rank1, "dot: `a` must be a 2-D numeric tile, got f16[16]");
  expect_error(&literal_acc, "dot: the accumulator must be a f32[16,16] tile, got a literal");
  expect_error(&pointer_operand, "dot: `a` must be a 2-D numeric tile, got ptr<f16>[16,16]");
}
