// multiple_of / max_contiguous in the DSL: the hint ops they record and the mistakes they report.
#include <doctest/doctest.h>

#include <string>

#include "tessel/ir/accessors.hpp"
#include "tessel/ir/verify.hpp"
#include "../common/expect_compile_error.hpp"
#include "tessel/lang/lang.hpp"

using namespace tessel::lang;
namespace ir = tessel::ir;

namespace {
int g_line = 0;

std::vector<const ir::Op*> hints_of(const ir::Function& f) {
  std::vector<const ir::Op*> out;
  ir::walk(f.body, [&](const ir::Op& op) {
    if (op.kind == ir::OpKind::Hint) out.push_back(&op);
  });
  return out;
}

void hinted_copy(Ptr<f32> x, Ptr<f32> out, Int n, Int stride, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto start = multiple_of(program_id(0) * BLOCK, BLOCK);       // i32 scalar
  auto offs = max_contiguous(multiple_of(start + arange(0, BLOCK), 16), BLOCK);
  auto s = multiple_of(stride, 8);                             // Int parameter
  auto mask = offs < n;
  auto px = multiple_of(x, 16);                                // pointer scalar
  auto rows = expand_dims(arange(0, 4), 1) * s;                // [4,1]
  auto grid = multiple_of(rows + expand_dims(arange(0, 8), 0), {8, 1});  // [4,8]
  store(out + offs, load(px + offs, mask), mask);
  store(out + grid, 1.0f);
}

template <class... A>
void expect_error(void (*fn)(A...), const std::string& needle) {
  tessel_test::expect_compile_error(fn, Meta{}, needle, g_line, "hint_trace_test.cpp");
}

void not_pow2(Ptr<f32> x, const Meta&) { g_line = __LINE__; auto h = multiple_of(arange(0, 64), 12); }
void zero(Ptr<f32> x, const Meta&) { g_line = __LINE__; auto h = max_contiguous(arange(0, 64), 0); }
void negative(Int n, const Meta&) { g_line = __LINE__; auto h = multiple_of(n, -4); }
void too_long_run(Ptr<f32> x, const Meta&) { g_line = __LINE__; auto h = max_contiguous(arange(0, 64), 128); }
void scalar_run(Int n, const Meta&) { g_line = __LINE__; auto h = max_contiguous(n, 2); }
void wrong_length(Ptr<f32> x, const Meta&) {
  auto t = expand_dims(arange(0, 64), 0);
  g_line = __LINE__; auto h = multiple_of(t, {16, 16, 1});
}
void single_value_2d(Ptr<f32> x, const Meta&) {
  auto t = expand_dims(arange(0, 64), 0);
  g_line = __LINE__; auto h = multiple_of(t, 16);
}
void float_tile(Ptr<f32> x, const Meta&) {
  auto v = load(x + arange(0, 64));
  g_line = __LINE__; auto h = multiple_of(v, 16);
}
void bool_tile(Ptr<f32> x, const Meta&) { g_line = __LINE__; auto h = multiple_of(arange(0, 64) < 3, 2); }
void literal(Ptr<f32> x, const Meta&) { g_line = __LINE__; auto h = multiple_of(64, 16); }
void multicast_not_load(Ptr<f32> x, const Meta&) { g_line = __LINE__; auto h = multicast(arange(0, 64)); }
void multicast_load(Ptr<f32> x, Ptr<f32> out, const Meta&) {
  auto offs = arange(0, 64);
  store(out + offs, multicast(load(x + offs)) * 2.0f);
}

}  // namespace

TEST_CASE("multiple_of / max_contiguous record verified hint ops with one entry per dim") {
  auto f = trace(hinted_copy, Meta{{"BLOCK", 128}});
  REQUIRE_NOTHROW(ir::verify(*f));
  auto hs = hints_of(*f);
  REQUIRE(hs.size() == 6);
  auto mult = [&](int i) { return ir::HintOp{*hs[i]}.multiple_of(); };
  auto contig = [&](int i) { return ir::HintOp{*hs[i]}.max_contiguous(); };
  CHECK(mult(0) == std::vector<int64_t>{128});
  CHECK(hs[0]->operands[0]->type.is_scalar());
  CHECK(mult(1) == std::vector<int64_t>{16});
  CHECK(contig(1).empty());
  // Nested hints merge: max_contiguous(multiple_of(y, 16), BLOCK) is one op on y with both.
  CHECK(contig(2) == std::vector<int64_t>{128});
  CHECK(mult(2) == std::vector<int64_t>{16});
  CHECK(hs[2]->operands[0] == hs[1]->operands[0]);
  CHECK(mult(3) == std::vector<int64_t>{8});
  CHECK(hs[3]->operands[0] == f->body.args[3]);     // the stride parameter itself
  CHECK(mult(4) == std::vector<int64_t>{16});
  CHECK(hs[4]->operands[0]->type.dtype.ptr);
  CHECK(mult(5) == std::vector<int64_t>{8, 1});
  CHECK(hs[5]->results[0]->type.shape == ir::Shape{4, 8});
  // The user's line travels with the op.
  for (const ir::Op* h : hs) CHECK(std::string(h->loc.file).find("hint_trace_test.cpp") != std::string::npos);
}

TEST_CASE("hint mistakes are CompileErrors at the user's line") {
  expect_error(not_pow2, "multiple_of: the value for dim 0 must be a positive power of two, got 12");
  expect_error(zero, "max_contiguous: the value for dim 0 must be a positive power of two, got 0");
  expect_error(negative, "multiple_of: the value for dim 0 must be a positive power of two, got -4");
  expect_error(too_long_run, "max_contiguous: a run of 128 does not fit dim 0 of i32[64] (size 64)");
  expect_error(scalar_run, "max_contiguous: a run of 2 does not fit dim 0 of i32 (size 1)");
  expect_error(wrong_length, "multiple_of: i32[1,64] needs 2 value(s), one per dim, got 3 (16, 16, 1)");
  expect_error(single_value_2d, "multiple_of: i32[1,64] has 2 dims; pass one value per dim, e.g. multiple_of(x, {1, 1})");
  expect_error(float_tile, "multiple_of takes an integer or pointer value, got f32[64]");
  expect_error(bool_tile, "multiple_of takes an integer or pointer value, got i1[64]");
  expect_error(literal, "multiple_of takes a traced integer or pointer value, not a literal");
  expect_error(multicast_not_load, "multicast takes the result of a load, got the result of arange");
}

TEST_CASE("multicast marks its load (verified), and a load takes no other attribute") {
  auto f = trace(&multicast_load, Meta{});
  int marked = 0;
  ir::walk(f->body, [&](const ir::Op& op) {
    if (op.kind == ir::OpKind::Load) marked += op.has_attr("multicast") && op.int_attr("multicast") == 1;
  });
  CHECK(marked == 1);
  CHECK_NOTHROW(ir::verify(*f));
  ir::walk(f->body, [&](const ir::Op& op) {
    if (op.kind == ir::OpKind::Load) const_cast<ir::Op&>(op).set_attr("cache", int64_t{1});
  });
  CHECK_THROWS_WITH(ir::verify(*f), doctest::Contains("unexpected attribute 'cache': 'load' takes only multicast"));
}
