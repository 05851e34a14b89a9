// Interpreter: atomic_add / atomic_max read-modify-write, return old values, honour masks and bounds.
#include <algorithm>

#include "interp_test_util.hpp"
#include "tessel/ir/verify.hpp"

using namespace interp_test;

namespace {

// Each program p of the grid: idx = arange(0, B); value = v[p * B + idx];
// old = atomic(acc + (idx % buckets), value, (p * B + idx) < n); olds[p * B + idx] = old.
std::unique_ptr<Function> build_bucket_kernel(OpKind k, Scalar s, int64_t B, int64_t buckets) {
  auto f = std::make_unique<Function>("buckets");
  Value* v = f->add_param("v", ptr_t(s));
  Value* acc = f->add_param("acc", ptr_t(s));
  Value* olds = f->add_param("olds", ptr_t(s));
  Value* n = f->add_param("n", scalar_t(Scalar::i32));
  Builder b(*f);
  b.loc = SrcLoc{f->intern("atomics.cpp"), 5};
  Value* offs = block_offsets(b, B);
  Value* mask = bin(b, OpKind::CmpLt, offs, b.splat(n, {B}));
  Value* x = b.value(OpKind::Load, {bin(b, OpKind::AddPtr, b.splat(v, {B}), offs), mask});
  Value* bucket = bin(b, OpKind::Rem, b.arange(0, B), b.const_int(buckets, Type{i32(), {B}}));
  b.loc = SrcLoc{f->intern("atomics.cpp"), 9};
  Value* old = b.value(k, {bin(b, OpKind::AddPtr, b.splat(acc, {B}), bucket), x, mask});
  b.loc = SrcLoc{};
  b.create(OpKind::Store, {bin(b, OpKind::AddPtr, b.splat(olds, {B}), offs), old, mask});
  verify(*f);
  return f;
}

}  // namespace

TEST_CASE("atomic_add: every element applies, across duplicates and programs, in element order") {
  const int64_t B = 16, buckets = 3, n = 45;  // 3 programs, the last one partly masked
  GpuUnspecified order("the old values depend on the order the atomics apply",
                       [](size_t region, size_t i) { return region == 2 && i < static_cast<size_t>(n); });
  auto f = build_bucket_kernel(OpKind::AtomicAdd, Scalar::i32, B, buckets);
  std::vector<int32_t> v(n), acc(buckets, 1000), olds(48, -7);
  std::mt19937 rng(1);
  for (auto& e : v) e = static_cast<int32_t>(rng() % 200) - 100;
  ArgValue args[] = {ArgValue::pointer(v.data()), ArgValue::pointer(acc.data()), ArgValue::pointer(olds.data()),
                     ArgValue::integer(n)};
  MemRegion mem[] = {read_only(v), region(acc), region(olds)};
  run_kernel(*f, Grid{3}, args, mem);
  // host replay: programs in order, elements in order
  std::vector<int32_t> want(buckets, 1000);
  for (int64_t i = 0; i < n; ++i) {
    int64_t bk = (i % B) % buckets;
    CHECK(olds[i] == want[bk]);
    want[bk] += v[i];
  }
  CHECK(acc == want);
  CHECK(olds[45] == -7);  // masked off: not stored
}

TEST_CASE("atomic_add on f32 rounds each addition; atomic_max on f32 and i32") {
  const int64_t B = 8, buckets = 2, n = 16;
  GpuUnspecified order("the old values depend on the order the atomics apply",
                       [](size_t region, size_t i) { return region == 2 && i < static_cast<size_t>(n); });
  std::vector<float> v(n);
  std::mt19937 rng(4);
  for (auto& e : v) e = static_cast<float>(rng() % 1000) / 7.0f - 60.0f;
  {
    auto f = build_bucket_kernel(OpKind::AtomicAdd, Scalar::f32, B, buckets);
    std::vector<float> acc{0.1f, -3.0f}, olds(n);
    ArgValue args[] = {ArgValue::pointer(v.data()), ArgValue::pointer(acc.data()), ArgValue::pointer(olds.data()),
                       ArgValue::integer(n)};
    MemRegion mem[] = {read_only(v), region(acc), region(olds)};
    run_kernel(*f, Grid{2}, args, mem);
    std::vector<float> want{0.1f, -3.0f};
    for (int64_t i = 0; i < n; ++i) {
      CHECK(olds[i] == want[(i % B) % buckets]);
      want[(i % B) % buckets] += v[i];
    }
    CHECK(acc == want);
  }
  {
    auto f = build_bucket_kernel(OpKind::AtomicMax, Scalar::f32, B, buckets);
    std::vector<float> acc{-1e30f, 5.0f}, olds(n);
    ArgValue args[] = {ArgValue::pointer(v.data()), ArgValue::pointer(acc.data()), ArgValue::pointer(olds.data()),
                       ArgValue::integer(n)};
    MemRegion mem[] = {read_only(v), region(acc), region(olds)};
    run_kernel(*f, Grid{2}, args, mem);
    std::vector<float> want{-1e30f, 5.0f};
    for (int64_t i = 0; i < n; ++i) {
      CHECK(olds[i] == want[(i % B) % buckets]);
      want[(i % B) % buckets] = std::max(want[(i % B) % buckets], v[i]);
    }
    CHECK(acc == want);
  }
  {
    auto f = build_bucket_kernel(OpKind::AtomicMax, Scalar::i32, B, 1);
    std::vector<int32_t> vi(n), acc{INT32_MIN}, olds(n);
    for (auto& e : vi) e = static_cast<int32_t>(rng());
    ArgValue args[] = {ArgValue::pointer(vi.data()), ArgValue::pointer(acc.data()), ArgValue::pointer(olds.data()),
                       ArgValue::integer(n)};
    MemRegion mem[] = {read_only(vi), region(acc), region(olds)};
    run_kernel(*f, Grid{2}, args, mem);
    CHECK(acc[0] == *std::max_element(vi.begin(), vi.end()));
    CHECK(olds[0] == INT32_MIN);
  }
}

TEST_CASE("atomics are checked like stores: bounds and read-only buffers") {
  auto f = build_bucket_kernel(OpKind::AtomicAdd, Scalar::i32, 16, 5);
  std::vector<int32_t> v(16, 1), acc(4, 0), olds(16);  // bucket 4 is one past the end of acc
  ArgValue args[] = {ArgValue::pointer(v.data()), ArgValue::pointer(acc.data()), ArgValue::pointer(olds.data()),
                     ArgValue::integer(16)};
  MemRegion mem[] = {read_only(v), region(acc), region(olds)};
  std::string msg = error_of([&] { run_kernel(*f, Grid{1}, args, mem); });
  INFO(msg);
  CHECK(msg.find("op 'atomic_add' at atomics.cpp:9 in program (0,0,0): element 4 writes 4 bytes") != std::string::npos);
  CHECK(msg.find("mask did not cover it") != std::string::npos);
  CHECK(acc == std::vector<int32_t>{1, 1, 1, 1});  // elements 0..3 applied before element 4 failed

  auto g = build_bucket_kernel(OpKind::AtomicMax, Scalar::i32, 16, 2);
  std::vector<int32_t> acc2(2, 0);
  ArgValue args2[] = {ArgValue::pointer(v.data()), ArgValue::pointer(acc2.data()), ArgValue::pointer(olds.data()),
                      ArgValue::integer(16)};
  MemRegion mem2[] = {read_only(v), read_only(acc2), region(olds)};
  std::string msg2 = error_of([&] { run_kernel(*g, Grid{1}, args2, mem2); });
  INFO(msg2);
  CHECK(msg2.find("op 'atomic_max'") != std::string::npos);
  CHECK(msg2.find("inside a read-only buffer") != std::string::npos);
}

TEST_CASE("acq_rel: the last program to arrive at a counter sees every program's stores") {
  // Program p of P: part[p, :] = x[p, :] * 3 + p; arrived = atomic_add(count, 1, acq_rel); the
  // one that reads P - 1 sets out[:] = sum over q of part[q, :] (q ascending) and count = 0.
  // On the GPU the other programs are still running or done: the sum is right only if every
  // program's part stores are seen by the last one (tests/interp_gpu compares it exactly).
  const int64_t B = 256, P = 96;
  Function f("last_to_arrive");
  Value* x = f.add_param("x", ptr_t(Scalar::f32));
  Value* part = f.add_param("part", ptr_t(Scalar::f32));
  Value* count = f.add_param("count", ptr_t(Scalar::i32));
  Value* out = f.add_param("out", ptr_t(Scalar::f32));
  Builder b(f);
  Type i32s = scalar_t(Scalar::i32);
  Value* cols = b.arange(0, B);
  Value* pid = b.program_id(0);
  Value* offs = bin(b, OpKind::Add, b.splat(bin(b, OpKind::Mul, pid, b.const_int(B, i32s)), {B}), cols);
  Value* v = b.value(OpKind::Load, {bin(b, OpKind::AddPtr, b.splat(x, {B}), offs)});
  Value* scaled = bin(b, OpKind::Add, bin(b, OpKind::Mul, v, b.const_float(3.0, Type{f32(), {B}})),
                      b.splat(b.cast(pid, DType{Scalar::f32}), {B}));
  b.create(OpKind::Store, {bin(b, OpKind::AddPtr, b.splat(part, {B}), offs), scaled});
  Value* arrived = b.value(OpKind::AtomicAdd, {count, b.const_int(1, i32s)}, {}, {{"acq_rel", int64_t{1}}});
  Value* last = bin(b, OpKind::CmpEq, arrived, b.const_int(P - 1, i32s));
  Value* trips = b.value(OpKind::Select, {last, b.const_int(1, i32s), b.const_int(0, i32s)});
  Value* one = b.const_int(1, i32s);
  Op& once = b.for_loop(b.const_int(0, i32s), trips, one, {});
  ir::Block* top = b.block();
  b.set_block(&once.body());
  Op& sum = b.for_loop(b.const_int(0, i32s), b.const_int(P, i32s), one, {b.const_float(0.0, Type{f32(), {B}})});
  b.set_block(&sum.body());
  Value* q = sum.body().args[0];
  Value* qoffs = bin(b, OpKind::Add, b.splat(bin(b, OpKind::Mul, q, b.const_int(B, i32s)), {B}), cols);
  Value* pv = b.value(OpKind::Load, {bin(b, OpKind::AddPtr, b.splat(part, {B}), qoffs)});
  b.create(OpKind::Yield, {bin(b, OpKind::Add, sum.body().args[1], pv)});
  b.set_block(&once.body());
  b.create(OpKind::Store, {bin(b, OpKind::AddPtr, b.splat(out, {B}), cols), sum.result(0)});
  b.create(OpKind::Store, {count, b.const_int(0, i32s)});
  b.create(OpKind::Yield, {});
  b.set_block(top);
  verify(f);

  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> xs(P * B), parts(P * B, std::nanf("")), os(B, std::nanf(""));
  for (auto& e : xs) e = dist(rng);
  std::vector<int32_t> cnt{0};
  ArgValue args[] = {ArgValue::pointer(xs.data()), ArgValue::pointer(parts.data()), ArgValue::pointer(cnt.data()),
                     ArgValue::pointer(os.data())};
  MemRegion mem[] = {read_only(xs), region(parts), region(cnt), region(os)};
  run_kernel(f, Grid{P}, args, mem);
  for (int64_t j = 0; j < B; ++j) {
    float acc = 0.0f;  // the same f32 operations in the same order
    for (int64_t p = 0; p < P; ++p) {
      volatile float t = xs[p * B + j] * 3.0f;
      acc += t + static_cast<float>(p);
    }
    CHECK(os[j] == acc);
  }
  CHECK(cnt[0] == 0);
}
