// Axis analysis of loop-carried values: init joined with every trip's yield, to a fixed point.
#include <doctest/doctest.h>

#include "dot_kernels.hpp"
#include "tessel/ir/verify.hpp"
#include "plan/axis_analysis.hpp"

using namespace lowering_test;
using tessel::lowering::AxisAnalysis;

TEST_CASE("pointer tiles advanced by a uniform step keep their contiguity and alignment in the K loop") {
  MatmulSpec s;
  s.m = 64;
  s.n = 32;
  s.bk = 16;
  auto f = matmul_kernel(s);
  tessel::ir::verify(*f);
  AxisAnalysis ax(*f);
  ForOp loop{*find_op(*f, OpKind::For)};
  // a: [64, 16] f16 pointers, rows lda apart (divisible by 16 elements), 16 contiguous along k.
  const auto& a = ax.at(loop.carried(1));
  CHECK(a.contiguity == std::vector<int64_t>{1, 16});
  CHECK(a.divisibility[1] >= 16);
  const auto& b = ax.at(loop.carried(2));
  CHECK(b.contiguity == std::vector<int64_t>{1, 32});
  CHECK(b.divisibility[1] >= 16);
  // The loads inside the loop see the same facts.
  CHECK(ax.at(find_op(*f, OpKind::Load, 0)->operand(0)).contiguity[1] == 16);
}

TEST_CASE("a carried tile that changes its pattern each trip is joined down") {
  Function f("k");
  Builder b(f);
  const Type i32 = scalar_t(Scalar::i32);
  Value* p = f.add_param("p", ptr_t(Scalar::f32), div16());
  Value* n = f.add_param("n", i32);
  Value* offs = b.arange(0, 64);
  Value* ptrs = at(b, p, offs);
  Op& loop = b.for_loop(b.const_int(0, i32), n, b.const_int(1, i32), {ptrs, b.const_int(0, i32)});
  ForOp lp{loop};
  b.set_block(&loop.body());
  // ptrs += offs each trip: consecutive on entry, stride 2 after one trip, ... not contiguous.
  Value* next = b.value(OpKind::AddPtr, {lp.carried(0), offs});
  Value* count = b.value(OpKind::Add, {lp.carried(1), b.const_int(3, i32)});
  b.create(OpKind::Yield, {next, count});
  b.set_block(&f.body);
  b.create(OpKind::Store, {loop.results[0], b.const_float(1.0, Type{DType{Scalar::f32}, {64}})});
  tessel::ir::verify(f);
  AxisAnalysis ax(f);
  CHECK(ax.at(lp.carried(0)).contiguity[0] == 1);
  CHECK(ax.at(loop.results[0]).contiguity[0] == 1);
  CHECK(!ax.at(lp.carried(1)).constant.has_value());  // 0, 3, 6, ...: no single value
  CHECK(ax.at(lp.carried(1)).divisibility[0] == 1);
  CHECK(ax.at(offs).contiguity[0] == 64);  // values outside the loop are untouched
}
