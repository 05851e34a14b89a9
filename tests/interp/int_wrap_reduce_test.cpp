// Interpreter: integer sums that overflow their width wrap (then cast wider), cumsum wraps, and
// integer max/min/argmax/argmin with ties, over masked 2-D tiles with odd logical sizes.
//
// A sum stored at its own width hides a missing wrap (the store keeps the low bits), so every
// sum is also cast to i64 and to f32 inside the kernel and stored: those show the wrapped value.
#include <algorithm>
#include <cstdint>
#include <memory>

#include "interp_test_util.hpp"
#include "tessel/ir/verify.hpp"

using namespace interp_test;

namespace {

constexpr int64_t kTR = 16, kTC = 64;  // the tile; the logical [R, C] block sits in its top-left corner
constexpr int64_t kPrograms = 3;       // one [R, C] block per program, one after the other in x

template <class T>
constexpr Scalar scalar_of() {
  if constexpr (std::is_same_v<T, int8_t>) return Scalar::i8;
  else if constexpr (std::is_same_v<T, int16_t>) return Scalar::i16;
  else if constexpr (std::is_same_v<T, int32_t>) return Scalar::i32;
  else return Scalar::i64;
}

// The start of the tile kernels below: params x (ptr<t>), then `outs`, then R and C (i32).
// Program p loads x[p*R*C + r*C + c] for r < R, c < C (masked-off lanes take `other`).
struct Masked2D {
  Value* tile;        // t[kTR, kTC]
  Value* rows;        // i32[kTR, kTC], the row index
  Value* cols;        // i32[kTR, kTC]
  Value* mask;        // i1[kTR, kTC], r < R and c < C
  Value* pid;         // i32
  Value* R;           // i32
  Value* C;           // i32
  std::vector<Value*> outs;
};

Masked2D load_masked_2d(Function& f, Builder& b, Scalar t, const std::vector<Scalar>& outs, int64_t other) {
  Masked2D m;
  Value* x = f.add_param("x", ptr_t(t));
  for (size_t i = 0; i < outs.size(); ++i) m.outs.push_back(f.add_param("out" + std::to_string(i), ptr_t(outs[i])));
  m.R = f.add_param("R", scalar_t(Scalar::i32));
  m.C = f.add_param("C", scalar_t(Scalar::i32));
  const Shape s{kTR, kTC};
  m.rows = b.broadcast(b.expand_dims(b.arange(0, kTR), 1), s);
  m.cols = b.broadcast(b.expand_dims(b.arange(0, kTC), 0), s);
  m.mask = bin(b, OpKind::And, bin(b, OpKind::CmpLt, m.rows, b.splat(m.R, s)),
               bin(b, OpKind::CmpLt, m.cols, b.splat(m.C, s)));
  m.pid = b.program_id(0);
  Value* base = bin(b, OpKind::AddPtr, x, bin(b, OpKind::Mul, m.pid, bin(b, OpKind::Mul, m.R, m.C)));
  Value* offs = bin(b, OpKind::Add, bin(b, OpKind::Mul, m.rows, b.splat(m.C, s)), m.cols);
  m.tile = b.value(OpKind::Load, {bin(b, OpKind::AddPtr, b.splat(base, s), offs), m.mask,
                                  b.const_int(other, Type{DType{t, false}, s})});
  return m;
}

// Stores the rank-1 `v` (length kTR or kTC) into out[pid * n + k] for k < n.
void store_line(Builder& b, Value* out, Value* v, Value* pid, Value* n) {
  const int64_t len = v->type.shape.at(0);
  Value* k = b.arange(0, len);
  Value* base = bin(b, OpKind::AddPtr, out, bin(b, OpKind::Mul, pid, n));
  b.create(OpKind::Store, {bin(b, OpKind::AddPtr, b.splat(base, {len}), k), v,
                           bin(b, OpKind::CmpLt, k, b.splat(n, {len}))});
}

// x[p][r][c] of the kPrograms blocks of [R, C], as one flat vector.
template <class T>
T at(const std::vector<T>& x, int64_t R, int64_t C, int64_t p, int64_t r, int64_t c) {
  return x[(p * R + r) * C + c];
}

// Random values of T whose sums overflow: a third of the rows lean positive, a third negative,
// a third span the whole range.
template <class T>
std::vector<T> overflowing_values(int64_t R, int64_t C, uint32_t seed) {
  std::mt19937_64 rng(seed);
  const int64_t hi = std::numeric_limits<T>::max(), lo = std::numeric_limits<T>::min();
  std::vector<T> v(static_cast<size_t>(kPrograms * R * C));
  for (int64_t p = 0; p < kPrograms; ++p)
    for (int64_t r = 0; r < R; ++r)
      for (int64_t c = 0; c < C; ++c) {
        int64_t a = lo, z = hi;
        if ((r + c + p) % 3 == 0) a = hi / 2;
        else if ((r + c + p) % 3 == 1) z = lo / 2;
        // a + uniform[0, z - a], in uint64 so that i64's full span does not overflow
        const uint64_t span = static_cast<uint64_t>(z) - static_cast<uint64_t>(a);
        const uint64_t off = span == UINT64_MAX ? rng() : rng() % (span + 1);
        v[(p * R + r) * C + c] = static_cast<T>(static_cast<int64_t>(static_cast<uint64_t>(a) + off));
      }
  return v;
}

template <class T>
void check_wrapping_sums(int64_t R, int64_t C, uint32_t seed) {
  const Scalar t = scalar_of<T>();
  const auto x = overflowing_values<T>(R, C, seed);
  for (int axis : {0, 1}) {
    CAPTURE(axis);
    Function f("sum_wrap");
    Builder b(f);
    Masked2D m = load_masked_2d(f, b, t, {t, Scalar::i64, Scalar::f32}, 0);
    Value* s = b.reduce(OpKind::ReduceSum, m.tile, axis);
    Value* n = axis == 0 ? m.C : m.R;  // the number of sums per program
    store_line(b, m.outs[0], s, m.pid, n);
    store_line(b, m.outs[1], b.cast(s, i64()), m.pid, n);
    store_line(b, m.outs[2], b.cast(s, DType{Scalar::f32, false}), m.pid, n);
    verify(f);

    const int64_t lines = axis == 0 ? C : R, len = axis == 0 ? R : C;
    std::vector<T> sums(static_cast<size_t>(kPrograms * lines), poison<T>());
    std::vector<int64_t> wide(sums.size(), poison<int64_t>());
    std::vector<float> flt(sums.size(), poison<float>());
    ArgValue args[] = {ArgValue::pointer(x.data()), ArgValue::pointer(sums.data()), ArgValue::pointer(wide.data()),
                       ArgValue::pointer(flt.data()), ArgValue::integer(R), ArgValue::integer(C)};
    MemRegion mem[] = {read_only(x), region(sums), region(wide), region(flt)};
    run_kernel(f, Grid{kPrograms}, args, mem);

    int64_t overflowed_up = 0, overflowed_down = 0;
    for (int64_t p = 0; p < kPrograms; ++p)
      for (int64_t i = 0; i < lines; ++i) {
        // the true sum in int64 (i64 itself: modulo 2^64 through uint64), then wrapped to T
        uint64_t total = 0;
        int64_t exact = 0;
        for (int64_t k = 0; k < len; ++k) {
          const T e = axis == 0 ? at(x, R, C, p, k, i) : at(x, R, C, p, i, k);
          total += static_cast<uint64_t>(static_cast<int64_t>(e));
          if constexpr (sizeof(T) < 8) exact += e;
        }
        const T want = static_cast<T>(total);  // C++20: conversion to a signed type is modular
        if constexpr (sizeof(T) < 8) {
          overflowed_up += exact > std::numeric_limits<T>::max();
          overflowed_down += exact < std::numeric_limits<T>::min();
        }
        const size_t j = static_cast<size_t>(p * lines + i);
        INFO("program " << p << ", line " << i);
        CHECK(sums[j] == want);
        CHECK(wide[j] == static_cast<int64_t>(want));
        CHECK(flt[j] == static_cast<float>(want));  // the host's int -> float rounds to nearest even
      }
    if constexpr (sizeof(T) < 8) {
      // the data must really overflow, both ways, or this test proves nothing about wrapping
      CHECK(overflowed_up > 0);
      CHECK(overflowed_down > 0);
    }
  }
}

// The inclusive prefix sum along `axis`, wrapped at the width, stored as T and cast to i64.
template <class T>
void check_wrapping_cumsum(int64_t R, int64_t C, uint32_t seed) {
  const Scalar t = scalar_of<T>();
  const auto x = overflowing_values<T>(R, C, seed);
  for (int axis : {0, 1}) {
    CAPTURE(axis);
    Function f("cumsum_wrap");
    Builder b(f);
    Masked2D m = load_masked_2d(f, b, t, {t, Scalar::i64}, 0);
    Value* cs = b.reduce(OpKind::CumSum, m.tile, axis);
    const Shape s{kTR, kTC};
    Value* offs = bin(b, OpKind::Add, bin(b, OpKind::Mul, m.rows, b.splat(m.C, s)), m.cols);
    Value* block = bin(b, OpKind::Mul, m.pid, bin(b, OpKind::Mul, m.R, m.C));
    for (int k = 0; k < 2; ++k) {
      Value* base = bin(b, OpKind::AddPtr, m.outs[k], block);
      b.create(OpKind::Store, {bin(b, OpKind::AddPtr, b.splat(base, s), offs), k == 0 ? cs : b.cast(cs, i64()), m.mask});
    }
    verify(f);

    std::vector<T> got(x.size(), poison<T>());
    std::vector<int64_t> wide(x.size(), poison<int64_t>());
    ArgValue args[] = {ArgValue::pointer(x.data()), ArgValue::pointer(got.data()), ArgValue::pointer(wide.data()),
                       ArgValue::integer(R), ArgValue::integer(C)};
    MemRegion mem[] = {read_only(x), region(got), region(wide)};
    run_kernel(f, Grid{kPrograms}, args, mem);

    int64_t bad = 0, wrapped = 0;
    for (int64_t p = 0; p < kPrograms; ++p)
      for (int64_t i = 0; i < (axis == 0 ? C : R); ++i) {
        int64_t run = 0;  // exact in int64 for i8..i32
        for (int64_t k = 0; k < (axis == 0 ? R : C); ++k) {
          const int64_t r = axis == 0 ? k : i, c = axis == 0 ? i : k;
          run += at(x, R, C, p, r, c);
          const T want = static_cast<T>(run);
          wrapped += run != want;
          const size_t j = static_cast<size_t>((p * R + r) * C + c);
          bad += got[j] != want || wide[j] != static_cast<int64_t>(want);
        }
      }
    CHECK(bad == 0);
    CHECK(wrapped > 0);
  }
}

// reduce_max/min and argmax/argmin along `axis` of ints drawn from a few values, the extremes
// of T among them, so every row has ties. Masked-off lanes load the value that loses (T's min
// for max, T's max for min), at a higher index than the row, so they never win a tie.
template <class T>
void check_int_extremes(int64_t R, int64_t C, uint32_t seed) {
  const Scalar t = scalar_of<T>();
  const T lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  const T pool[] = {lo, static_cast<T>(lo + 1), -1, 0, 3, static_cast<T>(hi - 1), hi};
  std::mt19937 rng(seed);
  std::vector<T> x(static_cast<size_t>(kPrograms * R * C));
  for (auto& e : x) e = pool[rng() % 7];
  // one row of program 0 holds only lo and one column only hi: the padding then ties with them
  for (int64_t c = 0; c < C; ++c) x[static_cast<size_t>(1 * C + c)] = lo;
  for (int64_t r = 0; r < R; ++r) x[static_cast<size_t>(r * C + 2)] = hi;

  for (OpKind k : {OpKind::ReduceMax, OpKind::ReduceMin, OpKind::ArgMax, OpKind::ArgMin})
    for (int axis : {0, 1}) {
      CAPTURE(static_cast<int>(k));
      CAPTURE(axis);
      const bool is_max = k == OpKind::ReduceMax || k == OpKind::ArgMax;
      const bool is_arg = k == OpKind::ArgMax || k == OpKind::ArgMin;
      Function f("int_extremes");
      Builder b(f);
      Masked2D m = load_masked_2d(f, b, t, {is_arg ? Scalar::i32 : t}, is_max ? lo : hi);
      store_line(b, m.outs[0], b.reduce(k, m.tile, axis), m.pid, axis == 0 ? m.C : m.R);
      verify(f);

      const int64_t lines = axis == 0 ? C : R, len = axis == 0 ? R : C;
      std::vector<int64_t> want;
      for (int64_t p = 0; p < kPrograms; ++p)
        for (int64_t i = 0; i < lines; ++i) {
          int64_t best = 0;
          auto elem = [&](int64_t q) { return axis == 0 ? at(x, R, C, p, q, i) : at(x, R, C, p, i, q); };
          for (int64_t q = 1; q < len; ++q)
            if (is_max ? elem(q) > elem(best) : elem(q) < elem(best)) best = q;  // strict: the first wins ties
          want.push_back(is_arg ? best : static_cast<int64_t>(elem(best)));
        }
      std::vector<int64_t> got;
      ArgValue args[] = {ArgValue::pointer(x.data()), ArgValue::pointer(nullptr), ArgValue::integer(R),
                         ArgValue::integer(C)};
      if (is_arg) {
        std::vector<int32_t> out(want.size(), poison<int32_t>());
        args[1] = ArgValue::pointer(out.data());
        MemRegion mem[] = {read_only(x), region(out)};
        run_kernel(f, Grid{kPrograms}, args, mem);
        got.assign(out.begin(), out.end());
      } else {
        std::vector<T> out(want.size(), poison<T>());
        args[1] = ArgValue::pointer(out.data());
        MemRegion mem[] = {read_only(x), region(out)};
        run_kernel(f, Grid{kPrograms}, args, mem);
        got.assign(out.begin(), out.end());
      }
      CHECK(got == want);
    }
}

}  // namespace

TEST_CASE("integer reduce_sum wraps to i8/i16/i32/i64, then casts to i64 and f32 keep the wrapped value") {
  // odd logical sizes inside a [16, 64] tile: columns of 13 and rows of 51 (axis 0 and axis 1)
  check_wrapping_sums<int8_t>(13, 51, 1);
  check_wrapping_sums<int16_t>(11, 37, 2);
  check_wrapping_sums<int32_t>(7, 63, 3);
  check_wrapping_sums<int64_t>(15, 45, 4);
}

TEST_CASE("integer cumsum wraps at every step, along either axis") {
  check_wrapping_cumsum<int8_t>(13, 51, 5);
  check_wrapping_cumsum<int16_t>(9, 41, 6);
  check_wrapping_cumsum<int32_t>(15, 33, 7);
}

TEST_CASE("integer max/min/argmax/argmin with ties and the extremes of the type") {
  check_int_extremes<int8_t>(13, 51, 8);
  check_int_extremes<int16_t>(11, 37, 9);
  check_int_extremes<int32_t>(7, 63, 10);
  check_int_extremes<int64_t>(5, 29, 11);
}
