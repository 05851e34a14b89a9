// Op attributes declared in ops.def (TESSEL_ATTR): the table, and the verifier's errors for an
// undeclared attribute, a declared one of the wrong type, and a missing required one.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "all_ops_kernel.hpp"
#include "tessel/ir/accessors.hpp"
#include "tessel/ir/parser.hpp"
#include "tessel/ir/verify.hpp"

using namespace tessel;
using namespace tessel::ir;

namespace {

std::string verify_text(const std::string& body) {
  auto f = parse("kernel @k(%p: ptr<f32>, %n: i32) {\n" + body + "}\n");
  try {
    verify(*f);
  } catch (const VerifyError& e) {
    return e.what();
  }
  return "<accepted>";
}

// The error names the op, the "attributes" check and what is wrong.
void check_rejects(const std::string& body, const std::string& op, const std::string& detail) {
  const std::string m = verify_text(body);
  INFO(body, "\n-> ", m);
  CHECK(m.rfind("verify: op '" + op + "' (#", 0) == 0);
  CHECK(m.find("): attributes: " + detail) != std::string::npos);
}

const char* kTile = "  %0 = arange {end = 64, start = 0} : i32[64]\n";

}  // namespace

TEST_CASE("ops.def attribute table: what the passes read is declared") {
  auto decl = [](OpKind k, std::string_view n) { return find_attr_decl(k, n); };
  REQUIRE(decl(OpKind::Constant, "value"));
  CHECK(decl(OpKind::Constant, "value")->type == AttrType::Number);
  CHECK(decl(OpKind::Constant, "value")->presence == AttrPresence::Required);
  for (OpKind k : {OpKind::ProgramId, OpKind::NumPrograms, OpKind::ExpandDims, OpKind::ReduceSum, OpKind::ReduceMax,
                   OpKind::ReduceMin, OpKind::ArgMax, OpKind::ArgMin, OpKind::Reduce, OpKind::CumSum}) {
    INFO(name_of(k));
    REQUIRE(decl(k, "axis"));
    CHECK(decl(k, "axis")->type == AttrType::Int);
    CHECK(decl(k, "axis")->presence == AttrPresence::Required);
  }
  CHECK(decl(OpKind::Arange, "start"));
  CHECK(decl(OpKind::Arange, "end"));
  REQUIRE(decl(OpKind::Dot, "allow_tf32"));
  CHECK(decl(OpKind::Dot, "allow_tf32")->presence == AttrPresence::Required);
  REQUIRE(decl(OpKind::Load, "multicast"));
  CHECK(decl(OpKind::Load, "multicast")->presence == AttrPresence::Optional);
  // A per-dim family matches "name.<d>" only.
  CHECK(decl(OpKind::Hint, "multiple_of.0"));
  CHECK(decl(OpKind::Hint, "max_contiguous.12"));
  CHECK_FALSE(decl(OpKind::Hint, "multiple_of"));
  CHECK_FALSE(decl(OpKind::Hint, "multiple_of."));
  CHECK_FALSE(decl(OpKind::Hint, "multiple_of.x"));
  // Ops that take none, and names declared for another op.
  CHECK(attrs_of(OpKind::Add).empty());
  CHECK(attrs_of(OpKind::Store).empty());
  CHECK_FALSE(decl(OpKind::Store, "multicast"));
  CHECK_FALSE(decl(OpKind::Sqrt, kPreciseAttr));
}

TEST_CASE("ops.def attribute table: precise is declared exactly on the ops with an approximate form") {
  const std::set<OpKind> want = {OpKind::Exp, OpKind::Exp2, OpKind::Log, OpKind::Log2, OpKind::Rsqrt,
                                 OpKind::Sin, OpKind::Cos, OpKind::Tanh, OpKind::Sigmoid, OpKind::Erf};
  for (int i = 0; i < num_op_kinds(); ++i) {
    const OpKind k = static_cast<OpKind>(i);
    INFO(name_of(k));
    CHECK(has_precise_form(k) == (want.count(k) == 1));
  }
}

TEST_CASE("ops.def attribute table: every attribute of the all-ops kernel is declared") {
  auto f = testing::build_all_ops_kernel();
  int seen = 0;
  auto visit = [&](auto& self, const Block& b) -> void {
    for (const auto& op : b.ops) {
      for (const Attr& a : op->attrs) {
        INFO(op->name(), " ", a.name);
        CHECK(find_attr_decl(op->kind, a.name) != nullptr);
        ++seen;
      }
      for (const auto& r : op->regions) self(self, *r);
    }
  };
  visit(visit, f->body);
  CHECK(seen > 10);
}

TEST_CASE("verify: an attribute ops.def does not declare is rejected") {
  check_rejects("  %0 = add %n, %n {axis = 0} : i32\n", "add", "unexpected attribute 'axis': 'add' takes no attributes (ops.def)");
  check_rejects("  %0 = splat %n {precise = 1} : i32[4]\n", "splat", "unexpected attribute 'precise': 'splat' takes no attributes");
  check_rejects(std::string(kTile) + "  %1 = reduce_sum %0 {axis = 0, keep_dims = 1} : i32\n", "reduce_sum",
                "unexpected attribute 'keep_dims': 'reduce_sum' takes only axis (ops.def)");
  check_rejects("  %0 = arange {end = 4, start = 0, step = 1} : i32[4]\n", "arange",
                "unexpected attribute 'step': 'arange' takes only start, end (ops.def)");
  check_rejects("  %0 = splat %p : ptr<f32>[4]\n  %1 = load %0 {cache = 1} : f32[4]\n", "load",
                "unexpected attribute 'cache': 'load' takes only multicast (ops.def)");
  check_rejects("  %0 = splat %p : ptr<f32>[4]\n  %1 = load %0 : f32[4]\n  store %0, %1 {multicast = 1}\n", "store",
                "unexpected attribute 'multicast': 'store' takes no attributes");
  check_rejects("  %0 = constant {value = 2.0} : f32\n  %1 = sqrt %0 {precise = 1} : f32\n", "sqrt",
                "unexpected attribute 'precise': 'sqrt' takes no attributes");
  check_rejects("  %0 = constant {value = 2.0} : f32\n  %1 = exp %0 {fast = 1} : f32\n", "exp",
                "unexpected attribute 'fast': 'exp' takes only precise (ops.def)");
}

TEST_CASE("verify: a declared attribute of the wrong type is rejected") {
  check_rejects("  %0 = arange {end = 4, start = 0.5} : i32[4]\n", "arange", "attribute 'start' must be an integer, got a float");
  check_rejects(std::string(kTile) + "  %1 = cumsum %0 {axis = 0.0} : i32[64]\n", "cumsum",
                "attribute 'axis' must be an integer, got a float");
  check_rejects("  %0 = constant {value = 2.0} : f32\n  %1 = exp %0 {precise = 1.0} : f32\n", "exp",
                "attribute 'precise' must be an integer, got a float");
}

TEST_CASE("verify: a missing required attribute is rejected; a missing optional one is fine") {
  check_rejects("  %0 = arange {start = 0} : i32[4]\n", "arange",
                "missing attribute 'end' (an integer), which 'arange' requires (ops.def)");
  check_rejects("  %0 = program_id : i32\n", "program_id", "missing attribute 'axis' (an integer), which 'program_id' requires");
  check_rejects(std::string(kTile) + "  %1 = expand_dims %0 : i32[1,64]\n", "expand_dims",
                "missing attribute 'axis' (an integer), which 'expand_dims' requires");
  check_rejects(std::string(kTile) + "  %1 = argmax %0 : i32\n", "argmax", "missing attribute 'axis'");
  CHECK(verify_text("  %0 = constant {value = 2.0} : f32\n  %1 = exp %0 : f32\n") == "<accepted>");
  CHECK(verify_text("  %0 = constant {value = 2.0} : f32\n  %1 = exp %0 {precise = 1} : f32\n") == "<accepted>");
  CHECK(verify_text("  %0 = splat %p : ptr<f32>[4]\n  %1 = load %0 {multicast = 1} : f32[4]\n") == "<accepted>");
}
