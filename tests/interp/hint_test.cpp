// Interpreter: hint ops are the identity, and a promise the data breaks is a run-time error.
#include <algorithm>
#include <numeric>

#include "interp_test_util.hpp"

using namespace interp_test;

namespace {

constexpr int64_t kBlock = 64;

// out[i] = x[idx[i]] for i < n. idx is read unmasked (the host pads it to whole blocks);
// with `hinted`, the gathered offsets carry max_contiguous(multiple_of(idx, 4), 4).
void build_gather(Function& f, bool hinted) {
  Value* x = f.add_param("x", ptr_t(Scalar::f32));
  Value* idx = f.add_param("idx", ptr_t(Scalar::i32));
  Value* out = f.add_param("out", ptr_t(Scalar::f32));
  Value* n = f.add_param("n", scalar_t(Scalar::i32));
  Builder b(f);
  Value* offs = block_offsets(b, kBlock);
  Value* mask = bin(b, OpKind::CmpLt, offs, b.splat(n, {kBlock}));
  Value* i = b.value(OpKind::Load, {bin(b, OpKind::AddPtr, b.splat(idx, {kBlock}), offs)});
  if (hinted) i = b.hint(i, {4}, {4});  // as the DSL's max_contiguous(multiple_of(i, 4), 4) records it
  Value* v = b.value(OpKind::Load, {bin(b, OpKind::AddPtr, b.splat(x, {kBlock}), i), mask});
  b.create(OpKind::Store, {bin(b, OpKind::AddPtr, b.splat(out, {kBlock}), offs), v, mask});
}

std::vector<float> run_gather(const Function& f, std::vector<float>& x, std::vector<int32_t>& idx, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n), poison<float>());
  std::vector<ArgValue> args{ArgValue::pointer(x.data()), ArgValue::pointer(idx.data()), ArgValue::pointer(out.data()),
                             ArgValue::integer(n)};
  std::vector<MemRegion> mem{region(x), region(idx), region(out)};
  run_kernel(f, Grid{(n + kBlock - 1) / kBlock}, args, mem);
  return out;
}

}  // namespace

TEST_CASE("hint: a gather with hinted offsets computes what the unhinted one does, at odd sizes") {
  Function plain("gather"), hinted("gather_hinted");
  build_gather(plain, false);
  build_gather(hinted, true);
  std::mt19937 rng(77);
  std::uniform_real_distribution<float> dist(-50.f, 50.f);
  for (int64_t n : {int64_t{1}, int64_t{1000}, int64_t{4097}}) {
    CAPTURE(n);
    const int64_t padded = (n + kBlock - 1) / kBlock * kBlock;
    std::vector<float> x(static_cast<size_t>(padded));
    for (auto& v : x) v = dist(rng);
    // Aligned runs of 4 consecutive offsets, the runs in a random order.
    std::vector<int32_t> groups(static_cast<size_t>(padded / 4));
    std::iota(groups.begin(), groups.end(), 0);
    std::shuffle(groups.begin(), groups.end(), rng);
    std::vector<int32_t> idx(static_cast<size_t>(padded));
    for (int64_t k = 0; k < padded; ++k) idx[k] = 4 * groups[k / 4] + static_cast<int32_t>(k % 4);
    std::vector<float> a = run_gather(plain, x, idx, n);
    std::vector<float> h = run_gather(hinted, x, idx, n);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) bad += !(a[i] == x[idx[i]]) + !(h[i] == a[i]);
    CHECK(bad == 0);
  }
}

TEST_CASE("hint: the interpreter reports a promise the data breaks") {
  Function hinted("gather_hinted");
  build_gather(hinted, true);
  const int64_t n = 100, padded = 128;
  std::vector<float> x(padded, 1.5f);
  std::vector<int32_t> idx(padded);
  std::iota(idx.begin(), idx.end(), 0);
  CHECK_NOTHROW(run_gather(hinted, x, idx, n));  // one run of 128: both promises hold
  std::swap(idx[70], idx[71]);                   // breaks the run 68..71 in the second program
  std::string m = error_of([&] { run_gather(hinted, x, idx, n); });
  INFO(m);
  CHECK(m.find("op 'hint'") != std::string::npos);
  CHECK(m.find("in program (1,0,0)") != std::string::npos);
  CHECK(m.find("max_contiguous(4) along dim 0 does not hold: element [7] is 70 but the element before it along "
               "that dim is 71 (runs of 1 consecutive values at most)") != std::string::npos);
  std::iota(idx.begin(), idx.end(), 2);  // consecutive, but runs start at 2 mod 4
  m = error_of([&] { run_gather(hinted, x, idx, n); });
  CHECK(m.find("multiple_of(4) along dim 0 does not hold: element [0] is 2") != std::string::npos);
}

TEST_CASE("hint: scalar, pointer and 2-D promises are checked where the data shows them") {
  Function f("k");
  Value* p = f.add_param("p", ptr_t(Scalar::i32));
  Value* s = f.add_param("s", scalar_t(Scalar::i32));
  Builder b(f);
  Value* hs = b.hint(s, {16});
  Value* hp = b.hint(p, {16});
  // [4,8] tile rows * s + cols: contiguous runs of 8 along dim 1, rows multiples of s along dim 0.
  Value* rows = b.broadcast(b.expand_dims(bin(b, OpKind::Mul, b.arange(0, 4), b.splat(hs, {4})), 1), {4, 8});
  Value* cols = b.broadcast(b.expand_dims(b.arange(0, 8), 0), {4, 8});
  // Along dim 0 nothing is contiguous, so a multiple_of there would cover every element: 1.
  Value* t = b.hint(bin(b, OpKind::Add, rows, cols), {1, 16}, {1, 8});
  b.create(OpKind::Store, {bin(b, OpKind::AddPtr, b.splat(hp, {4, 8}), t), b.splat(s, {4, 8})});
  alignas(64) static int32_t mem[4 * 64 + 16];
  auto go = [&](const void* base, int64_t stride) {
    std::vector<ArgValue> args{ArgValue::pointer(base), ArgValue::integer(stride)};
    std::vector<MemRegion> regions{MemRegion{mem, sizeof(mem), true}};
    run_kernel(f, Grid{1}, args, regions);
  };
  CHECK_NOTHROW(go(mem, 16));
  CHECK(mem[16 * 3 + 5] == 16);
  CHECK(error_of([&] { go(mem, 24); }).find("multiple_of(16) along dim 0 does not hold: the scalar is 24") !=
        std::string::npos);
  CHECK(error_of([&] { go(mem + 1, 16); }).find("(pointers: the address in bytes)") != std::string::npos);
  // stride 8: rows continue the runs (dim 0 still fine at its starts), but 8 is not a multiple of 16.
  std::string m = error_of([&] { go(mem, 8); });
  INFO(m);
  CHECK(m.find("multiple_of(16) along dim 0 does not hold: the scalar is 8") != std::string::npos);
}
