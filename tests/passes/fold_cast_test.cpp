// canonicalize: casts, splats, broadcasts and tile constants fold.
#include <cmath>
#include <limits>

#include "pass_test_util.hpp"
#include "tessel/ir/verify.hpp"

using namespace passtest;

namespace {

// cast of a constant of `from` holding `v` to `to`; returns the folded attribute, if any.
std::optional<std::variant<int64_t, double>> cast_const(std::variant<int64_t, double> v, Scalar from, Scalar to) {
  Kernel k;
  Value* c = std::holds_alternative<int64_t>(v) ? k.c_int(std::get<int64_t>(v), from)
                                               : k.c_float(std::get<double>(v), from);
  Op& st = k.sink(k.b.cast(c, dt(to)));
  canonicalize(k.f);
  const Op* def = constant_of(stored(st));
  if (!def) return std::nullopt;
  CHECK(stored(st)->type == scalar_t(to));
  return def->find_attr("value")->value;
}

using V = std::variant<int64_t, double>;

}  // namespace

TEST_CASE("int to int casts sign-extend and wrap") {
  CHECK(cast_const(V{int64_t{-5}}, Scalar::i8, Scalar::i32) == V{int64_t{-5}});
  CHECK(cast_const(V{int64_t{300}}, Scalar::i32, Scalar::i8) == V{int64_t{44}});
  CHECK(cast_const(V{int64_t{200}}, Scalar::i32, Scalar::i8) == V{int64_t{-56}});
  CHECK(cast_const(V{int64_t{-1}}, Scalar::i64, Scalar::i16) == V{int64_t{-1}});
  CHECK(cast_const(V{int64_t{0x123456789}}, Scalar::i64, Scalar::i32) == V{int64_t{0x23456789}});
  for (int i = 0; i < 50; ++i) {
    int64_t v = random_int(64);
    CHECK(cast_const(V{v}, Scalar::i64, Scalar::i32) == V{int64_t{static_cast<int32_t>(static_cast<uint32_t>(v))}});
  }
  // Booleans widen as 0/1; narrowing to i1 folds only 0 and 1 (is it "& 1" or "!= 0"?).
  CHECK(cast_const(V{int64_t{1}}, Scalar::i1, Scalar::i32) == V{int64_t{1}});
  CHECK(cast_const(V{int64_t{1}}, Scalar::i32, Scalar::i1) == V{int64_t{1}});
  CHECK_FALSE(cast_const(V{int64_t{6}}, Scalar::i32, Scalar::i1));
}

TEST_CASE("int to float casts round to the dtype") {
  CHECK(cast_const(V{int64_t{16777217}}, Scalar::i32, Scalar::f32) == V{16777216.0});
  CHECK(cast_const(V{int64_t{16777217}}, Scalar::i32, Scalar::f64) == V{16777217.0});
  CHECK(cast_const(V{int64_t{-37}}, Scalar::i8, Scalar::f32) == V{-37.0});
  CHECK(cast_const(V{int64_t{1}}, Scalar::i1, Scalar::f32) == V{1.0});
  CHECK(cast_const(V{int64_t{2048}}, Scalar::i32, Scalar::f16) == V{2048.0});
  CHECK_FALSE(cast_const(V{int64_t{2049}}, Scalar::i32, Scalar::f16));  // f16 would round
  for (int i = 0; i < 50; ++i) {
    int64_t v = random_int(64);
    CHECK(cast_const(V{v}, Scalar::i64, Scalar::f32) == V{static_cast<double>(static_cast<float>(v))});
  }
}

TEST_CASE("float to int casts truncate toward zero, in range only") {
  CHECK(cast_const(V{-2.7}, Scalar::f32, Scalar::i32) == V{int64_t{-2}});
  CHECK(cast_const(V{2.7}, Scalar::f64, Scalar::i32) == V{int64_t{2}});
  CHECK(cast_const(V{-128.9}, Scalar::f32, Scalar::i8) == V{int64_t{-128}});
  CHECK_FALSE(cast_const(V{3e9}, Scalar::f32, Scalar::i32));
  CHECK_FALSE(cast_const(V{128.0}, Scalar::f32, Scalar::i8));
  CHECK_FALSE(cast_const(V{std::numeric_limits<double>::infinity()}, Scalar::f32, Scalar::i64));
  CHECK_FALSE(cast_const(V{std::numeric_limits<double>::quiet_NaN()}, Scalar::f32, Scalar::i32));
  CHECK(cast_const(V{1.0}, Scalar::f32, Scalar::i1) == V{int64_t{1}});
  CHECK_FALSE(cast_const(V{0.5}, Scalar::f32, Scalar::i1));
}

TEST_CASE("float to float casts round once, and only exactly to f16/bf16") {
  CHECK(cast_const(V{0.1}, Scalar::f64, Scalar::f32) == V{static_cast<double>(0.1f)});
  CHECK(cast_const(V{0.1}, Scalar::f32, Scalar::f64) == V{static_cast<double>(0.1f)});
  CHECK(cast_const(V{-6.5}, Scalar::f32, Scalar::f16) == V{-6.5});
  CHECK(cast_const(V{-6.5}, Scalar::f32, Scalar::bf16) == V{-6.5});
  CHECK(cast_const(V{1.75}, Scalar::f16, Scalar::f32) == V{1.75});
  CHECK_FALSE(cast_const(V{0.1}, Scalar::f32, Scalar::f16));
  CHECK_FALSE(cast_const(V{65536.0}, Scalar::f32, Scalar::f16));
  CHECK_FALSE(cast_const(V{1.0 + std::ldexp(1.0, -9)}, Scalar::f32, Scalar::bf16));
  CHECK(cast_const(V{std::ldexp(1.0, -24)}, Scalar::f32, Scalar::f16) == V{std::ldexp(1.0, -24)});  // subnormal
  CHECK_FALSE(cast_const(V{std::ldexp(1.0, -25)}, Scalar::f32, Scalar::f16));
}

TEST_CASE("splat, broadcast and expand_dims of constants become tile constants") {
  Kernel k;
  Value* s = k.b.splat(k.c_float(2.5, Scalar::f32), {2, 8});
  Value* e = k.b.expand_dims(s, 0);                          // f32[1,2,8]
  Value* bc = k.b.broadcast(e, {4, 2, 8});
  Op& st = k.sink(bc);
  Op& st2 = k.sink(k.b.broadcast(k.c_int(-7, Scalar::i16, {1, 32}), {16, 32}));
  CHECK(canonicalize(k.f));
  CHECK_NOTHROW(verify(k.f));
  CHECK(folded_float(stored(st)) == 2.5);
  CHECK(stored(st)->type == tile_t(Scalar::f32, {4, 2, 8}));
  CHECK(folded_int(stored(st2)) == -7);
  CHECK(stored(st2)->type == tile_t(Scalar::i16, {16, 32}));
}

TEST_CASE("ops on tile constants fold elementwise, keeping the tile type") {
  Kernel k;
  Value* a = k.c_int(100000, Scalar::i32, {4, 16});
  Value* b = k.c_int(50000, Scalar::i32, {4, 16});
  Op& mul = k.sink(k.op(OpKind::Mul, {a, b}));
  Op& lt = k.sink(k.op(OpKind::CmpLt, {b, a}));
  Value* fa = k.b.splat(k.c_float(1.25, Scalar::f32), {64});
  Op& fl = k.sink(k.op(OpKind::Sub, {fa, k.c_float(0.5, Scalar::f32, {64})}));
  Op& one = k.sink(k.b.arange(5, 6));
  canonicalize(k.f);
  CHECK_NOTHROW(verify(k.f));
  CHECK(folded_int(stored(mul)) == static_cast<int32_t>(static_cast<uint32_t>(5000000000ull)));
  CHECK(stored(mul)->type == tile_t(Scalar::i32, {4, 16}));
  CHECK(folded_int(stored(lt)) == 1);
  CHECK(stored(lt)->type == tile_t(Scalar::i1, {4, 16}));
  CHECK(folded_float(stored(fl)) == 0.75);
  CHECK(folded_int(stored(one)) == 5);
  CHECK(stored(one)->type == tile_t(Scalar::i32, {1}));
}

TEST_CASE("folding chains reach a fixpoint and leave clean IR") {
  Kernel k;
  Value* x = k.param("x", scalar_t(Scalar::i32));
  Value* c = k.op(OpKind::Add, {k.c_int(2, Scalar::i32), k.c_int(3, Scalar::i32)});  // 5
  Value* d = k.op(OpKind::Mul, {c, k.c_int(4, Scalar::i32)});                        // 20
  Value* z = k.op(OpKind::Sub, {d, k.c_int(20, Scalar::i32)});                        // 0
  Value* y = k.op(OpKind::Add, {x, z});                                               // x
  Value* w = k.op(OpKind::Mul, {y, k.op(OpKind::Sub, {c, k.c_int(4, Scalar::i32)})}); // x * 1
  Op& st = k.sink(w);
  CHECK(canonicalize(k.f));
  CHECK(stored(st) == x);
  CHECK_FALSE(canonicalize(k.f));  // already at the fixpoint
  dce(k.f);
  CHECK(k.text() ==
        "kernel @k(%x: i32, %out0: ptr<i32>) {\n"
        "  store %out0, %x\n"
        "}\n");
}

TEST_CASE("integer parameters specialised equal1 fold as the constant 1") {
  Kernel k;
  Value* n = k.f.add_param("n", scalar_t(Scalar::i32), ParamSpec{false, true});
  Value* m = k.f.add_param("m", scalar_t(Scalar::i32), ParamSpec{true, false});
  Value* stride = k.f.add_param("stride", scalar_t(Scalar::i64), ParamSpec{true, true});
  Op& a = k.sink(k.op(OpKind::Mul, {m, n}));                           // m * 1
  Op& b = k.sink(k.op(OpKind::Add, {stride, k.c_int(41, Scalar::i64)}));  // 1 + 41
  CHECK(canonicalize(k.f));
  CHECK_NOTHROW(verify(k.f));
  CHECK(stored(a) == m);
  CHECK(folded_int(stored(b)) == 42);
  CHECK_FALSE(canonicalize(k.f));  // the parameters have no uses left: nothing more to do
  dce(k.f);
  CHECK(k.text() ==
        "kernel @k(%n: i32 {equal1}, %m: i32 {div16}, %stride: i64 {div16, equal1}, %out0: ptr<i32>, "
        "%out1: ptr<i64>) {\n"
        "  store %out0, %m\n"
        "  %0 = constant {value = 42} : i64\n"
        "  store %out1, %0\n"
        "}\n");
}
