// Interpreter: for loops with scalar and tile carried values, swaps, nesting and loads in the body.
#include "interp_test_util.hpp"

using namespace interp_test;

TEST_CASE("a loop carrying sum(i) and sum(i*i)") {
  Function f("sums");
  Value* out = f.add_param("out", ptr_t(Scalar::i64));
  Value* lo = f.add_param("lo", scalar_t(Scalar::i32));
  Value* hi = f.add_param("hi", scalar_t(Scalar::i32));
  Value* step = f.add_param("step", scalar_t(Scalar::i32));
  Builder b(f);
  Value* zero = b.const_int(0, scalar_t(Scalar::i64));
  Value* count0 = b.const_int(0, scalar_t(Scalar::i32));
  Op& loop = b.for_loop(lo, hi, step, {zero, zero, count0});
  {
    ir::Block* outer = b.block();
    b.set_block(&loop.body());
    Value* iv = b.cast(loop.body().args[0], i64());
    Value* s = bin(b, OpKind::Add, loop.body().args[1], iv);
    Value* q = bin(b, OpKind::Add, loop.body().args[2], bin(b, OpKind::Mul, iv, iv));
    Value* c = bin(b, OpKind::Add, loop.body().args[3], b.const_int(1, scalar_t(Scalar::i32)));
    b.create(OpKind::Yield, {s, q, c});
    b.set_block(outer);
  }
  b.create(OpKind::Store, {out, loop.result(0)});
  b.create(OpKind::Store, {bin(b, OpKind::AddPtr, out, b.const_int(1, scalar_t(Scalar::i32))), loop.result(1)});
  b.create(OpKind::Store, {bin(b, OpKind::AddPtr, out, b.const_int(2, scalar_t(Scalar::i32))),
                           b.cast(loop.result(2), i64())});

  struct Case { int64_t lo, hi, step; };
  const Case cases[] = {{0, 10, 1}, {-7, 23, 3}, {5, 5, 1}, {10, 0, 1}, {0, 100000, 7},
                        {INT32_MAX - 10, INT32_MAX, 4}, {-3, -2, 100}};
  for (const Case& c : cases) {
    CAPTURE(c.lo);
    CAPTURE(c.hi);
    CAPTURE(c.step);
    uint64_t s = 0, q = 0;  // i64 arithmetic wraps; so does this (near INT32_MAX, q does)
    int64_t n = 0;
    for (int64_t i = c.lo; i < c.hi; i += c.step) {
      s += static_cast<uint64_t>(i);
      q += static_cast<uint64_t>(i * i);
      ++n;
    }
    std::vector<int64_t> os(3, -1);
    ArgValue args[] = {ArgValue::pointer(os.data()), ArgValue::integer(c.lo), ArgValue::integer(c.hi),
                       ArgValue::integer(c.step)};
    MemRegion mem[] = {region(os)};
    run_kernel(f, Grid{}, args, mem);
    CHECK(static_cast<uint64_t>(os[0]) == s);
    CHECK(static_cast<uint64_t>(os[1]) == q);
    CHECK(os[2] == n);
  }
}

TEST_CASE("yield may swap carried values and pass through a value from outside the loop") {
  // (a, b, k) -> (b, a + b, k0): Fibonacci; k0 is defined before the loop
  Function f("fib");
  Value* out = f.add_param("out", ptr_t(Scalar::i64));
  Value* n = f.add_param("n", scalar_t(Scalar::i32));
  Builder b(f);
  Value* k0 = b.const_int(-42, scalar_t(Scalar::i64));
  Op& loop = b.for_loop(b.const_int(0, scalar_t(Scalar::i32)), n, b.const_int(1, scalar_t(Scalar::i32)),
                        {b.const_int(0, scalar_t(Scalar::i64)), b.const_int(1, scalar_t(Scalar::i64)),
                         b.const_int(7, scalar_t(Scalar::i64))});
  ir::Block* outer = b.block();
  b.set_block(&loop.body());
  Value* a = loop.body().args[1];
  Value* c = loop.body().args[2];
  b.create(OpKind::Yield, {c, bin(b, OpKind::Add, a, c), k0});
  b.set_block(outer);
  for (int r = 0; r < 3; ++r)
    b.create(OpKind::Store, {bin(b, OpKind::AddPtr, out, b.const_int(r, scalar_t(Scalar::i32))), loop.result(r)});

  for (int64_t count : {0, 1, 2, 10, 90}) {
    CAPTURE(count);
    int64_t x = 0, y = 1;
    for (int64_t i = 0; i < count; ++i) {
      int64_t t = x + y;
      x = y;
      y = t;
    }
    std::vector<int64_t> os(3, 0);
    ArgValue args[] = {ArgValue::pointer(os.data()), ArgValue::integer(count)};
    MemRegion mem[] = {region(os)};
    run_kernel(f, Grid{}, args, mem);
    CHECK(os[0] == x);
    CHECK(os[1] == y);
    CHECK(os[2] == (count == 0 ? 7 : -42));
  }
}

TEST_CASE("a tile accumulator loads a row per iteration (column sums of a K x 64 matrix)") {
  const int64_t B = 64;
  Function f("colsum");
  Value* x = f.add_param("x", ptr_t(Scalar::f32));
  Value* out = f.add_param("out", ptr_t(Scalar::f32));
  Value* k = f.add_param("k", scalar_t(Scalar::i32));
  Builder b(f);
  Value* cols = b.arange(0, B);
  Type i32s = scalar_t(Scalar::i32);
  Op& loop = b.for_loop(b.const_int(0, i32s), k, b.const_int(1, i32s), {b.const_float(0.0, Type{f32(), {B}})});
  ir::Block* outer = b.block();
  b.set_block(&loop.body());
  Value* row = loop.body().args[0];
  Value* offs = bin(b, OpKind::Add, b.splat(bin(b, OpKind::Mul, row, b.const_int(B, i32s)), {B}), cols);
  Value* v = b.value(OpKind::Load, {bin(b, OpKind::AddPtr, b.splat(x, {B}), offs)});
  b.create(OpKind::Yield, {bin(b, OpKind::Add, loop.body().args[1], v)});
  b.set_block(outer);
  b.create(OpKind::Store, {bin(b, OpKind::AddPtr, b.splat(out, {B}), cols), loop.result(0)});

  const int64_t K = 37;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> xs(K * B), os(B, std::nanf(""));
  for (auto& e : xs) e = dist(rng);
  ArgValue args[] = {ArgValue::pointer(xs.data()), ArgValue::pointer(os.data()), ArgValue::integer(K)};
  MemRegion mem[] = {read_only(xs), region(os)};
  run_kernel(f, Grid{}, args, mem);
  for (int64_t j = 0; j < B; ++j) {
    float acc = 0.0f;  // the same f32 additions in the same order
    for (int64_t r = 0; r < K; ++r) acc += xs[r * B + j];
    CHECK(os[j] == acc);
  }
}

TEST_CASE("nested loops") {
  // acc = sum over i < 3, j < i + 2 of (10 i + j), computed per program with a base of pid
  Function f("nested");
  Value* out = f.add_param("out", ptr_t(Scalar::i32));
  Builder b(f);
  Type i32s = scalar_t(Scalar::i32);
  Value* one = b.const_int(1, i32s);
  Op& outer_loop = b.for_loop(b.const_int(0, i32s), b.const_int(3, i32s), one, {b.program_id(0)});
  ir::Block* top = b.block();
  b.set_block(&outer_loop.body());
  Value* i = outer_loop.body().args[0];
  Op& inner = b.for_loop(b.const_int(0, i32s), bin(b, OpKind::Add, i, b.const_int(2, i32s)), one,
                         {outer_loop.body().args[1]});
  b.set_block(&inner.body());
  Value* j = inner.body().args[0];
  Value* term = bin(b, OpKind::Add, bin(b, OpKind::Mul, i, b.const_int(10, i32s)), j);
  b.create(OpKind::Yield, {bin(b, OpKind::Add, inner.body().args[1], term)});
  b.set_block(&outer_loop.body());
  b.create(OpKind::Yield, {inner.result(0)});
  b.set_block(top);
  b.create(OpKind::Store, {bin(b, OpKind::AddPtr, out, b.program_id(0)), outer_loop.result(0)});

  int want = 0;
  for (int a = 0; a < 3; ++a)
    for (int c = 0; c < a + 2; ++c) want += 10 * a + c;
  std::vector<int32_t> os(4, -1);
  ArgValue args[] = {ArgValue::pointer(os.data())};
  MemRegion mem[] = {region(os)};
  run_kernel(f, Grid{4}, args, mem);
  for (int p = 0; p < 4; ++p) CHECK(os[p] == want + p);
}
