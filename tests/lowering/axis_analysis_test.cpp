// Axis analysis on small kernels: contiguity, divisibility and constancy per dim.
#include <doctest/doctest.h>

#include "kernels.hpp"
#include "tessel/ir/accessors.hpp"
#include "plan/axis_analysis.hpp"

using namespace lowering_test;
using tessel::lowering::AxisAnalysis;
using tessel::lowering::AxisInfo;
using tessel::lowering::kMaxDivisibility;
using tessel::lowering::pow2_divisor;

TEST_CASE("pow2_divisor") {
  CHECK(pow2_divisor(0) == kMaxDivisibility);
  CHECK(pow2_divisor(1) == 1);
  CHECK(pow2_divisor(48) == 16);
  CHECK(pow2_divisor(-64) == 64);
  CHECK(pow2_divisor(int64_t{1} << 40) == kMaxDivisibility);
}

TEST_CASE("vector add: offsets, pointers and the mask") {
  auto f = vector_add(1024, true);
  AxisAnalysis a(*f);
  const AxisInfo& offs = a.at(find_op(*f, OpKind::Add)->result());
  CHECK(offs.contiguity == std::vector<int64_t>{1024});
  CHECK(offs.divisibility == std::vector<int64_t>{1024});
  CHECK(offs.constancy == std::vector<int64_t>{1});
  const AxisInfo& start = a.at(find_op(*f, OpKind::Mul)->result());
  CHECK(start.divisibility == std::vector<int64_t>{1024});
  const AxisInfo& ptr = a.at(find_op(*f, OpKind::AddPtr)->result());
  CHECK(ptr.contiguity == std::vector<int64_t>{1024});
  CHECK(ptr.divisibility == std::vector<int64_t>{16});
  const AxisInfo& mask = a.at(find_op(*f, OpKind::CmpLt)->result());
  CHECK(mask.constancy == std::vector<int64_t>{16});

  auto g = vector_add(1024, false);
  AxisAnalysis b(*g);
  CHECK(b.at(find_op(*g, OpKind::CmpLt)->result()).constancy == std::vector<int64_t>{1});
  CHECK(b.at(find_op(*g, OpKind::AddPtr)->result()).divisibility == std::vector<int64_t>{16});
}

TEST_CASE("odd block starts and unaligned pointers limit divisibility") {
  Function f("k");
  Builder b(f);
  Value* x = f.add_param("x", ptr_t(Scalar::f16));  // no div16
  Value* offs = b.value(OpKind::Add, {b.arange(3, 131), b.splat(b.const_int(8, scalar_t(Scalar::i32)), {128})});
  Value* p = at(b, x, offs);
  AxisAnalysis a(f);
  CHECK(a.at(offs).contiguity == std::vector<int64_t>{128});
  CHECK(a.at(offs).divisibility == std::vector<int64_t>{1});  // 3 + 8 = 11
  CHECK(a.at(p).contiguity == std::vector<int64_t>{128});
  CHECK(a.at(p).divisibility == std::vector<int64_t>{1});

  Value* even = b.value(OpKind::Mul, {b.arange(0, 64), b.splat(b.const_int(6, scalar_t(Scalar::i32)), {64})});
  AxisAnalysis a2(f);
  CHECK(a2.at(even).contiguity == std::vector<int64_t>{1});
  CHECK(a2.at(even).divisibility == std::vector<int64_t>{2});
}

TEST_CASE("constants, equal1 parameters, rem and shl") {
  Function f("k");
  Builder b(f);
  Value* one = f.add_param("one", scalar_t(Scalar::i32), ParamSpec{false, true});
  Value* n = f.add_param("n", scalar_t(Scalar::i64), ParamSpec{true, false});
  Value* r = b.arange(0, 256);
  Value* m = b.value(OpKind::Rem, {r, b.splat(b.const_int(32, scalar_t(Scalar::i32)), {256})});
  Value* s = b.value(OpKind::Shl, {r, b.splat(b.const_int(3, scalar_t(Scalar::i32)), {256})});
  Value* k = b.value(OpKind::Mul, {b.splat(one, {256}), r});
  AxisAnalysis a(f);
  CHECK(a.at(one).constant == 1);
  CHECK(a.at(n).divisibility == std::vector<int64_t>{16});
  CHECK(a.at(m).contiguity == std::vector<int64_t>{32});
  CHECK(a.at(m).divisibility == std::vector<int64_t>{32});
  CHECK(a.at(s).divisibility == std::vector<int64_t>{8});
  CHECK(a.at(s).contiguity == std::vector<int64_t>{1});
  CHECK(a.at(k).contiguity == std::vector<int64_t>{256});  // x * 1 keeps x
}

TEST_CASE("2-D: row * stride + col is contiguous along the last dim") {
  auto f = outer_sum(64, 32, false);
  AxisAnalysis a(*f);
  const Op* store = find_op(*f, OpKind::Store);
  const AxisInfo& p = a.at(store->operand(0));
  CHECK(p.contiguity == std::vector<int64_t>{1, 32});
  CHECK(p.divisibility[1] == 16);  // rows start 16-byte aligned
  CHECK(p.divisibility[0] == 4);   // down a column, only the f32 alignment is known
  // the column index broadcast down the rows is constant along dim 0
  const Op* bc = find_op(*f, OpKind::Broadcast, 3);
  CHECK(a.at(bc->result()).constancy == std::vector<int64_t>{64, 1});
  CHECK(a.at(bc->result()).contiguity == std::vector<int64_t>{1, 32});
  // expand_dims(offs_m, 1): a new dim of size 1
  const Op* ed = find_op(*f, OpKind::ExpandDims, 2);
  CHECK(a.at(ed->result()).contiguity == std::vector<int64_t>{64, 1});
}

TEST_CASE("loop induction variables take the divisibility of lo and step") {
  Function f("k");
  Builder b(f);
  Value* hi = f.add_param("hi", scalar_t(Scalar::i32));
  Op& loop = b.for_loop(b.const_int(32, scalar_t(Scalar::i32)), hi, b.const_int(64, scalar_t(Scalar::i32)), {});
  b.set_block(&loop.body());
  b.create(OpKind::Yield, {});
  AxisAnalysis a(f);
  CHECK(a.at(ForOp{loop}.induction_var()).divisibility == std::vector<int64_t>{32});
}
