// canonicalize: algebraic identities that hold for every input, and the ones that do not.
#include <cmath>

#include "pass_test_util.hpp"
#include "tessel/ir/verify.hpp"

using namespace passtest;

namespace {

// `x OP c` (or `c OP x` when const_first) over a parameter x; what the result became.
struct Probe {
  Kernel k;
  Value* x;
  Op* st = nullptr;
  explicit Probe(Type t) { x = k.param("x", t); }
  Value* result() const { return stored(*st); }
};

Value* binary_with(Probe& p, OpKind kind, Value* c, bool const_first) {
  Value* r = const_first ? p.k.op(kind, {c, p.x}) : p.k.op(kind, {p.x, c});
  p.st = &p.k.sink(r);
  canonicalize(p.k.f);
  return p.result();
}

Value* int_identity(OpKind kind, int64_t c, bool const_first = false, Type t = scalar_t(Scalar::i32)) {
  static std::vector<std::unique_ptr<Probe>> keep;  // results point into the kernel
  keep.push_back(std::make_unique<Probe>(t));
  Probe& p = *keep.back();
  Value* got = binary_with(p, kind, p.k.b.const_int(c, Type{t.dtype, t.shape}), const_first);
  return got == p.x ? nullptr : got;  // null: folded to x
}

Value* float_identity(OpKind kind, double c, bool const_first = false) {
  static std::vector<std::unique_ptr<Probe>> keep;
  keep.push_back(std::make_unique<Probe>(scalar_t(Scalar::f32)));
  Probe& p = *keep.back();
  Value* got = binary_with(p, kind, p.k.c_float(c, Scalar::f32), const_first);
  return got == p.x ? nullptr : got;
}

bool is_op(const Value* v, OpKind k) { return v && v->def && v->def->kind == k; }

}  // namespace

TEST_CASE("integer identities forward x") {
  CHECK(int_identity(OpKind::Add, 0) == nullptr);
  CHECK(int_identity(OpKind::Add, 0, true) == nullptr);
  CHECK(int_identity(OpKind::Sub, 0) == nullptr);
  CHECK(int_identity(OpKind::Mul, 1) == nullptr);
  CHECK(int_identity(OpKind::Mul, 1, true) == nullptr);
  CHECK(int_identity(OpKind::Div, 1) == nullptr);
  CHECK(int_identity(OpKind::And, -1) == nullptr);
  CHECK(int_identity(OpKind::And, -1, true) == nullptr);
  CHECK(int_identity(OpKind::Or, 0) == nullptr);
  CHECK(int_identity(OpKind::Or, 0, true) == nullptr);
  CHECK(int_identity(OpKind::Xor, 0) == nullptr);
  CHECK(int_identity(OpKind::Shl, 0) == nullptr);
  CHECK(int_identity(OpKind::Shr, 0) == nullptr);
  // Booleans: all-ones is 1.
  CHECK(int_identity(OpKind::And, 1, false, scalar_t(Scalar::i1)) == nullptr);
  // Tiles behave like scalars.
  CHECK(int_identity(OpKind::Add, 0, true, tile_t(Scalar::i32, {2, 64})) == nullptr);
  // Not identities: these stay ops.
  CHECK(is_op(int_identity(OpKind::Sub, 0, true), OpKind::Sub));   // 0 - x
  CHECK(is_op(int_identity(OpKind::Div, 1, true), OpKind::Div));   // 1 / x
  CHECK(is_op(int_identity(OpKind::Add, 3), OpKind::Add));
  CHECK(is_op(int_identity(OpKind::And, 0xFF), OpKind::And));
}

TEST_CASE("integer identities that produce constants") {
  CHECK(folded_int(int_identity(OpKind::Mul, 0)) == 0);
  CHECK(folded_int(int_identity(OpKind::Mul, 0, true)) == 0);
  CHECK(folded_int(int_identity(OpKind::And, 0)) == 0);
  CHECK(folded_int(int_identity(OpKind::Or, -1, true)) == -1);
  CHECK(folded_int(int_identity(OpKind::Or, 1, false, scalar_t(Scalar::i1))) == 1);
  CHECK(folded_int(int_identity(OpKind::Rem, 1)) == 0);
  Value* tile = int_identity(OpKind::Mul, 0, false, tile_t(Scalar::i8, {8, 4}));
  CHECK(folded_int(tile) == 0);
  CHECK(tile->type == tile_t(Scalar::i8, {8, 4}));
}

TEST_CASE("float identities are only the ones NaN and -0.0 allow") {
  CHECK(float_identity(OpKind::Mul, 1.0) == nullptr);
  CHECK(float_identity(OpKind::Mul, 1.0, true) == nullptr);
  CHECK(float_identity(OpKind::Div, 1.0) == nullptr);
  CHECK(float_identity(OpKind::Sub, 0.0) == nullptr);          // x - 0.0 == x, even for -0.0
  CHECK(float_identity(OpKind::Add, -0.0) == nullptr);         // x + -0.0 == x
  CHECK(float_identity(OpKind::Add, -0.0, true) == nullptr);
  // x + 0.0 turns -0.0 into +0.0; x * 0.0 is NaN for inf/NaN and -0.0 for negatives.
  CHECK(is_op(float_identity(OpKind::Add, 0.0), OpKind::Add));
  CHECK(is_op(float_identity(OpKind::Add, 0.0, true), OpKind::Add));
  CHECK(is_op(float_identity(OpKind::Sub, -0.0), OpKind::Sub));
  CHECK(is_op(float_identity(OpKind::Mul, 0.0), OpKind::Mul));
  CHECK(is_op(float_identity(OpKind::Mul, 0.0, true), OpKind::Mul));
  CHECK(is_op(float_identity(OpKind::Mul, 2.0), OpKind::Mul));
}

TEST_CASE("self identities: x - x, x ^ x, min(x, x), comparisons of x with itself") {
  Kernel k;
  Value* x = k.param("x", tile_t(Scalar::i32, {16}));
  Value* fx = k.param("fx", tile_t(Scalar::f32, {16}));
  Op& sub = k.sink(k.op(OpKind::Sub, {x, x}));
  Op& xr = k.sink(k.op(OpKind::Xor, {x, x}));
  Op& an = k.sink(k.op(OpKind::And, {x, x}));
  Op& mn = k.sink(k.op(OpKind::Min, {fx, fx}));
  Op& eq = k.sink(k.op(OpKind::CmpEq, {x, x}));
  Op& lt = k.sink(k.op(OpKind::CmpLt, {x, x}));
  Op& feq = k.sink(k.op(OpKind::CmpEq, {fx, fx}));  // NaN != NaN: must stay
  Op& fsub = k.sink(k.op(OpKind::Sub, {fx, fx}));   // inf - inf is NaN: must stay
  canonicalize(k.f);
  CHECK(folded_int(stored(sub)) == 0);
  CHECK(folded_int(stored(xr)) == 0);
  CHECK(stored(an) == x);
  CHECK(stored(mn) == fx);
  CHECK(folded_int(stored(eq)) == 1);
  CHECK(stored(eq)->type == tile_t(Scalar::i1, {16}));
  CHECK(folded_int(stored(lt)) == 0);
  CHECK(is_op(stored(feq), OpKind::CmpEq));
  CHECK(is_op(stored(fsub), OpKind::Sub));
}

TEST_CASE("select, cast, broadcast, double negation and addptr identities") {
  Kernel k;
  Value* a = k.param("a", tile_t(Scalar::f32, {32}));
  Value* b = k.param("b", tile_t(Scalar::f32, {32}));
  Value* c = k.param("c", tile_t(Scalar::i1, {32}));
  Value* n = k.param("n", scalar_t(Scalar::i32));
  Value* p = k.param("p", tile_t(Scalar::f32, {32}).with_dtype(dt(Scalar::f32).pointer_to()));
  Op& s_true = k.sink(k.b.value(OpKind::Select, {k.c_int(1, Scalar::i1, {32}), a, b}));
  Op& s_false = k.sink(k.b.value(OpKind::Select, {k.c_int(0, Scalar::i1, {32}), a, b}));
  Op& s_same = k.sink(k.b.value(OpKind::Select, {c, b, b}));
  Op& s_kept = k.sink(k.b.value(OpKind::Select, {c, a, b}));
  Op& cast = k.sink(k.b.cast(n, dt(Scalar::i32)));
  Op& cast_kept = k.sink(k.b.cast(n, dt(Scalar::i64)));
  Op& bc = k.sink(k.b.broadcast(a, {32}));
  Op& negneg = k.sink(k.op(OpKind::Neg, {k.op(OpKind::Neg, {n})}));
  Op& notnot = k.sink(k.op(OpKind::Not, {k.op(OpKind::Not, {c})}));
  Op& ap = k.b.create(OpKind::Store, {k.b.value(OpKind::AddPtr, {p, k.c_int(0, Scalar::i32, {32})}), a});
  canonicalize(k.f);
  CHECK_NOTHROW(verify(k.f));
  CHECK(stored(s_true) == a);
  CHECK(stored(s_false) == b);
  CHECK(stored(s_same) == b);
  CHECK(is_op(stored(s_kept), OpKind::Select));
  CHECK(stored(cast) == n);
  CHECK(is_op(stored(cast_kept), OpKind::Cast));
  CHECK(stored(bc) == a);
  CHECK(stored(negneg) == n);
  CHECK(stored(notnot) == c);
  CHECK(ap.operands[0] == p);
}

TEST_CASE("elementwise ops over splats move to scalars") {
  Kernel k;
  Value* n = k.param("n", scalar_t(Scalar::i32));
  Value* m = k.param("m", scalar_t(Scalar::i32));
  Value* sum = k.op(OpKind::Add, {k.b.splat(n, {4, 32}), k.b.splat(m, {4, 32})});
  Value* scaled = k.op(OpKind::Mul, {sum, k.c_int(3, Scalar::i32, {4, 32})});
  k.sink(scaled);
  Value* row = k.b.broadcast(k.b.expand_dims(k.b.splat(n, {8}), 0), {2, 8});
  k.sink(row);
  CHECK(canonicalize(k.f));
  CHECK_NOTHROW(verify(k.f));
  dce(k.f);
  CHECK(k.text() ==
        "kernel @k(%n: i32, %m: i32, %out0: ptr<i32>, %out1: ptr<i32>) {\n"
        "  %0 = add %n, %m : i32\n"
        "  %1 = constant {value = 3} : i32\n"
        "  %2 = mul %0, %1 : i32\n"
        "  %3 = splat %2 : i32[4,32]\n"
        "  %4 = splat %out0 : ptr<i32>[4,32]\n"
        "  store %4, %3\n"
        "  %5 = splat %n : i32[2,8]\n"
        "  %6 = splat %out1 : ptr<i32>[2,8]\n"
        "  store %6, %5\n"
        "}\n");
}

TEST_CASE("canonicalize reports no change on IR it cannot improve") {
  Kernel k;
  Value* x = k.param("x", tile_t(Scalar::f32, {8, 8}));
  Value* e = k.op(OpKind::Exp, {x});
  k.sink(k.op(OpKind::Add, {e, x}));
  std::string before = k.text();
  CHECK_FALSE(canonicalize(k.f));
  CHECK(k.text() == before);
}
