// Tracing: integer literals are weak against i8/i16 (and i32/i64) tiles, per docs/dsl.md §5.
//
// `x_i8 + 1` must stay i8 (the literal takes the tile's type when it fits), on either side of
// every binary operator; a literal that does not fit the tile's type makes the result i64.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tessel/ir/printer.hpp"
#include "tessel/ir/verify.hpp"
#include "tessel/lang/lang.hpp"

using namespace tessel::lang;
namespace ir = tessel::ir;

namespace {

std::vector<std::string> g_types;  // the types of the tiles a kernel probed, in order
void probe(const Tile& t) { g_types.push_back(t.type().str()); }

template <class... A>
std::unique_ptr<ir::Function> traced(void (*fn)(A...), const Meta& meta = {}) {
  g_types.clear();
  auto f = trace(fn, meta);
  ir::verify(*f);
  return f;
}

// Every operand type of every op of kind `k`, as "t1,t2" strings (the constants' types show
// whether the literal was made i8 or widened).
std::vector<std::string> operand_types(const ir::Function& f, ir::OpKind k) {
  std::vector<std::string> out;
  ir::walk(f.body, [&](const ir::Op& op) {
    if (op.kind != k) return;
    std::string s;
    for (int i = 0; i < op.num_operands(); ++i) s += (i ? "," : "") + op.operand(i)->type.str();
    out.push_back(s);
  });
  return out;
}

int count_ops(const ir::Function& f, ir::OpKind k) {
  int n = 0;
  ir::walk(f.body, [&](const ir::Op& op) { n += op.kind == k; });
  return n;
}

// In-range literals on both sides of every arithmetic, bitwise and shift operator.
void i8_in_range(Ptr<i8> p, const Meta&) {
  auto x = load(p + arange(0, 16));
  probe(x + 1), probe(1 + x), probe(x - 1), probe(1 - x), probe(x * 3), probe(3 * x);
  probe(x / 2), probe(100 / x), probe(x % 7), probe(7 % x);
  probe(x & 15), probe(15 | x), probe(x ^ -1), probe(x << 3), probe(x >> 1);
  probe(x + 127), probe(x + (-128)), probe(-128 - x);
  probe(x + true);  // a bool literal takes the integer tile's type
}

void i16_in_range(Ptr<i16> p, const Meta&) {
  auto x = load(p + arange(0, 16));
  probe(x + 1), probe(1 + x), probe(x * 300), probe(300 * x), probe(x - 32767), probe(-32768 + x);
  probe(x / 3), probe(x % 1000), probe(x & 0x7FFF), probe(x << 2);
}

// Literals that do not fit the tile's type make the result i64 (not the next wider type).
void out_of_range(Ptr<i8> p, Ptr<i16> q, const Meta&) {
  auto x = load(p + arange(0, 16));
  auto y = load(q + arange(0, 16));
  probe(x + 128), probe(x - 129), probe(x * 300), probe(300 * x), probe(x + 200);
  probe(y + 32768), probe(-32769 * y), probe(y * 100000);
  probe(x - 128), probe(y - 32768);  // C++ reads these as x - (+128): +128 does not fit i8
}

// Comparisons, where/minimum/maximum and the other integer widths.
void other_uses(Ptr<i8> p, Ptr<i16> q, Ptr<i32> r, Ptr<i64> s, const Meta&) {
  auto x = load(p + arange(0, 16));
  auto y = load(q + arange(0, 16));
  probe(x < 1), probe(where(x < 0, x, 1)), probe(where(y > 0, 1, y)), probe(minimum(x, 5)), probe(maximum(-7, y));
  probe(load(r + arange(0, 16)) + 1), probe(load(s + arange(0, 16)) * 3);
  probe(load(r + arange(0, 16)) + (int64_t{1} << 31));  // does not fit i32: i64
  probe((x < 0) + 1);                                    // an i1 tile with a literal: i32
  probe(x + 1.5f);                                       // a float literal with ints: f32
}

// A Var keeps its dtype: `acc_i8 += 1` would be a dtype error if the literal were not weak.
void i8_var(Ptr<i8> p, Int n, const Meta&) {
  Var acc{load(p + arange(0, 16))};
  for (auto i : range(0, n)) {
    acc += 1;
    acc *= 3;
    acc -= 100;
  }
  probe(acc.get());
  store(p + arange(0, 16), acc);
}

}  // namespace

TEST_CASE("an integer literal next to an i8 tile stays i8, on either side of every operator") {
  auto f = traced(i8_in_range);
  REQUIRE(g_types.size() == 19);
  for (size_t i = 0; i < g_types.size(); ++i) {
    CAPTURE(i);
    CHECK(g_types[i] == "i8[16]");
  }
  // nothing was widened: no cast, every literal became an i8 constant, the adds are i8 + i8
  CHECK(count_ops(*f, ir::OpKind::Cast) == 0);
  CHECK(count_ops(*f, ir::OpKind::Constant) >= 19);
  ir::walk(f->body, [&](const ir::Op& op) {
    if (op.kind == ir::OpKind::Constant) CHECK(op.result()->type.str() == "i8");
  });
  for (const std::string& t : operand_types(*f, ir::OpKind::Add)) CHECK(t == "i8[16],i8[16]");
  for (const std::string& t : operand_types(*f, ir::OpKind::Mul)) CHECK(t == "i8[16],i8[16]");
}

TEST_CASE("an integer literal next to an i16 tile stays i16") {
  auto f = traced(i16_in_range);
  REQUIRE(g_types.size() == 10);
  for (size_t i = 0; i < g_types.size(); ++i) {
    CAPTURE(i);
    CHECK(g_types[i] == "i16[16]");
  }
  CHECK(count_ops(*f, ir::OpKind::Cast) == 0);
}

TEST_CASE("a literal that does not fit the i8/i16 tile's type gives i64 (docs/dsl.md: x_i8 + 200 -> i64)") {
  auto f = traced(out_of_range);
  REQUIRE(g_types.size() == 10);
  for (size_t i = 0; i < g_types.size(); ++i) {
    CAPTURE(i);
    CHECK(g_types[i] == "i64[16]");
  }
  // the tile is cast up (once per operator) and the literal is an i64 constant
  for (const std::string& t : operand_types(*f, ir::OpKind::Cast)) CHECK((t == "i8[16]" || t == "i16[16]"));
  CHECK(count_ops(*f, ir::OpKind::Cast) == 10);
  ir::walk(f->body, [&](const ir::Op& op) {
    if (op.kind == ir::OpKind::Constant) CHECK(op.result()->type.str() == "i64");
  });
}

TEST_CASE("literals in comparisons, where, minimum/maximum and with i1/i32/i64/float") {
  auto f = traced(other_uses);
  const std::vector<std::string> want = {"i1[16]",  "i8[16]",  "i16[16]", "i8[16]", "i16[16]",
                                         "i32[16]", "i64[16]", "i64[16]", "i32[16]", "f32[16]"};
  CHECK(g_types == want);
  // the comparison x < 1 compares in i8
  const auto lt = operand_types(*f, ir::OpKind::CmpLt);
  REQUIRE(!lt.empty());
  CHECK(lt.front() == "i8[16],i8[16]");
}

TEST_CASE("a Var of i8 takes += / *= / -= with literals and keeps i8") {
  traced(i8_var);
  REQUIRE(g_types.size() == 1);
  CHECK(g_types[0] == "i8[16]");
}
