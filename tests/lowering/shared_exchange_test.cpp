// The exchanges through shared memory (plan/shared_exchange.hpp): each channel's array and the
// request's bytes, which tiles convert by padded vector rows, the chunks a conversion is cut
// into when the tile does not fit its budget, and the 16-byte store layout of an accumulator.
#include <doctest/doctest.h>

#include "plan/shared_exchange.hpp"

using namespace tessel;
using namespace tessel::lowering;

namespace {
// An accumulator-like layout: 2 consecutive columns a thread, 8 x 4 lanes, 4 warps down.
Layout acc_layout() { return Layout{{1, 2}, {8, 4}, {4, 1}, {1, 0}, {}}; }
ir::Type tile(ir::Scalar s, ir::Shape shape) { return ir::Type{ir::DType{s}, std::move(shape)}; }
}  // namespace

TEST_CASE("exchange shapes: each channel 16-byte aligned after the previous one") {
  ExchangeShape one = exchange_shape({4}, 100);  // 400 bytes
  CHECK(one.offset == std::vector<int64_t>{0});
  CHECK(one.bytes == 400);
  ExchangeShape two = exchange_shape({2, 4}, 33);  // 66 -> 80, then 132 -> 144
  CHECK(two.offset == std::vector<int64_t>{0, 80});
  CHECK(two.bytes == 224);
  CHECK(exchange_shape({8}, 1).bytes == 16);
}

TEST_CASE("vector conversions: 2-D f16/bf16/f32/32-bit integer tiles with rows of 128 bytes or more") {
  CHECK(vector_convertible(tile(ir::Scalar::f16, {64, 64})));
  CHECK(vector_convertible(tile(ir::Scalar::f32, {16, 32})));
  CHECK(vector_convertible(tile(ir::Scalar::u32, {8, 32})));
  CHECK_FALSE(vector_convertible(tile(ir::Scalar::f16, {64, 32})));  // 64-byte rows
  CHECK_FALSE(vector_convertible(tile(ir::Scalar::f64, {8, 32})));
  CHECK_FALSE(vector_convertible(tile(ir::Scalar::i8, {8, 256})));
  CHECK_FALSE(vector_convertible(tile(ir::Scalar::f32, {4, 8, 32})));
}

TEST_CASE("conversion chunks: the whole tile within the budget, else the target's column footprint") {
  const ir::Shape s{128, 128};
  const Layout from = acc_layout();                          // footprint along columns: 8
  const Layout to{{1, 8}, {2, 16}, {4, 1}, {1, 0}, {}};      // 16-byte vectors: 128 columns
  const Layout narrow{{1, 8}, {4, 8}, {4, 1}, {1, 0}, {}};   // 64 columns
  CHECK(padded_bytes(s, 128, 4) == 128 * (512 + 16));
  CHECK(chunk_columns(s, 4, from, narrow, padded_bytes(s, 128, 4)) == 128);
  CHECK(chunk_columns(s, 4, from, narrow, padded_bytes(s, 128, 4) - 1) == 64);
  CHECK(chunk_columns(s, 4, from, to, 1024) == 128);  // no smaller footprint: one chunk whatever the budget
}

TEST_CASE("accumulator store layout: the default within the budget, else the widest chunk that fits") {
  const ir::Shape s{128, 128};
  const Layout whole{{1, 4}, {1, 32}, {4, 1}, {1, 0}, {}};
  const Layout from = acc_layout();
  CHECK(vector_store_layout(whole, from, s, 4, padded_bytes(s, 128, 4)) == whole);
  // 64 columns fit: 4 floats a thread, 16 lanes across, 2 lanes and 4 warps down.
  const auto half = vector_store_layout(whole, from, s, 4, padded_bytes(s, 64, 4));
  REQUIRE(half.has_value());
  CHECK(*half == Layout{{1, 4}, {2, 16}, {4, 1}, {1, 0}, {}});
  CHECK(half->footprint(1) == 64);
  CHECK_FALSE(vector_store_layout(whole, from, s, 4, 1024).has_value());  // not even 16 columns
}
