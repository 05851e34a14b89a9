// Tracing: the IR a kernel records, promotion and broadcasting results, loops and Vars.
#include <doctest/doctest.h>

#include <string>

#include "tessel/ir/printer.hpp"
#include "tessel/ir/verify.hpp"
#include "tessel/lang/lang.hpp"

using namespace tessel::lang;
namespace ir = tessel::ir;

namespace {
ir::Type g_type;  // the type of the tile a test kernel is probing

int count_ops(const ir::Function& f, ir::OpKind k) {
  int n = 0;
  ir::walk(f.body, [&](const ir::Op& op) { n += op.kind == k; });
  return n;
}

void add(Ptr<f32> x, Ptr<f32> y, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask) + load(y + offs, mask), mask);
}

void f16_plus_f32(Ptr<f16> h, Ptr<f32> x, const Meta&) {
  g_type = (load(h + arange(0, 8)) + load(x + arange(0, 8))).type();
}
void f16_times_literal(Ptr<f16> h, const Meta&) { g_type = (load(h + arange(0, 8)) * 2.0).type(); }
void int_plus_float_literal(Ptr<f32> x, const Meta&) { g_type = (arange(0, 8) + 1.5).type(); }
void i8_plus_i32(Ptr<i8> p, const Meta&) { g_type = (load(p + arange(0, 8)) + arange(0, 8)).type(); }
void i32_plus_big_literal(Ptr<f32> x, const Meta&) { g_type = (arange(0, 8) + (int64_t{1} << 40)).type(); }
void f16_plus_bf16(Ptr<f16> h, Ptr<bf16> b, const Meta&) {
  g_type = (load(h + arange(0, 8)) + load(b + arange(0, 8))).type();
}
void compare_type(Ptr<f32> x, const Meta&) { g_type = (load(x + arange(0, 8)) < 0.5f).type(); }
void outer_sum(Ptr<f32> x, const Meta&) {
  auto r = expand_dims(arange(0, 16), 1);  // [16,1]
  auto c = expand_dims(arange(0, 32), 0);  // [1,32]
  g_type = (r * 32 + c).type();
  store(x + r * 32 + c, 1.0f);
}
void scalar_splat(Ptr<f32> x, Float s, const Meta&) { g_type = (arange(0, 64) * s).type(); }

template <class... A>
ir::Type type_of(void (*fn)(A...)) {
  auto f = trace(fn, {});
  ir::verify(*f);
  return g_type;
}

void loop_two_vars(Ptr<f32> x, Ptr<f32> out, Int n, const Meta&) {
  Var acc{zeros<f32>({32})};
  Var count{0};
  Var untouched{5};
  for (auto i : range(0, n, 32)) {
    acc += load(x + i + arange(0, 32), i + arange(0, 32) < n, 0.0f);
    count += 1;
  }
  store(out + arange(0, 32), acc + count + untouched);
}

void nested_loops(Ptr<f32> out, Int n, const Meta&) {
  Var total{0};
  for (auto i : range(0, n)) {
    for (auto j : range(0, i)) total += j;
  }
  store(out, total);
}

void unrolled(Ptr<f32> out, const Meta& m) {
  Tile acc = zeros<f32>({16});
  for (int k = 0; k < m["K"]; ++k) acc = acc + static_cast<float>(k);  // C++ loop: unrolled at trace time
  store(out + arange(0, 16), acc);
}
}  // namespace

TEST_CASE("vector add traces into the expected ops") {
  auto f = trace(add, Meta{{"BLOCK", 256}}, {.name = "add", .param_names = {"x", "y", "out", "n"}});
  ir::verify(*f);
  CHECK(f->params.size() == 4);
  CHECK(f->params[0].name == "x");
  CHECK(f->body.args[0]->type.str() == "ptr<f32>");
  CHECK(f->body.args[3]->type.str() == "i32");
  CHECK(count_ops(*f, ir::OpKind::Load) == 2);
  CHECK(count_ops(*f, ir::OpKind::Store) == 1);
  CHECK(count_ops(*f, ir::OpKind::Arange) == 1);
  std::string text = ir::print(*f);
  CHECK(text.find("arange {end = 256, start = 0} : i32[256]") != std::string::npos);
  CHECK(text.find("cmp_lt") != std::string::npos);
}

TEST_CASE("Triton's promotion rules") {
  CHECK(type_of(f16_plus_f32).str() == "f32[8]");
  CHECK(type_of(f16_times_literal).str() == "f16[8]");  // literals are weak
  CHECK(type_of(int_plus_float_literal).str() == "f32[8]");
  CHECK(type_of(i8_plus_i32).str() == "i32[8]");
  CHECK(type_of(i32_plus_big_literal).str() == "i64[8]");
  CHECK(type_of(f16_plus_bf16).str() == "f32[8]");
  CHECK(type_of(compare_type).str() == "i1[8]");
  CHECK(type_of(scalar_splat).str() == "f32[64]");
}

TEST_CASE("broadcasting builds 2-D tiles from 1-D ones") { CHECK(type_of(outer_sum).str() == "i32[16,32]"); }

TEST_CASE("range loops carry exactly the Vars used inside") {
  auto f = trace(loop_two_vars, {});
  ir::verify(*f);
  const ir::Op* loop = nullptr;
  ir::walk(f->body, [&](const ir::Op& op) {
    if (op.kind == ir::OpKind::For) loop = &op;
  });
  REQUIRE(loop != nullptr);
  CHECK(loop->results.size() == 2);  // acc and count; `untouched` is not carried
  CHECK(loop->results[0]->type.str() == "f32[32]");
  CHECK(loop->results[1]->type.str() == "i32");
  CHECK(loop->body().args.size() == 3);  // iv + 2 carried
  CHECK(loop->body().terminator()->kind == ir::OpKind::Yield);
}

TEST_CASE("nested loops carry a Var through both levels") {
  auto f = trace(nested_loops, {});
  ir::verify(*f);
  CHECK(count_ops(*f, ir::OpKind::For) == 2);
  CHECK(count_ops(*f, ir::OpKind::Yield) == 2);
  std::string text = ir::print(*f);
  CHECK(text.find("= for") != std::string::npos);
}

TEST_CASE("C++ loops over ints unroll at trace time") {
  auto f = trace(unrolled, Meta{{"K", 3}});
  CHECK(count_ops(*f, ir::OpKind::For) == 0);
  CHECK(count_ops(*f, ir::OpKind::Add) == 3);
}

TEST_CASE("Meta is sorted and compares by value") {
  Meta a{{"B", 2}, {"A", 1}};
  Meta b{{"A", 1}, {"B", 2}};
  CHECK(a == b);
  CHECK(a.str() == "A=1,B=2");
  CHECK(a["B"] == 2);
  a.set("B", 3);
  CHECK(a["B"] == 3);
  CHECK_FALSE(a == b);
}
