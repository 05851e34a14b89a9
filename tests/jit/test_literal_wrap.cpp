// i8/i16 arithmetic with weak integer literals computes (and wraps) in the tile's width, on the
// current device; out-of-range literals compute in i64 (docs/dsl.md §5).
//
// Each result is cast to i32 (or stored as i64) inside the kernel: storing an i8 result into an
// i8 buffer would keep only the low byte and hide arithmetic that was done in a wider type.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "tessel/tessel.hpp"

using namespace tessel;
using namespace tessel::lang;

namespace {

constexpr int kI8Results = 9, kI16Results = 5, kWideResults = 4;

void i8_literal_kernel(Ptr<i8> x, Ptr<i32> out, Ptr<i64> wide, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  auto v = load(x + offs, mask);
  const Tile r[kI8Results] = {v + 100, 100 + v, v - 100, -100 - v, v * 3, 5 * v, v << 3, v / -1, (v + 1) * 2};
  for (int k = 0; k < kI8Results; ++k) store(out + k * n + offs, cast<i32>(r[k]), mask);
  // literals that do not fit i8: i64 arithmetic, nothing wraps
  const Tile w[kWideResults] = {v * 300, v + 200, -129 - v, v * -1000};
  for (int k = 0; k < kWideResults; ++k) store(wide + k * n + offs, w[k], mask);
}

void i16_literal_kernel(Ptr<i16> x, Ptr<i32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  auto v = load(x + offs, mask);
  // `+ (-32768)`: in `7 * v - 32768` the literal is +32768, which does not fit i16 (-> i64)
  const Tile r[kI16Results] = {v + 30000, 1 + v, v * 300, 7 * v + (-32768), v / -1};
  for (int k = 0; k < kI16Results; ++k) store(out + k * n + offs, cast<i32>(r[k]), mask);
}

// A Var of i8 through a runtime loop: acc = acc * 3 + 100 each trip, wrapping in i8.
void i8_var_kernel(Ptr<i8> x, Ptr<i32> out, Int n, Int trips, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  Var acc{load(x + offs, mask)};
  for (auto i : range(0, trips)) {
    acc *= 3;
    acc += 100;
  }
  store(out + offs, cast<i32>(acc.get()), mask);
}

jit::Kernel k_i8{"i8_literals", &i8_literal_kernel, {"x", "out", "wide", "n"}, Meta{{"BLOCK", 128}}};
jit::Kernel k_i16{"i16_literals", &i16_literal_kernel, {"x", "out", "n"}, Meta{{"BLOCK", 128}}};
jit::Kernel k_var{"i8_var", &i8_var_kernel, {"x", "out", "n", "trips"}, Meta{{"BLOCK", 64}}};

// The host reference: int arithmetic, then the value wrapped to T (C++20 conversions to a
// signed type are modular).
template <class T>
int32_t wrap(int64_t v) {
  return static_cast<T>(v);
}

template <class T>
std::vector<T> random_ints(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<T> v(static_cast<size_t>(n));
  for (auto& e : v) e = static_cast<T>(rng());
  v[0] = std::numeric_limits<T>::min();  // -128 / -1 wraps back to -128
  v[1] = std::numeric_limits<T>::max();
  v[2] = -1;
  return v;
}

}  // namespace

TEST_CASE("i8 tile op literal wraps in i8; an out-of-range literal computes in i64") {
  const int64_t n = 301;  // three programs of 128, the last one partly masked
  const auto h = random_ints<int8_t>(n, 21);
  jit::Array<int8_t> x(h);
  jit::Array<int32_t> out(kI8Results * n);
  jit::Array<int64_t> wide(kWideResults * n);
  out.poison();
  wide.poison();
  k_i8(jit::Grid{jit::cdiv(n, 128)}, {}, x, out, wide, n);
  const auto got = out.download();
  const auto got_wide = wide.download();
  int64_t bad = 0, wrapped = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = h[static_cast<size_t>(i)];
    const int64_t exact[kI8Results] = {v + 100, 100 + v, v - 100, -100 - v, v * 3, 5 * v, v * 8, -v, (v + 1) * 2};
    for (int k = 0; k < kI8Results; ++k) {
      const int32_t want = wrap<int8_t>(exact[k]);
      wrapped += want != exact[k];
      if (got[static_cast<size_t>(k * n + i)] != want) {
        if (++bad <= 10) MESSAGE("i8 result " << k << " of x = " << v << ": got " << got[k * n + i] << ", want " << want);
      }
    }
    const int64_t want_wide[kWideResults] = {v * 300, v + 200, -129 - v, v * -1000};
    for (int k = 0; k < kWideResults; ++k) {
      if (got_wide[static_cast<size_t>(k * n + i)] != want_wide[k]) {
        if (++bad <= 10) MESSAGE("i64 result " << k << " of x = " << v << ": got " << got_wide[k * n + i]);
      }
    }
  }
  CHECK(bad == 0);
  CHECK(wrapped > n);  // most results overflow i8: the check above is about wrapping
}

TEST_CASE("i16 tile op literal wraps in i16") {
  const int64_t n = 257;
  const auto h = random_ints<int16_t>(n, 22);
  jit::Array<int16_t> x(h);
  jit::Array<int32_t> out(kI16Results * n);
  out.poison();
  k_i16(jit::Grid{jit::cdiv(n, 128)}, {}, x, out, n);
  const auto got = out.download();
  int64_t bad = 0, wrapped = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = h[static_cast<size_t>(i)];
    const int64_t exact[kI16Results] = {v + 30000, 1 + v, v * 300, 7 * v - 32768, -v};
    for (int k = 0; k < kI16Results; ++k) {
      const int32_t want = wrap<int16_t>(exact[k]);
      wrapped += want != exact[k];
      if (got[static_cast<size_t>(k * n + i)] != want) {
        if (++bad <= 10) MESSAGE("i16 result " << k << " of x = " << v << ": got " << got[k * n + i] << ", want " << want);
      }
    }
  }
  CHECK(bad == 0);
  CHECK(wrapped > n);
}

TEST_CASE("an i8 Var updated with literals in a runtime loop wraps in i8 every trip") {
  const int64_t n = 77, trips = 5;
  const auto h = random_ints<int8_t>(n, 23);
  jit::Array<int8_t> x(h);
  jit::Array<int32_t> out(n);
  out.poison();
  k_var(jit::Grid{jit::cdiv(n, 64)}, {}, x, out, n, trips);
  const auto got = out.download();
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    int64_t acc = h[static_cast<size_t>(i)];
    for (int t = 0; t < trips; ++t) acc = wrap<int8_t>(wrap<int8_t>(acc * 3) + 100);
    bad += got[static_cast<size_t>(i)] != acc;
  }
  CHECK(bad == 0);
}
