// cse: pure ops merge within a scope and into enclosing scopes, never out of loop bodies.
#include "pass_test_util.hpp"
#include "tessel/ir/verify.hpp"

using namespace passtest;

namespace {

int count_ops(const Function& f, OpKind k) {
  int n = 0;
  walk(f.body, [&](const Op& op) { n += op.kind == k; });
  return n;
}

}  // namespace

TEST_CASE("identical pure ops merge; different ones do not") {
  Kernel k;
  Value* x = k.param("x", tile_t(Scalar::f32, {4, 8}));
  Value* y = k.param("y", tile_t(Scalar::f32, {4, 8}));
  Value* a1 = k.op(OpKind::Mul, {x, y});
  Value* a2 = k.op(OpKind::Mul, {x, y});
  Value* swapped = k.op(OpKind::Mul, {y, x});  // no commutativity assumed
  Value* c1 = k.c_int(7, Scalar::i32);
  Value* c2 = k.c_int(7, Scalar::i32);
  Value* c3 = k.c_int(8, Scalar::i32);
  Value* c4 = k.c_int(7, Scalar::i64);          // same value, another type
  Value* z1 = k.c_float(0.0, Scalar::f32);
  Value* z2 = k.c_float(-0.0, Scalar::f32);     // equal as doubles, different constants
  Value* p1 = k.b.program_id(0);
  Value* p2 = k.b.program_id(0);
  Value* p3 = k.b.program_id(1);
  Op& s1 = k.sink(a1);
  Op& s2 = k.sink(a2);
  Op& s3 = k.sink(swapped);
  Op& t1 = k.sink(c1);
  Op& t2 = k.sink(c2);
  Op& t3 = k.sink(c3);
  Op& t4 = k.sink(c4);
  Op& u1 = k.sink(z1);
  Op& u2 = k.sink(z2);
  Op& q1 = k.sink(p1);
  Op& q2 = k.sink(p2);
  Op& q3 = k.sink(p3);
  CHECK(cse(k.f));
  CHECK(stored(s2) == a1);
  CHECK(stored(s1) == a1);
  CHECK(stored(s3) == swapped);
  CHECK(stored(t2) == c1);
  CHECK(stored(t3) == c3);
  CHECK(stored(t4) == c4);
  CHECK(stored(u1) == z1);
  CHECK(stored(u2) == z2);
  CHECK(stored(q2) == p1);
  CHECK(stored(q3) == p3);
  CHECK(stored(t1) == c1);
  CHECK(stored(q1) == p1);
  CHECK(count_ops(k.f, OpKind::Mul) == 2);
  CHECK(count_ops(k.f, OpKind::ProgramId) == 2);
  CHECK_FALSE(cse(k.f));  // nothing left to merge
}

TEST_CASE("merging cascades: users of merged values become equal too") {
  Kernel k;
  Value* x = k.param("x", tile_t(Scalar::i32, {128}));
  Value* a1 = k.op(OpKind::Add, {x, k.c_int(3, Scalar::i32, {128})});
  Value* a2 = k.op(OpKind::Add, {x, k.c_int(3, Scalar::i32, {128})});
  Value* m1 = k.op(OpKind::Mul, {a1, a1});
  Value* m2 = k.op(OpKind::Mul, {a2, a2});
  Op& st = k.sink(k.op(OpKind::Sub, {m1, m2}));
  CHECK(cse(k.f));
  const Op* sub = stored(st)->def;
  REQUIRE(sub);
  CHECK(sub->operands[0] == m1);
  CHECK(sub->operands[1] == m1);
  CHECK(count_ops(k.f, OpKind::Constant) == 1);
  CHECK(count_ops(k.f, OpKind::Add) == 1);
}

TEST_CASE("a loop body reuses an equivalent op from before the loop") {
  Kernel k;
  Value* x = k.param("x", scalar_t(Scalar::i32));
  Value* outer = k.op(OpKind::Mul, {x, x});
  Value* lo = k.c_int(0, Scalar::i32), *hi = k.c_int(16, Scalar::i32), *step = k.c_int(1, Scalar::i32);
  Op& loop = k.b.for_loop(lo, hi, step, {x});
  k.b.set_block(&loop.body());
  Value* inner = k.op(OpKind::Mul, {x, x});
  Value* acc = k.op(OpKind::Add, {loop.body().args[1], inner});
  k.b.create(OpKind::Yield, {acc});
  k.b.set_block(&k.f.body);
  k.sink(outer);
  k.sink(loop.results[0]);
  CHECK(cse(k.f));
  CHECK_NOTHROW(verify(k.f));
  CHECK(acc->def->operands[1] == outer);
  CHECK(count_ops(k.f, OpKind::Mul) == 1);
  CHECK(loop.body().ops.size() == 2);  // add, yield
}

TEST_CASE("an op after a loop does not reuse one from inside it; sibling loops do not share") {
  Kernel k;
  Value* x = k.param("x", scalar_t(Scalar::i32));
  Value* lo = k.c_int(0, Scalar::i32), *hi = k.c_int(16, Scalar::i32), *step = k.c_int(1, Scalar::i32);
  Value* inner[2];
  Op* loops[2];
  for (int i = 0; i < 2; ++i) {
    Op& loop = k.b.for_loop(lo, hi, step, {x});
    loops[i] = &loop;
    k.b.set_block(&loop.body());
    inner[i] = k.op(OpKind::Sub, {x, k.c_int(5, Scalar::i32)});
    k.b.create(OpKind::Yield, {k.op(OpKind::Add, {loop.body().args[1], inner[i]})});
    k.b.set_block(&k.f.body);
  }
  Value* after = k.op(OpKind::Sub, {x, k.c_int(5, Scalar::i32)});
  Op& st = k.sink(after);
  k.sink(loops[0]->results[0]);
  k.sink(loops[1]->results[0]);
  cse(k.f);
  CHECK_NOTHROW(verify(k.f));
  CHECK(stored(st) == after);
  CHECK(count_ops(k.f, OpKind::Sub) == 3);
  for (int i = 0; i < 2; ++i) CHECK(loops[i]->body().ops[1].get() == inner[i]->def);
  // The two constants 0 and 1 and 16 are outer; only the inner 5s stay per loop.
  CHECK(count_ops(k.f, OpKind::Constant) == 6);
}

TEST_CASE("loads, stores and loops are never merged") {
  Kernel k;
  Value* p = k.param("p", tile_t(Scalar::f32, {64}).with_dtype(dt(Scalar::f32).pointer_to()));
  Value* l1 = k.b.value(OpKind::Load, {p});
  k.b.create(OpKind::Store, {p, l1});
  Value* l2 = k.b.value(OpKind::Load, {p});  // reads what the store wrote
  k.b.create(OpKind::Store, {p, l2});
  k.b.create(OpKind::Store, {p, l2});
  Value* lo = k.c_int(0, Scalar::i32), *hi = k.c_int(4, Scalar::i32), *step = k.c_int(1, Scalar::i32);
  for (int i = 0; i < 2; ++i) {
    Op& loop = k.b.for_loop(lo, hi, step, {});
    k.b.set_block(&loop.body());
    k.b.create(OpKind::Yield, {});
    k.b.set_block(&k.f.body);
  }
  std::string before = k.text();
  CHECK_FALSE(cse(k.f));
  CHECK(k.text() == before);
  CHECK(count_ops(k.f, OpKind::Load) == 2);
  CHECK(count_ops(k.f, OpKind::Store) == 3);
  CHECK(count_ops(k.f, OpKind::For) == 2);
}

TEST_CASE("cse output is deterministic") {
  auto build = [](Kernel& k) {
    Value* x = k.param("x", tile_t(Scalar::i32, {32}));
    Value* prev = x;
    for (int i = 0; i < 40; ++i) {
      Value* c = k.c_int(i % 7 + 1, Scalar::i32, {32});
      Value* a = k.op(i % 2 ? OpKind::Add : OpKind::Mul, {x, c});
      prev = k.op(OpKind::Xor, {prev, a});
    }
    k.sink(prev);
  };
  Kernel k1, k2;
  build(k1);
  build(k2);
  cse(k1.f);
  cse(k2.f);
  CHECK(k1.text() == k2.text());
  CHECK(count_ops(k1.f, OpKind::Constant) == 7);
}
