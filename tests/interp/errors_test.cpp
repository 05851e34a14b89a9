// Interpreter: errors name the op, the source line and the program; argument and grid checks.
#include "interp_test_util.hpp"

using namespace interp_test;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// y[i] = x[i] for i < limit (limit = n + slack), loads at kernel.cpp:42, stores at :43.
void build_copy(Function& f, int64_t block, bool mask_loads) {
  Value* x = f.add_param("x", ptr_t(Scalar::f32));
  Value* y = f.add_param("y", ptr_t(Scalar::f32));
  Value* n = f.add_param("n", scalar_t(Scalar::i32));
  Builder b(f);
  Value* offs = block_offsets(b, block);
  Value* mask = bin(b, OpKind::CmpLt, offs, b.splat(n, {block}));
  b.loc = SrcLoc{f.intern("kernel.cpp"), 42};
  std::vector<Value*> load_ops{bin(b, OpKind::AddPtr, b.splat(x, {block}), offs)};
  if (mask_loads) load_ops.push_back(mask);
  Value* v = b.value(OpKind::Load, load_ops);
  b.loc = SrcLoc{f.intern("kernel.cpp"), 43};
  b.create(OpKind::Store, {bin(b, OpKind::AddPtr, b.splat(y, {block}), offs), v, mask});
}

}  // namespace

TEST_CASE("an unmasked out-of-bounds load names the op, its line, the program and the element") {
  Function f("copy");
  build_copy(f, 64, /*mask_loads=*/false);
  std::vector<float> x(100, 1.0f), y(100, 0.0f);  // program 1 reads x[64..127]: element 36 is x[100]
  ArgValue args[] = {ArgValue::pointer(x.data()), ArgValue::pointer(y.data()), ArgValue::integer(100)};
  MemRegion mem[] = {read_only(x), region(y)};
  std::string msg = error_of([&] { run_kernel(f, Grid{2}, args, mem); });
  INFO(msg);
  CHECK(contains(msg, "interpreter: op 'load' at kernel.cpp:42 in program (1,0,0): element 36 reads 4 bytes at 0x"));
  CHECK(contains(msg, "outside every buffer (no mask)"));
  CHECK(contains(msg, "past the end of buffer #0 (400 bytes"));
  // program 0 ran and stored before program 1 failed
  CHECK(y[63] == 1.0f);
}

TEST_CASE("a mask that does not cover an out-of-bounds element is reported as such") {
  Function f("copy");
  build_copy(f, 64, /*mask_loads=*/true);
  std::vector<float> x(100, 2.0f), y(128, 0.0f);
  ArgValue args[] = {ArgValue::pointer(x.data()), ArgValue::pointer(y.data()), ArgValue::integer(101)};
  MemRegion mem[] = {read_only(x), region(y)};
  std::string msg = error_of([&] { run_kernel(f, Grid{2}, args, mem); });
  INFO(msg);
  CHECK(contains(msg, "op 'load' at kernel.cpp:42 in program (1,0,0): element 36"));
  CHECK(contains(msg, "mask did not cover it"));
  // with the right n the same kernel runs
  ArgValue ok[] = {ArgValue::pointer(x.data()), ArgValue::pointer(y.data()), ArgValue::integer(100)};
  run_kernel(f, Grid{2}, ok, mem);
  CHECK(y[99] == 2.0f);
  CHECK(y[100] == 0.0f);
}

TEST_CASE("storing into a read-only region fails; so does a misaligned access") {
  Function f("copy");
  build_copy(f, 32, true);
  std::vector<float> x(32, 1.5f), y(32, 0.0f);
  ArgValue args[] = {ArgValue::pointer(x.data()), ArgValue::pointer(y.data()), ArgValue::integer(32)};
  MemRegion mem[] = {read_only(x), read_only(y)};
  std::string msg = error_of([&] { run_kernel(f, Grid{1}, args, mem); });
  INFO(msg);
  CHECK(contains(msg, "op 'store' at kernel.cpp:43 in program (0,0,0): element 0 writes 4 bytes"));
  CHECK(contains(msg, "read-only"));
  CHECK(y[0] == 0.0f);

  // y + 1 byte, through a byte-sized pointer: every f32 access is misaligned
  std::vector<float> big(40, 0.0f);
  ArgValue shifted[] = {ArgValue::pointer(x.data()),
                        ArgValue::pointer(reinterpret_cast<const char*>(big.data()) + 1), ArgValue::integer(32)};
  MemRegion mem2[] = {read_only(x), region(big)};
  std::string mis = error_of([&] { run_kernel(f, Grid{1}, shifted, mem2); });
  INFO(mis);
  CHECK(contains(mis, "op 'store'"));
  CHECK(contains(mis, "not aligned to 4 bytes"));
}

TEST_CASE("errors in 2-D tiles give the element's index") {
  Function f("t2");
  Value* x = f.add_param("x", ptr_t(Scalar::i32));
  Builder b(f);
  Value* offs = b.broadcast(b.expand_dims(b.arange(0, 4), 0), {3, 4});
  Value* rows = b.broadcast(b.expand_dims(b.arange(0, 3), 1), {3, 4});
  Value* lin = bin(b, OpKind::Add, bin(b, OpKind::Mul, rows, b.const_int(4, Type{i32(), {3, 4}})), offs);
  b.loc = SrcLoc{f.intern("k2.cpp"), 7};
  b.value(OpKind::Load, {bin(b, OpKind::AddPtr, b.splat(x, {3, 4}), lin)});
  std::vector<int32_t> xs(10, 0);  // 12 elements are read
  ArgValue args[] = {ArgValue::pointer(xs.data())};
  MemRegion mem[] = {read_only(xs)};
  std::string msg = error_of([&] { run_kernel(f, Grid{}, args, mem); });
  INFO(msg);
  CHECK(contains(msg, "at k2.cpp:7 in program (0,0,0): element 10 (index [2,2]) reads 4 bytes"));
}

TEST_CASE("wrong argument count, kind or range is an InterpError naming the parameter") {
  Function f("copy");
  build_copy(f, 16, true);
  std::vector<float> x(16), y(16);
  MemRegion mem[] = {region(x), region(y)};
  ArgValue two[] = {ArgValue::pointer(x.data()), ArgValue::pointer(y.data())};
  std::string msg = error_of([&] { run_kernel(f, Grid{}, two, mem); });
  CHECK(contains(msg, "kernel 'copy' takes 3 arguments (x, y, n) but was given 2"));

  ArgValue wrong_kind[] = {ArgValue::pointer(x.data()), ArgValue::floating(1.0), ArgValue::integer(16)};
  msg = error_of([&] { run_kernel(f, Grid{}, wrong_kind, mem); });
  CHECK(contains(msg, "argument 1 ('y', ptr<f32>) needs a pointer, but was given a float"));

  ArgValue int_for_ptr[] = {ArgValue::integer(5), ArgValue::pointer(y.data()), ArgValue::integer(16)};
  msg = error_of([&] { run_kernel(f, Grid{}, int_for_ptr, mem); });
  CHECK(contains(msg, "argument 0 ('x', ptr<f32>) needs a pointer, but was given an integer"));

  ArgValue ptr_for_int[] = {ArgValue::pointer(x.data()), ArgValue::pointer(y.data()), ArgValue::pointer(y.data())};
  msg = error_of([&] { run_kernel(f, Grid{}, ptr_for_int, mem); });
  CHECK(contains(msg, "argument 2 ('n', i32) needs an integer, but was given a pointer"));

  ArgValue too_big[] = {ArgValue::pointer(x.data()), ArgValue::pointer(y.data()), ArgValue::integer(int64_t{1} << 32)};
  msg = error_of([&] { run_kernel(f, Grid{}, too_big, mem); });
  CHECK(contains(msg, "argument 2 ('n', i32): the value 4294967296 does not fit i32"));

  ArgValue good[] = {ArgValue::pointer(x.data()), ArgValue::pointer(y.data()), ArgValue::integer(16)};
  msg = error_of([&] { run_kernel(f, Grid{-1}, good, mem); });
  CHECK(contains(msg, "grid (-1,1,1) is invalid"));
  msg = error_of([&] { run_kernel(f, Grid{1, 70000}, good, mem); });
  CHECK(contains(msg, "axis 1 must be between 0 and 65535"));
}

TEST_CASE("a non-positive loop step is an InterpError; integer division by zero is not") {
  Function f("loop");
  Value* out = f.add_param("out", ptr_t(Scalar::i32));
  Value* step = f.add_param("step", scalar_t(Scalar::i32));
  Value* d = f.add_param("d", scalar_t(Scalar::i32));
  Builder b(f);
  Type i32s = scalar_t(Scalar::i32);
  b.loc = SrcLoc{f.intern("loop.cpp"), 9};
  Op& loop = b.for_loop(b.const_int(0, i32s), b.const_int(10, i32s), step, {b.const_int(100, i32s)});
  ir::Block* top = b.block();
  b.set_block(&loop.body());
  b.create(OpKind::Yield, {bin(b, OpKind::Div, loop.body().args[1], d)});
  b.set_block(top);
  b.create(OpKind::Store, {out, loop.result(0)});
  std::vector<int32_t> os(1, -1);
  MemRegion mem[] = {region(os)};
  for (int64_t s : {0, -2}) {
    ArgValue args[] = {ArgValue::pointer(os.data()), ArgValue::integer(s), ArgValue::integer(2)};
    std::string msg = error_of([&] { run_kernel(f, Grid{}, args, mem); });
    CAPTURE(s);
    CHECK(contains(msg, "op 'for' at loop.cpp:9 in program (0,0,0): loop step is " + std::to_string(s)));
  }
  ArgValue halve[] = {ArgValue::pointer(os.data()), ArgValue::integer(4), ArgValue::integer(2)};
  run_kernel(f, Grid{}, halve, mem);
  CHECK(os[0] == 12);  // 100 / 2 / 2 / 2 over iv = 0, 4, 8
  ArgValue by_zero[] = {ArgValue::pointer(os.data()), ArgValue::integer(4), ArgValue::integer(0)};
  run_kernel(f, Grid{}, by_zero, mem);
  CHECK(os[0] == 0);  // x / 0 is 0 on every device
}

TEST_CASE("operands of mismatched shapes are reported as malformed IR") {
  Function f("bad");
  Value* out = f.add_param("out", ptr_t(Scalar::i32));
  Builder b(f);
  b.loc = SrcLoc{f.intern("bad.cpp"), 3};
  Value* a = b.arange(0, 8);
  Value* c = b.arange(0, 4);
  Value* s = b.value(OpKind::Add, {a, c});  // no implicit broadcasting in the IR
  b.create(OpKind::Store, {bin(b, OpKind::AddPtr, b.splat(out, {8}), a), s});
  std::vector<int32_t> os(8);
  ArgValue args[] = {ArgValue::pointer(os.data())};
  MemRegion mem[] = {region(os)};
  CHECK_THROWS_WITH_AS(run_kernel(f, Grid{}, args, mem), doctest::Contains("op 'add' at bad.cpp:3: malformed IR"),
                       VerifyError);
}
