// dce: unused pure ops, side-effect-free loops and self-feeding carried values disappear.
#include "pass_test_util.hpp"
#include "tessel/ir/verify.hpp"

using namespace passtest;

namespace {

int count_ops(const Function& f, OpKind k) {
  int n = 0;
  walk(f.body, [&](const Op& op) { n += op.kind == k; });
  return n;
}

struct Bounds {
  Value *lo, *hi, *step;
};

Bounds bounds(Kernel& k, int64_t trip) {
  return {k.c_int(0, Scalar::i32), k.c_int(trip, Scalar::i32), k.c_int(1, Scalar::i32)};
}

Value* f32_ptr_tile(Kernel& k, const char* name, Shape s) {
  return k.param(name, Type{dt(Scalar::f32).pointer_to(), std::move(s)});
}

}  // namespace

TEST_CASE("unused pure ops are removed transitively; stores and their inputs stay") {
  Kernel k;
  Value* x = k.param("x", tile_t(Scalar::f32, {2, 16}));
  Value* dead1 = k.op(OpKind::Exp, {x});
  Value* dead2 = k.op(OpKind::Mul, {dead1, dead1});
  k.op(OpKind::Add, {dead2, x});
  Value* live = k.op(OpKind::Sqrt, {x});
  k.sink(live);
  CHECK(dce(k.f));
  CHECK_NOTHROW(verify(k.f));
  CHECK(k.text() ==
        "kernel @k(%x: f32[2,16], %out0: ptr<f32>) {\n"
        "  %0 = sqrt %x : f32[2,16]\n"
        "  %1 = splat %out0 : ptr<f32>[2,16]\n"
        "  store %1, %0\n"
        "}\n");
  CHECK_FALSE(dce(k.f));
}

TEST_CASE("an unused load is removed; a store of nothing-else-used values stays") {
  Kernel k;
  Value* p = f32_ptr_tile(k, "p", {64});
  Value* q = f32_ptr_tile(k, "q", {64});
  k.b.value(OpKind::Load, {p});
  Value* v = k.b.value(OpKind::Load, {q});
  k.b.create(OpKind::Store, {p, v});
  CHECK(dce(k.f));
  CHECK_NOTHROW(verify(k.f));
  CHECK(count_ops(k.f, OpKind::Load) == 1);
  CHECK(count_ops(k.f, OpKind::Store) == 1);
}

TEST_CASE("loops: unused pure loops go, loops that store or feed a store stay") {
  Kernel k;
  Value* x = k.param("x", tile_t(Scalar::f32, {16}));
  Value* p = f32_ptr_tile(k, "p", {16});
  Bounds bd = bounds(k, 10);
  // 1: pure, result unused -> removed (with a load inside: reading changes nothing).
  Op& pure = k.b.for_loop(bd.lo, bd.hi, bd.step, {x});
  k.b.set_block(&pure.body());
  Value* l = k.b.value(OpKind::Load, {p});
  k.b.create(OpKind::Yield, {k.op(OpKind::Add, {pure.body().args[1], l})});
  k.b.set_block(&k.f.body);
  // 2: stores inside, no results -> kept.
  Op& storing = k.b.for_loop(bd.lo, bd.hi, bd.step, {});
  k.b.set_block(&storing.body());
  k.b.create(OpKind::Store, {p, k.op(OpKind::Neg, {x})});
  k.b.create(OpKind::Yield, {});
  k.b.set_block(&k.f.body);
  // 3: pure, result stored -> kept.
  Op& used = k.b.for_loop(bd.lo, bd.hi, bd.step, {x});
  k.b.set_block(&used.body());
  k.b.create(OpKind::Yield, {k.op(OpKind::Mul, {used.body().args[1], x})});
  k.b.set_block(&k.f.body);
  k.b.create(OpKind::Store, {p, used.results[0]});
  CHECK(dce(k.f));
  CHECK_NOTHROW(verify(k.f));
  CHECK(count_ops(k.f, OpKind::For) == 2);
  CHECK(count_ops(k.f, OpKind::Load) == 0);
  CHECK(k.f.body.ops.size() == 6);  // 3 constants, 2 loops, 1 store
  CHECK(k.f.body.ops[3].get() == &storing);
  CHECK(k.f.body.ops[4].get() == &used);
}

TEST_CASE("a store in an inner loop keeps the outer loop alive") {
  Kernel k;
  Value* p = f32_ptr_tile(k, "p", {32});
  Value* x = k.param("x", tile_t(Scalar::f32, {32}));
  Bounds bd = bounds(k, 3);
  Op& outer = k.b.for_loop(bd.lo, bd.hi, bd.step, {});
  k.b.set_block(&outer.body());
  k.op(OpKind::Exp, {x});  // dead inside a live loop
  Op& inner = k.b.for_loop(bd.lo, bd.hi, bd.step, {});
  k.b.set_block(&inner.body());
  k.b.create(OpKind::Store, {p, x});
  k.b.create(OpKind::Yield, {});
  k.b.set_block(&outer.body());
  k.b.create(OpKind::Yield, {});
  k.b.set_block(&k.f.body);
  CHECK(dce(k.f));  // only the exp goes
  CHECK_NOTHROW(verify(k.f));
  CHECK(count_ops(k.f, OpKind::For) == 2);
  CHECK(count_ops(k.f, OpKind::Exp) == 0);
  CHECK(count_ops(k.f, OpKind::Store) == 1);
}

TEST_CASE("a carried value that only feeds itself is dropped from a live loop") {
  Kernel k;
  Value* p = f32_ptr_tile(k, "p", {8, 8});
  Value* x = k.param("x", tile_t(Scalar::f32, {8, 8}));
  Value* n = k.param("n", scalar_t(Scalar::i32));
  Bounds bd = bounds(k, 5);
  Value* acc0 = k.c_float(1.5, Scalar::f32, {8, 8});
  Op& loop = k.b.for_loop(bd.lo, bd.hi, bd.step, {acc0, n, x});
  k.b.set_block(&loop.body());
  Value* iv = loop.body().args[0];
  Value* acc = loop.body().args[1];
  Value* junk = loop.body().args[2];
  Value* last = loop.body().args[3];
  Value* acc2 = k.op(OpKind::Add, {acc, x});
  Value* junk2 = k.op(OpKind::Add, {junk, iv});  // feeds only its own next iteration
  Value* last2 = k.op(OpKind::Mul, {x, x});      // result used after the loop, arg unused
  (void)last;
  k.b.create(OpKind::Yield, {acc2, junk2, last2});
  k.b.set_block(&k.f.body);
  k.b.create(OpKind::Store, {p, loop.results[0]});
  k.b.create(OpKind::Store, {p, loop.results[2]});
  CHECK(dce(k.f));
  CHECK_NOTHROW(verify(k.f));
  CHECK(k.text() ==
        "kernel @k(%p: ptr<f32>[8,8], %x: f32[8,8], %n: i32) {\n"
        "  %0 = constant {value = 0} : i32\n"
        "  %1 = constant {value = 5} : i32\n"
        "  %2 = constant {value = 1} : i32\n"
        "  %3 = constant {value = 1.5} : f32[8,8]\n"
        "  %4, %5 = for %0, %1, %2, %3, %x : f32[8,8], f32[8,8] {\n"
        "  ^(%6: i32, %7: f32[8,8], %8: f32[8,8]):\n"
        "    %9 = add %7, %x : f32[8,8]\n"
        "    %10 = mul %x, %x : f32[8,8]\n"
        "    yield %9, %10\n"
        "  }\n"
        "  store %p, %4\n"
        "  store %p, %5\n"
        "}\n");
  CHECK(loop.results[1]->index == 1);
  CHECK(loop.body().args[2]->index == 2);
  CHECK_FALSE(dce(k.f));
}

TEST_CASE("a loop whose only live slot depends on another slot keeps both") {
  Kernel k;
  Value* p = k.param("p", Type{dt(Scalar::i32).pointer_to(), {}});
  Bounds bd = bounds(k, 7);
  Op& loop = k.b.for_loop(bd.lo, bd.hi, bd.step, {k.c_int(3, Scalar::i32), k.c_int(11, Scalar::i32)});
  k.b.set_block(&loop.body());
  Value* a = loop.body().args[1];
  Value* b = loop.body().args[2];
  // a' = a + b ; b' = b * 3: only a is stored, but a needs b.
  k.b.create(OpKind::Yield, {k.op(OpKind::Add, {a, b}), k.op(OpKind::Mul, {b, k.c_int(3, Scalar::i32)})});
  k.b.set_block(&k.f.body);
  k.b.create(OpKind::Store, {p, loop.results[0]});
  std::string before = k.text();
  CHECK_FALSE(dce(k.f));
  CHECK(k.text() == before);
  CHECK(loop.results.size() == 2);
}
