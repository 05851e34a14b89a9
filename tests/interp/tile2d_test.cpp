// Interpreter: 2-D tiles built with expand_dims and broadcast, masked at ragged matrix edges.
#include "interp_test_util.hpp"

using namespace interp_test;

namespace {

struct Tile2d {
  Value* rows;  // i32[T,T]: the row index of each element
  Value* cols;  // i32[T,T]
  Value* mask;  // rows < m && cols < n
};

// Row and column indices of this program's T x T tile (program_id(1) picks rows, 0 columns).
Tile2d tile_indices(Builder& b, int64_t t, Value* m, Value* n) {
  Type i32s = scalar_t(Scalar::i32);
  Value* r0 = bin(b, OpKind::Mul, b.program_id(1), b.const_int(t, i32s));
  Value* c0 = bin(b, OpKind::Mul, b.program_id(0), b.const_int(t, i32s));
  Value* r = bin(b, OpKind::Add, b.splat(r0, {t}), b.arange(0, t));
  Value* c = bin(b, OpKind::Add, b.splat(c0, {t}), b.arange(0, t));
  Value* rows = b.broadcast(b.expand_dims(r, 1), {t, t});  // [T,1] -> [T,T]
  Value* cols = b.broadcast(b.expand_dims(c, 0), {t, t});  // [1,T] -> [T,T]
  Value* mask = bin(b, OpKind::And, bin(b, OpKind::CmpLt, rows, b.splat(m, {t, t})),
                    bin(b, OpKind::CmpLt, cols, b.splat(n, {t, t})));
  return {rows, cols, mask};
}

}  // namespace

TEST_CASE("2-D add with a row bias over a 37x53 matrix in 16x16 tiles") {
  const int64_t t = 16, M = 37, N = 53, ld = 60;  // padded rows: columns 53..59 must stay untouched
  Function f("add2d");
  Value* x = f.add_param("x", ptr_t(Scalar::f32));
  Value* bias = f.add_param("bias", ptr_t(Scalar::f32));
  Value* out = f.add_param("out", ptr_t(Scalar::f32));
  Value* m = f.add_param("m", scalar_t(Scalar::i32));
  Value* n = f.add_param("n", scalar_t(Scalar::i32));
  Value* stride = f.add_param("ld", scalar_t(Scalar::i32));
  Builder b(f);
  Tile2d ti = tile_indices(b, t, m, n);
  Value* offs = bin(b, OpKind::Add, bin(b, OpKind::Mul, ti.rows, b.splat(stride, {t, t})), ti.cols);
  Value* xv = b.value(OpKind::Load, {bin(b, OpKind::AddPtr, b.splat(x, {t, t}), offs), ti.mask});
  // bias[col], loaded as a 1-D tile and broadcast down the rows
  Value* c0 = bin(b, OpKind::Mul, b.program_id(0), b.const_int(t, scalar_t(Scalar::i32)));
  Value* c = bin(b, OpKind::Add, b.splat(c0, {t}), b.arange(0, t));
  Value* bv = b.value(OpKind::Load, {bin(b, OpKind::AddPtr, b.splat(bias, {t}), c),
                                     bin(b, OpKind::CmpLt, c, b.splat(n, {t}))});
  Value* bb = b.broadcast(b.expand_dims(bv, 0), {t, t});
  Value* sum = bin(b, OpKind::Add, xv, bb);
  b.create(OpKind::Store, {bin(b, OpKind::AddPtr, b.splat(out, {t, t}), offs), sum, ti.mask});

  std::mt19937 rng(99);
  std::uniform_real_distribution<float> dist(-3.f, 3.f);
  std::vector<float> xs(M * ld), bs(N), os(M * ld, std::nanf(""));
  for (auto& v : xs) v = dist(rng);
  for (auto& v : bs) v = dist(rng);
  ArgValue args[] = {ArgValue::pointer(xs.data()), ArgValue::pointer(bs.data()), ArgValue::pointer(os.data()),
                     ArgValue::integer(M), ArgValue::integer(N), ArgValue::integer(ld)};
  MemRegion mem[] = {read_only(xs), read_only(bs), region(os)};
  run_kernel(f, Grid{(N + t - 1) / t, (M + t - 1) / t}, args, mem);
  int64_t bad = 0, touched_padding = 0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < ld; ++j) {
      float got = os[i * ld + j];
      if (j < N) bad += !(got == xs[i * ld + j] + bs[j]);
      else touched_padding += !std::isnan(got);
    }
  CHECK(bad == 0);
  CHECK(touched_padding == 0);
}

TEST_CASE("broadcast of a rank-3 tile repeats its size-1 dims in row-major order") {
  // a = [1,1,4] and c = [2,1,1] both broadcast to [2,4,4]: out[i,j,k] = a[k] * 10 + c[i].
  Function f("bcast3");
  Value* out = f.add_param("out", ptr_t(Scalar::i32));
  Builder b(f);
  Value* k3 = b.arange(0, 4);                             // [4]
  Value* a = b.expand_dims(b.expand_dims(k3, 0), 0);       // [1,1,4]
  Value* i2 = b.arange(5, 7);                             // [2]: 5, 6
  Value* c = b.expand_dims(b.expand_dims(i2, 1), 2);       // [2,1,1]
  Shape s{2, 4, 4};
  Value* ab = b.broadcast(a, s);
  Value* cb = b.broadcast(c, s);
  Value* v = bin(b, OpKind::Add, bin(b, OpKind::Mul, ab, b.const_int(10, Type{i32(), s})), cb);
  Value* lin = bin(b, OpKind::Add, bin(b, OpKind::Mul, b.broadcast(b.expand_dims(b.expand_dims(b.arange(0, 2), 1), 2), s),
                                       b.const_int(16, Type{i32(), s})),
                   bin(b, OpKind::Add, bin(b, OpKind::Mul, b.broadcast(b.expand_dims(b.expand_dims(b.arange(0, 4), 0), 2), s),
                                           b.const_int(4, Type{i32(), s})),
                       ab));
  b.create(OpKind::Store, {bin(b, OpKind::AddPtr, b.splat(out, s), lin), v});
  std::vector<int32_t> os(32, -1);
  ArgValue args[] = {ArgValue::pointer(os.data())};
  MemRegion mem[] = {region(os)};
  run_kernel(f, Grid{}, args, mem);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 4; ++k) {
        CAPTURE(i * 16 + j * 4 + k);
        CHECK(os[i * 16 + j * 4 + k] == k * 10 + 5 + i);
      }
}
