// The hint op (multiple_of / max_contiguous): what the verifier accepts and rejects, and its text form.
#include <doctest/doctest.h>

#include <string>

#include "tessel/ir/accessors.hpp"
#include "tessel/ir/builder.hpp"
#include "tessel/ir/parser.hpp"
#include "tessel/ir/printer.hpp"
#include "tessel/ir/verify.hpp"

using namespace tessel;
using namespace tessel::ir;

namespace {

std::string verify_text(const std::string& body) {
  auto f = parse("kernel @k(%p: ptr<f32>, %n: i32, %x: f32) {\n" + body + "}\n");
  try {
    verify(*f);
  } catch (const VerifyError& e) {
    return e.what();
  }
  return "<accepted>";
}

void check_rejects(const std::string& body, const std::string& detail) {
  std::string m = verify_text(body);
  INFO(body, "\n-> ", m);
  CHECK(m.rfind("verify: op 'hint' (#", 0) == 0);
  CHECK(m.find("rule Hint: ") != std::string::npos);
  CHECK(m.find(detail) != std::string::npos);
}

// Names and types are checked against ops.def's declarations before the rule runs.
void check_attr_rejects(const std::string& body, const std::string& detail) {
  std::string m = verify_text(body);
  INFO(body, "\n-> ", m);
  CHECK(m.rfind("verify: op 'hint' (#", 0) == 0);
  CHECK(m.find("): attributes: " + detail) != std::string::npos);
}

const char* kTile = "  %0 = arange {end = 64, start = 0} : i32[64]\n";
const char* kTile2 =
    "  %0 = arange {end = 8, start = 0} : i32[8]\n"
    "  %1 = expand_dims %0 {axis = 0} : i32[1,8]\n"
    "  %2 = broadcast %1 : i32[4,8]\n";

}  // namespace

TEST_CASE("hint: the verifier accepts scalars, tiles, pointers and either family") {
  CHECK(verify_text("  %0 = hint %n {multiple_of.0 = 16} : i32\n") == "<accepted>");
  CHECK(verify_text("  %0 = hint %p {multiple_of.0 = 16} : ptr<f32>\n") == "<accepted>");
  CHECK(verify_text(std::string(kTile) + "  %1 = hint %0 {max_contiguous.0 = 64, multiple_of.0 = 64} : i32[64]\n") ==
        "<accepted>");
  CHECK(verify_text(std::string(kTile) + "  %1 = hint %0 {max_contiguous.0 = 4} : i32[64]\n") == "<accepted>");
  CHECK(verify_text(std::string(kTile2) + "  %3 = hint %2 {max_contiguous.0 = 1, max_contiguous.1 = 8, "
                                          "multiple_of.0 = 1, multiple_of.1 = 8} : i32[4,8]\n") == "<accepted>");
  CHECK(verify_text("  %0 = hint %n {max_contiguous.0 = 1} : i32\n") == "<accepted>");
}

TEST_CASE("hint: the verifier rejects bad operands and claims with clear messages") {
  check_rejects("  %0 = hint %x {multiple_of.0 = 4} : f32\n", "operand must be an integer (not i1) or pointer");
  check_rejects("  %0 = cmp_lt %n, %n : i1\n  %1 = hint %0 {multiple_of.0 = 2} : i1\n",
                "operand must be an integer (not i1) or pointer scalar or tile, got i1");
  check_rejects("  %0 = hint %n {multiple_of.0 = 12} : i32\n", "'multiple_of.0' must be a positive power of two, got 12");
  check_rejects("  %0 = hint %n {multiple_of.0 = 0} : i32\n", "must be a positive power of two, got 0");
  check_rejects("  %0 = hint %n {multiple_of.0 = -8} : i32\n", "must be a positive power of two, got -8");
  check_attr_rejects("  %0 = hint %n {multiple_of.0 = 2.0} : i32\n", "attribute 'multiple_of.0' must be an integer, got a float");
  check_rejects("  %0 = hint %n {max_contiguous.0 = 2} : i32\n", "does not divide dim 0 of i32 (size 1)");
  check_rejects(std::string(kTile) + "  %1 = hint %0 {max_contiguous.0 = 128} : i32[64]\n",
                "'max_contiguous.0' = 128 does not divide dim 0 of i32[64] (size 64)");
  check_rejects(std::string(kTile) + "  %1 = hint %0 {multiple_of.1 = 4} : i32[64]\n",
                "unexpected attribute 'multiple_of.1': expected multiple_of.<d> or max_contiguous.<d> with d in 0..0");
  check_attr_rejects(std::string(kTile) + "  %1 = hint %0 {axis = 4} : i32[64]\n",
                     "unexpected attribute 'axis': 'hint' takes only multiple_of.<d>, max_contiguous.<d> (ops.def)");
  check_rejects(std::string(kTile) + "  %1 = hint %0 {multiple_of.00 = 4} : i32[64]\n",
                "unexpected attribute 'multiple_of.00'");
  check_rejects(std::string(kTile) + "  %1 = hint %0 : i32[64]\n",
                "expected a multiple_of or max_contiguous claim, got neither");
  check_rejects(std::string(kTile2) + "  %3 = hint %2 {multiple_of.1 = 8} : i32[4,8]\n",
                "multiple_of needs one entry per dim (2 for i32[4,8]), got 1");
  check_rejects(std::string(kTile2) + "  %3 = hint %2 {max_contiguous.0 = 4, max_contiguous.1 = 16} : i32[4,8]\n",
                "'max_contiguous.1' = 16 does not divide dim 1 of i32[4,8] (size 8)");
  // The result has the operand's type (result rule SameAs0).
  std::string m = verify_text("  %0 = hint %n {multiple_of.0 = 4} : i64\n");
  CHECK(m.find("result rule SameAs0: expected result 0 of type i32, got i64") != std::string::npos);
}

TEST_CASE("hint: Builder::hint, HintOp and the text form round trip") {
  Function f("k");
  Builder b(f);
  Value* p = f.add_param("p", Type{f32().pointer_to(), {}});
  Value* s = f.add_param("s", Type{i64(), {}});
  Value* t = b.broadcast(b.expand_dims(b.arange(0, 16), 0), Shape{2, 16});
  Value* ht = b.hint(t, {1, 16}, {1, 16});
  Value* hs = b.hint(s, {8});
  Value* hp = b.hint(p, {}, {1});
  REQUIRE_NOTHROW(verify(f));
  HintOp h{*ht->def};
  CHECK(h.multiple_of() == std::vector<int64_t>{1, 16});
  CHECK(h.max_contiguous() == std::vector<int64_t>{1, 16});
  CHECK(HintOp{*hs->def}.multiple_of() == std::vector<int64_t>{8});
  CHECK(HintOp{*hs->def}.max_contiguous().empty());
  CHECK(HintOp{*hp->def}.multiple_of().empty());
  CHECK(ht->type == t->type);
  CHECK(hp->type == p->type);

  const std::string text = print(f);
  INFO(text);
  CHECK(text.find("hint %2 {max_contiguous.0 = 1, max_contiguous.1 = 16, multiple_of.0 = 1, multiple_of.1 = 16} "
                  ": i32[2,16]") != std::string::npos);
  CHECK(text.find("hint %s {multiple_of.0 = 8} : i64") != std::string::npos);
  CHECK(text.find("hint %p {max_contiguous.0 = 1} : ptr<f32>") != std::string::npos);
  auto g = parse(text);
  REQUIRE_NOTHROW(verify(*g));
  CHECK(print(*g) == text);
}
