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
