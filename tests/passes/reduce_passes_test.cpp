// Passes around reductions and atomics: DCE keeps atomics and live reduce bodies, CSE never merges
// atomics, canonicalize folds reductions of constant tiles and shape ops of splats.
#include "pass_test_util.hpp"
#include "tessel/ir/verify.hpp"

using namespace passtest;

namespace {

int count_ops(const Function& f, OpKind k) {
  int n = 0;
  walk(f.body, [&](const Op& op) { n += op.kind == k; });
  return n;
}

// reduce(x, axis) with combine(a, b) = max(a, b) + (a - a): the body has three ops to keep.
Value* generic_reduce(Kernel& k, Value* x, int axis) {
  Op& red = k.b.reduce_region(x, axis);
  Block* outer = k.b.block();
  k.b.set_block(&red.body());
  Value* a = red.body().args[0];
  Value* m = k.op(OpKind::Max, {a, red.body().args[1]});
  Value* z = k.op(OpKind::Sub, {a, a});
  k.b.create(OpKind::Yield, {k.op(OpKind::Add, {m, z})});
  k.b.set_block(outer);
  return red.result(0);
}

}  // namespace

TEST_CASE("dce keeps atomics whose old values are unused, and drops unused reductions") {
  Kernel k;
  Value* p = k.param("p", Type{dt(Scalar::f32).pointer_to(), {16}});
  Value* x = k.param("x", tile_t(Scalar::f32, {4, 16}));
  k.b.reduce(OpKind::ReduceSum, x, 1);               // dead
  generic_reduce(k, x, 0);                           // dead, with its body
  Value* live = k.b.reduce(OpKind::ReduceMax, x, 0);  // feeds the atomic
  k.b.value(OpKind::AtomicAdd, {p, live});            // result unused, still kept
  CHECK(dce(k.f));
  CHECK_NOTHROW(verify(k.f));
  CHECK(count_ops(k.f, OpKind::AtomicAdd) == 1);
  CHECK(count_ops(k.f, OpKind::ReduceMax) == 1);
  CHECK(count_ops(k.f, OpKind::ReduceSum) == 0);
  CHECK(count_ops(k.f, OpKind::Reduce) == 0);
  CHECK(count_ops(k.f, OpKind::Max) == 0);
}

TEST_CASE("dce keeps every op of a live generic reduce's body") {
  Kernel k;
  Value* x = k.param("x", tile_t(Scalar::f32, {4, 16}));
  k.sink(generic_reduce(k, x, 1));
  const std::string before = k.text();
  CHECK_FALSE(dce(k.f));
  CHECK(k.text() == before);
  CHECK(count_ops(k.f, OpKind::Sub) == 1);
  CHECK_NOTHROW(verify(k.f));
}

TEST_CASE("cse merges equal reductions but never atomics or reduces with bodies") {
  Kernel k;
  Value* p = k.param("p", Type{dt(Scalar::i32).pointer_to(), {}});
  Value* x = k.param("x", tile_t(Scalar::i32, {4, 16}));
  Value* r1 = k.b.reduce(OpKind::ReduceSum, x, 1);
  Value* r2 = k.b.reduce(OpKind::ReduceSum, x, 1);
  Value* r3 = k.b.reduce(OpKind::ReduceSum, x, 0);  // another axis: different
  k.sink(r1);
  k.sink(r2);
  k.sink(r3);
  Value* one = k.c_int(1, Scalar::i32);
  Value* a1 = k.b.value(OpKind::AtomicAdd, {p, one});
  Value* a2 = k.b.value(OpKind::AtomicAdd, {p, one});
  k.sink(a1);
  k.sink(a2);
  k.sink(generic_reduce(k, x, 1));
  k.sink(generic_reduce(k, x, 1));
  CHECK(cse(k.f));
  CHECK_NOTHROW(verify(k.f));
  CHECK(count_ops(k.f, OpKind::ReduceSum) == 2);
  CHECK(count_ops(k.f, OpKind::AtomicAdd) == 2);
  CHECK(count_ops(k.f, OpKind::Reduce) == 2);
}

TEST_CASE("canonicalize folds reductions of constant tiles and shape ops of splats") {
  Kernel k;
  Value* s = k.param("s", scalar_t(Scalar::f32));
  Op& sum_i = k.sink(k.b.reduce(OpKind::ReduceSum, k.c_int(100, Scalar::i8, {4, 8}), 1));  // 800 wraps in i8
  Op& max_f = k.sink(k.b.reduce(OpKind::ReduceMax, k.c_float(2.5, Scalar::f32, {4, 8}), 0));
  Op& arg = k.sink(k.b.reduce(OpKind::ArgMin, k.c_float(-1.0, Scalar::f32, {16}), 0));
  Op& fsum = k.sink(k.b.reduce(OpKind::ReduceSum, k.c_float(0.1, Scalar::f32, {16}), 0));  // not folded
  Op& tr = k.sink(k.b.trans(k.b.splat(s, {4, 8})));
  Op& rs = k.sink(k.b.reshape(k.c_float(1.5, Scalar::f32, {4, 8}), {32}));
  CHECK(canonicalize(k.f));
  CHECK_NOTHROW(verify(k.f));
  CHECK(folded_int(stored(sum_i)) == static_cast<int8_t>(800));
  CHECK(folded_float(stored(max_f)) == 2.5);
  CHECK(folded_int(stored(arg)) == 0);
  CHECK(stored(fsum)->def->kind == OpKind::ReduceSum);
  CHECK(stored(tr)->def->kind == OpKind::Splat);
  CHECK(stored(tr)->type.str() == "f32[8,4]");
  CHECK(folded_float(stored(rs)) == 1.5);
}
