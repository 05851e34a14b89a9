// Tracing unsigned kinds, fp8, bitcast and unpack: the types the DSL gives, and the errors
// (each naming the user's line) for what they cannot do.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "../common/expect_compile_error.hpp"
#include "tessel/ir/verify.hpp"
#include "tessel/lang/lang.hpp"

using namespace tessel::lang;
namespace ir = tessel::ir;

namespace {
int g_line = 0;
std::vector<std::string> g_types;
void probe(const Tile& t) { g_types.push_back(t.type().str()); }

template <class... A>
void expect_error(void (*fn)(A...), const std::string& needle) {
  tessel_test::expect_compile_error(fn, Meta{}, needle, g_line, "bits_trace_test.cpp");
}

void unsigned_promotion(Ptr<u32> w, Ptr<i32> s, Ptr<u8> b, const Meta&) {
  auto offs = arange(0, 64);
  auto x = load(w + offs);
  probe(x & 0xF);                      // a literal that fits stays u32
  probe(x >> 4);
  probe(x + load(s + offs));           // i32 with u32: u32 (equal widths: unsigned wins)
  probe(load(b + offs) + load(s + offs));  // u8 with i32: the wider i32
  probe(x * -1);                       // -1 does not fit u32: i64
}

void bits_and_unpack(Ptr<u32> w, Ptr<f16> h, const Meta&) {
  auto r = arange(0, 16).col();
  auto c = arange(0, 32).row();
  auto words = load(w + r * 32 + c);   // [16, 32] u32
  probe(unpack<f16>(words, 0, 4));     // [128, 32]
  probe(unpack<i32>(words, 1, 8));     // [16, 128]
  probe(bitcast<f32>(words));
  probe(bitcast<u16>(load(h + arange(0, 16))));
}

void fp8_add(Ptr<f8e4m3> p, const Meta&) {
  auto x = load(p + arange(0, 16));
  g_line = __LINE__; auto y = x + 1.0f;
}
void fp8_exp(Ptr<f8e5m2> p, const Meta&) {
  auto x = load(p + arange(0, 16));
  g_line = __LINE__; auto y = x * x;
}
void fp8_dots(Ptr<f8e4m3> p, Ptr<f8e5m2> q, const Meta&) {
  auto a = load(p + arange(0, 32).col() * 32 + arange(0, 32).row());  // [32, 32] e4m3
  auto b = load(q + arange(0, 32).col() * 32 + arange(0, 32).row());  // [32, 32] e5m2
  probe(dot(a, a));
  probe(dot(a, b));  // the two formats may mix
}
void fp8_dot_f16(Ptr<f8e4m3> p, Ptr<f16> h, const Meta&) {
  auto a = load(p + arange(0, 32).col() * 32 + arange(0, 32).row());
  auto b = load(h + arange(0, 32).col() * 32 + arange(0, 32).row());
  g_line = __LINE__; auto c = dot(a, b);
}
void unpack_signed(Ptr<i32> p, const Meta&) {
  auto x = load(p + arange(0, 16));
  g_line = __LINE__; auto y = unpack<f16>(x, 0, 4);
}
void unpack_bad_bits(Ptr<u32> p, const Meta&) {
  auto x = load(p + arange(0, 16));
  g_line = __LINE__; auto y = unpack<f16>(x, 0, 3);
}
void unpack_bad_axis(Ptr<u32> p, const Meta&) {
  auto x = load(p + arange(0, 16));
  g_line = __LINE__; auto y = unpack<f16>(x, 1, 4);
}
void unpack_bad_zero(Ptr<u32> p, const Meta&) {
  auto x = load(p + arange(0, 16));
  g_line = __LINE__; auto y = unpack<f16>(x, 0, 4, 16);
}
void unpack_unsigned_zero(Ptr<u32> p, const Meta&) {
  auto x = load(p + arange(0, 16));
  g_line = __LINE__; auto y = unpack<u8>(x, 0, 4, 8);
}
void bitcast_width(Ptr<f32> p, const Meta&) {
  auto x = load(p + arange(0, 16));
  g_line = __LINE__; auto y = bitcast<u16>(x);
}
}  // namespace

TEST_CASE("unsigned kinds promote as C does; unpack and bitcast give the documented shapes") {
  g_types.clear();
  ir::verify(*trace(unsigned_promotion, Meta{}));
  CHECK(g_types == std::vector<std::string>{"u32[64]", "u32[64]", "u32[64]", "i32[64]", "i64[64]"});
  g_types.clear();
  ir::verify(*trace(bits_and_unpack, Meta{}));
  CHECK(g_types == std::vector<std::string>{"f16[128,32]", "i32[16,128]", "f32[16,32]", "u16[16]"});
  g_types.clear();
  ir::verify(*trace(fp8_dots, Meta{}));
  CHECK(g_types == std::vector<std::string>{"f32[32,32]", "f32[32,32]"});
}

TEST_CASE("fp8 arithmetic, fp8 dot with a 16-bit operand, unpack of signed words or bad fields, and width-changing bitcasts are errors") {
  expect_error(fp8_add, "8-bit floats are storage types; cast<f16> or cast<f32> the tile first");
  expect_error(fp8_exp, "8-bit floats are storage types");
  expect_error(fp8_dot_f16, "dot: a and b must have the same dtype, got f8e4m3[32,32] and f16[32,32]");
  expect_error(unpack_signed, "unpack: expects u8, u16 or u32 words, got i32[16]");
  expect_error(unpack_bad_bits, "bits must be 1, 2, 4, 8 or 16");
  expect_error(unpack_bad_axis, "axis must be in 0..0");
  expect_error(unpack_bad_zero, "unpack: zero must be a 4-bit field value, 0..15, got 16");
  expect_error(unpack_unsigned_zero, "the element type must be signed or a float, got u8");
  expect_error(bitcast_width, "bitcast: f32 is 32 bits but u16 is 16");
}
