// canonicalize: constant folding and safe algebraic identities on the tile IR, to a fixpoint.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <unordered_set>

#include "tessel/ir/passes.hpp"

namespace tessel::ir {
namespace {

using AttrValue = std::variant<int64_t, double>;

// ---- integer arithmetic -------------------------------------------------------------
// Integer constants are kept sign-extended to their width (iN are signed two's complement),
// zero-extended for uN (u64: its bit pattern); i1 is a boolean and keeps only bit 0, so true is 1.
// Folds that read an order (div, rem, min, max, shr, compares, casts to float) fold only
// non-negative slots, where signed and unsigned readings agree.

int64_t wrap_int(uint64_t v, Scalar s) {
  int bits = bit_width(s);
  if (is_unsigned(s) && bits < 64) return static_cast<int64_t>(v & ((uint64_t{1} << bits) - 1));
  if (bits == 1) return static_cast<int64_t>(v & 1);
  if (bits >= 64) return static_cast<int64_t>(v);
  uint64_t sign = uint64_t{1} << (bits - 1);
  v &= (sign << 1) - 1;
  return static_cast<int64_t>((v ^ sign) - sign);  // sign-extends through unsigned wrap
}

int64_t all_ones(Scalar s) { return bit_width(s) == 1 ? 1 : -1; }

std::optional<int64_t> fold_int_binary(OpKind k, Scalar s, int64_t a, int64_t b) {
  uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  int bits = bit_width(s);
  bool boolean = bits == 1;  // signedness of i1 is not a question worth answering here
  switch (k) {
    case OpKind::Add: return wrap_int(ua + ub, s);
    case OpKind::Sub: return wrap_int(ua - ub, s);
    case OpKind::Mul: return wrap_int(ua * ub, s);
    // Truncating and flooring division agree on non-negative operands; that also keeps
    // division by zero and INT_MIN / -1 out.
    case OpKind::Div:
      if (boolean || a < 0 || b <= 0) return std::nullopt;
      return a / b;
    case OpKind::Rem:
      if (boolean || a < 0 || b <= 0) return std::nullopt;
      return a % b;
    case OpKind::Min:
      if (boolean || (is_unsigned(s) && (a < 0 || b < 0))) return std::nullopt;
      return std::min(a, b);
    case OpKind::Max:
      if (boolean || (is_unsigned(s) && (a < 0 || b < 0))) return std::nullopt;
      return std::max(a, b);
    case OpKind::And: return wrap_int(ua & ub, s);
    case OpKind::Or: return wrap_int(ua | ub, s);
    case OpKind::Xor: return wrap_int(ua ^ ub, s);
    // Out-of-range shift amounts are target-defined; arithmetic and logical right shifts
    // agree on non-negative values.
    case OpKind::Shl:
      if (boolean || b < 0 || b >= bits) return std::nullopt;
      return wrap_int(ua << b, s);
    case OpKind::Shr:
      if (boolean || a < 0 || b < 0 || b >= bits) return std::nullopt;
      return a >> b;
    default: return std::nullopt;
  }
}

std::optional<bool> fold_int_compare(OpKind k, Scalar s, int64_t a, int64_t b) {
  if (k == OpKind::CmpEq) return a == b;
  if (k == OpKind::CmpNe) return a != b;
  if (bit_width(s) == 1) return std::nullopt;  // ordering of booleans: signed or not?
  if (is_unsigned(s) && (a < 0 || b < 0)) return std::nullopt;  // u64 patterns of 2^63 and up
  switch (k) {
    case OpKind::CmpLt: return a < b;
    case OpKind::CmpLe: return a <= b;
    case OpKind::CmpGt: return a > b;
    case OpKind::CmpGe: return a >= b;
    default: return std::nullopt;
  }
}

std::optional<int64_t> fold_int_unary(OpKind k, Scalar s, int64_t a) {
  uint64_t ua = static_cast<uint64_t>(a);
  switch (k) {
    case OpKind::Neg: return wrap_int(0 - ua, s);
    case OpKind::Abs:
      if (is_unsigned(s)) return a;                 // abs of an unsigned value is the value
      return a < 0 ? wrap_int(0 - ua, s) : a;       // abs(INT_MIN) wraps to INT_MIN
    case OpKind::Not: return wrap_int(~ua, s);
    default: return std::nullopt;
  }
}

// ---- float arithmetic ---------------------------------------------------------------
// f32 folds round through float and f64 through double, exactly as the target computes.
// f16 and bf16 fold only when the exact result is representable, so no rounding rule of
// ours can disagree with the target's.

bool representable(double d, Scalar s) {
  if (std::isnan(d)) return false;
  if (std::isinf(d) || d == 0) return true;
  switch (s) {
    case Scalar::f64: return true;
    case Scalar::f32: return static_cast<double>(static_cast<float>(d)) == d;
    case Scalar::bf16: {
      float f = static_cast<float>(d);
      if (static_cast<double>(f) != d || std::isinf(f)) return false;
      uint32_t bits;
      std::memcpy(&bits, &f, sizeof bits);
      return (bits & 0xFFFFu) == 0;  // bf16 is the top half of an f32
    }
    case Scalar::f16: {
      if (std::fabs(d) > 65504.0) return false;
      int e;
      std::frexp(d, &e);                      // |d| in [2^(e-1), 2^e)
      int ulp_exp = std::max(e - 11, -24);    // 11 significant bits; subnormal step 2^-24
      double scaled = std::ldexp(d, -ulp_exp);
      return std::trunc(scaled) == scaled;
    }
    default: return false;
  }
}

// Exact error-free checks for f16/bf16 results computed in double.
bool exact_sum(double a, double b, double s) {
  double bb = s - a;
  double err = (a - (s - bb)) + (b - bb);  // two-sum: the exact rounding error of a + b
  return err == 0;
}

std::optional<double> fold_float_binary(OpKind k, Scalar s, double a, double b) {
  if (k == OpKind::Div && b == 0) return std::nullopt;
  // min/max of NaN or of zeros of either sign differ between min conventions.
  if ((k == OpKind::Min || k == OpKind::Max) && a == 0 && b == 0) return std::nullopt;
  double r;
  if (s == Scalar::f32) {
    float x = static_cast<float>(a), y = static_cast<float>(b), t;
    switch (k) {
      case OpKind::Add: t = x + y; break;
      case OpKind::Sub: t = x - y; break;
      case OpKind::Mul: t = x * y; break;
      case OpKind::Div: t = x / y; break;
      case OpKind::Min: t = std::min(x, y); break;
      case OpKind::Max: t = std::max(x, y); break;
      default: return std::nullopt;
    }
    r = t;
  } else if (s == Scalar::f64) {
    switch (k) {
      case OpKind::Add: r = a + b; break;
      case OpKind::Sub: r = a - b; break;
      case OpKind::Mul: r = a * b; break;
      case OpKind::Div: r = a / b; break;
      case OpKind::Min: r = std::min(a, b); break;
      case OpKind::Max: r = std::max(a, b); break;
      default: return std::nullopt;
    }
  } else {
    switch (k) {
      case OpKind::Add: r = a + b; if (!exact_sum(a, b, r)) return std::nullopt; break;
      case OpKind::Sub: r = a - b; if (!exact_sum(a, -b, r)) return std::nullopt; break;
      case OpKind::Mul: r = a * b; if (std::fma(a, b, -r) != 0) return std::nullopt; break;
      case OpKind::Div: r = a / b; if (std::fma(r, b, -a) != 0) return std::nullopt; break;
      case OpKind::Min: r = std::min(a, b); break;
      case OpKind::Max: r = std::max(a, b); break;
      default: return std::nullopt;
    }
    if (!representable(r, s)) return std::nullopt;
  }
  if (std::isnan(r)) return std::nullopt;
  return r;
}

std::optional<bool> fold_float_compare(OpKind k, double a, double b) {
  // Operands are never NaN here (float_const refuses them): ordered and unordered
  // predicates would disagree.
  switch (k) {
    case OpKind::CmpEq: return a == b;
    case OpKind::CmpNe: return a != b;
    case OpKind::CmpLt: return a < b;
    case OpKind::CmpLe: return a <= b;
    case OpKind::CmpGt: return a > b;
    case OpKind::CmpGe: return a >= b;
    default: return std::nullopt;
  }
}

// Only exact operations: transcendental functions (and sqrt, often approximated on GPUs)
// would bake in the host libm's rounding.
std::optional<double> fold_float_unary(OpKind k, double a) {
  switch (k) {
    case OpKind::Neg: return -a;
    case OpKind::Abs: return std::fabs(a);
    case OpKind::Floor: return std::floor(a);
    case OpKind::Ceil: return std::ceil(a);
    default: return std::nullopt;
  }
}

std::optional<double> fold_float_fma(Scalar s, double a, double b, double c) {
  double r;
  if (s == Scalar::f32) {
    r = std::fma(static_cast<float>(a), static_cast<float>(b), static_cast<float>(c));
  } else if (s == Scalar::f64) {
    r = std::fma(a, b, c);
  } else {
    return std::nullopt;
  }
  if (std::isnan(r)) return std::nullopt;
  return r;
}

// ---- casts --------------------------------------------------------------------------

// int or bool -> int or float. Booleans widen as 0/1 (true is 1, as the boolean it is).
std::optional<AttrValue> cast_from_int(int64_t v, DType to) {
  if (to.is_int()) {
    // Narrowing to i1 is "!= 0" in some front ends and "& 1" in others; fold only 0 and 1.
    if (to.is_bool()) {
      if (v != 0 && v != 1) return std::nullopt;
      return AttrValue{v};
    }
    return AttrValue{wrap_int(static_cast<uint64_t>(v), to.scalar)};
  }
  switch (to.scalar) {
    case Scalar::f64: return AttrValue{static_cast<double>(v)};
    case Scalar::f32: return AttrValue{static_cast<double>(static_cast<float>(v))};
    default: {
      double d = static_cast<double>(v);
      if (std::fabs(d) >= 0x1p53 || !representable(d, to.scalar)) return std::nullopt;
      return AttrValue{d};
    }
  }
}

std::optional<AttrValue> cast_from_float(double v, DType to) {
  if (std::isnan(v)) return std::nullopt;
  if (to.is_int()) {
    if (to.is_bool()) {  // only the values every convention agrees on
      if (v == 0) return AttrValue{int64_t{0}};
      if (v == 1) return AttrValue{int64_t{1}};
      return std::nullopt;
    }
    double t = std::trunc(v);  // float -> int rounds toward zero
    if (to.is_unsigned()) {
      if (!(t >= 0 && t < std::ldexp(1.0, bit_width(to.scalar)))) return std::nullopt;
      return AttrValue{wrap_int(static_cast<uint64_t>(t), to.scalar)};
    }
    double lim = std::ldexp(1.0, bit_width(to.scalar) - 1);
    if (!(t >= -lim && t < lim)) return std::nullopt;  // out of range: undefined on targets
    return AttrValue{static_cast<int64_t>(t)};
  }
  switch (to.scalar) {
    case Scalar::f64: return AttrValue{v};
    case Scalar::f32: return AttrValue{static_cast<double>(static_cast<float>(v))};
    default:
      if (!representable(v, to.scalar)) return std::nullopt;
      return AttrValue{v};
  }
}

// ---- reading constants --------------------------------------------------------------

const Op* constant_def(const Value* v) {
  if (!v->def || v->def->kind != OpKind::Constant || !v->def->has_attr("value")) return nullptr;
  return v->def;
}

std::optional<int64_t> int_const(const Value* v) {
  const Op* d = constant_def(v);
  if (!d || !v->type.dtype.is_int()) return std::nullopt;
  auto* i = std::get_if<int64_t>(&d->find_attr("value")->value);
  if (!i) return std::nullopt;
  return wrap_int(static_cast<uint64_t>(*i), v->type.dtype.scalar);
}

// The value the target materialises: f32 rounds the attribute through float; f16/bf16
// attributes that are not exactly representable are left alone (we do not round them).
std::optional<double> float_const(const Value* v) {
  const Op* d = constant_def(v);
  if (!d || !v->type.dtype.is_float()) return std::nullopt;
  double x = d->float_attr("value");
  if (std::isnan(x)) return std::nullopt;
  Scalar s = v->type.dtype.scalar;
  if (s == Scalar::f32) return static_cast<double>(static_cast<float>(x));
  if (s == Scalar::f64) return x;
  if (!representable(x, s)) return std::nullopt;
  return x;
}

bool is_int_const(const Value* v, int64_t want) {
  auto c = int_const(v);
  return c && *c == want;
}

bool is_float_const(const Value* v, double want, bool negative_zero = false) {
  auto c = float_const(v);
  return c && *c == want && std::signbit(*c) == negative_zero;
}

// ---- the rewriter -------------------------------------------------------------------

// What an op simplifies to: another value (forward uses to it) or a constant of its type.
struct Simplified {
  Value* forward = nullptr;
  std::optional<AttrValue> constant;
};

Simplified to_const(AttrValue v) { return Simplified{nullptr, v}; }
Simplified to_value(Value* v) { return Simplified{v, std::nullopt}; }

std::optional<AttrValue> fold_cast(const Op& op) {
  const Value* x = op.operand(0);
  DType to = op.result()->type.dtype;
  if (to.ptr || x->type.dtype.ptr) return std::nullopt;
  if (auto i = int_const(x)) {
    if (x->type.dtype.is_unsigned() && *i < 0) return std::nullopt;  // a u64 of 2^63 or more
    return cast_from_int(*i, to);
  }
  if (auto d = float_const(x)) return cast_from_float(*d, to);
  return std::nullopt;
}

// Reductions of a constant tile: every element is the same value c. max/min give c (NaN
// included), arg reductions give index 0 (ties go to the smallest index), an integer sum
// is c * n wrapped. Float sums are left alone: the rounding of n additions is not c * n.
std::optional<AttrValue> fold_reduction(const Op& op) {
  const Op* c = constant_def(op.operand(0));
  if (!c) return std::nullopt;
  switch (op.kind) {
    case OpKind::ReduceMax:
    case OpKind::ReduceMin: return c->find_attr("value")->value;
    case OpKind::ArgMax:
    case OpKind::ArgMin: return AttrValue{int64_t{0}};
    case OpKind::ReduceSum: {
      auto i = int_const(op.operand(0));
      if (!i) return std::nullopt;
      const Type& t = op.operand(0)->type;
      int64_t axis = op.int_attr("axis");
      if (axis < 0 || axis >= t.rank()) return std::nullopt;  // malformed; the verifier says so
      uint64_t n = static_cast<uint64_t>(t.shape[axis]);
      return AttrValue{wrap_int(static_cast<uint64_t>(*i) * n, t.dtype.scalar)};
    }
    default: return std::nullopt;
  }
}

// Folds an op whose operands are all constants.
std::optional<AttrValue> fold(const Op& op) {
  switch (op.info().rule) {
    case Rule::Reduce:
    case Rule::ArgReduce: return fold_reduction(op);
    case Rule::Splat:
    case Rule::Broadcast:
    case Rule::ExpandDims:
    case Rule::Reshape:
    case Rule::Trans:
      // A constant is "every element equals the value": only the shape changes.
      if (const Op* c = constant_def(op.operand(0))) return c->find_attr("value")->value;
      return std::nullopt;
    case Rule::Arange: {
      int64_t start = op.int_attr("start");
      if (op.int_attr("end") - start == 1) return AttrValue{start};
      return std::nullopt;
    }
    case Rule::Cast: return fold_cast(op);
    case Rule::Arith:
    case Rule::Bitwise: {
      Scalar s = op.operand(0)->type.dtype.scalar;
      auto ia = int_const(op.operand(0)), ib = int_const(op.operand(1));
      if (ia && ib) {
        if (auto r = fold_int_binary(op.kind, s, *ia, *ib)) return AttrValue{*r};
        return std::nullopt;
      }
      auto fa = float_const(op.operand(0)), fb = float_const(op.operand(1));
      if (fa && fb)
        if (auto r = fold_float_binary(op.kind, s, *fa, *fb)) return AttrValue{*r};
      return std::nullopt;
    }
    case Rule::Compare: {
      Scalar s = op.operand(0)->type.dtype.scalar;
      std::optional<bool> r;
      auto ia = int_const(op.operand(0)), ib = int_const(op.operand(1));
      auto fa = float_const(op.operand(0)), fb = float_const(op.operand(1));
      if (ia && ib) r = fold_int_compare(op.kind, s, *ia, *ib);
      else if (fa && fb) r = fold_float_compare(op.kind, *fa, *fb);
      if (r) return AttrValue{int64_t{*r ? 1 : 0}};
      return std::nullopt;
    }
    case Rule::UnaryNumeric:
    case Rule::UnaryInt:
    case Rule::UnaryFloat: {
      Scalar s = op.operand(0)->type.dtype.scalar;
      if (auto i = int_const(op.operand(0)))
        if (auto r = fold_int_unary(op.kind, s, *i)) return AttrValue{*r};
      if (auto d = float_const(op.operand(0)))
        if (auto r = fold_float_unary(op.kind, *d)) return AttrValue{*r};
      return std::nullopt;
    }
    case Rule::Fma: {
      Scalar s = op.operand(0)->type.dtype.scalar;
      auto ia = int_const(op.operand(0)), ib = int_const(op.operand(1)), ic = int_const(op.operand(2));
      if (ia && ib && ic) {
        uint64_t r = static_cast<uint64_t>(*ia) * static_cast<uint64_t>(*ib) + static_cast<uint64_t>(*ic);
        return AttrValue{wrap_int(r, s)};
      }
      auto fa = float_const(op.operand(0)), fb = float_const(op.operand(1)), fc = float_const(op.operand(2));
      if (fa && fb && fc)
        if (auto r = fold_float_fma(s, *fa, *fb, *fc)) return AttrValue{*r};
      return std::nullopt;
    }
    default: return std::nullopt;
  }
}

// Algebraic identities that hold for every input, NaN and signed zero included.
std::optional<Simplified> simplify(const Op& op) {
  if (op.operands.empty()) return std::nullopt;
  const auto& x = op.operands;
  const DType dt = op.operand(0)->type.dtype;
  const bool ints = dt.is_int();
  const bool floats = dt.is_float();
  auto int_is = [&](int i, int64_t v) { return ints && is_int_const(x[i], v); };
  switch (op.kind) {
    case OpKind::Cast:
    case OpKind::Broadcast:
    case OpKind::Splat:
    case OpKind::Reshape:
      if (x[0]->type == op.result()->type) return to_value(x[0]);
      break;
    case OpKind::Add:  // x + 0 (ints); x + -0.0 (floats: +0.0 would turn -0.0 into +0.0)
      if (int_is(1, 0) || (floats && is_float_const(x[1], 0, true))) return to_value(x[0]);
      if (int_is(0, 0) || (floats && is_float_const(x[0], 0, true))) return to_value(x[1]);
      break;
    case OpKind::Sub:
      if (int_is(1, 0) || (floats && is_float_const(x[1], 0))) return to_value(x[0]);
      if (ints && x[0] == x[1]) return to_const(int64_t{0});
      break;
    case OpKind::Mul:
      if (int_is(1, 1) || (floats && is_float_const(x[1], 1))) return to_value(x[0]);
      if (int_is(0, 1) || (floats && is_float_const(x[0], 1))) return to_value(x[1]);
      if (int_is(0, 0) || int_is(1, 0)) return to_const(int64_t{0});  // floats: NaN * 0, -0.0
      break;
    case OpKind::Div:
      if (bit_width(dt.scalar) > 1 && (int_is(1, 1) || (floats && is_float_const(x[1], 1))))
        return to_value(x[0]);
      break;
    case OpKind::Rem:
      if (bit_width(dt.scalar) > 1 && int_is(1, 1)) return to_const(int64_t{0});
      break;
    case OpKind::Min:
    case OpKind::Max:
      if (x[0] == x[1]) return to_value(x[0]);
      break;
    case OpKind::And:
      if (int_is(1, all_ones(dt.scalar))) return to_value(x[0]);
      if (int_is(0, all_ones(dt.scalar))) return to_value(x[1]);
      if (int_is(0, 0) || int_is(1, 0)) return to_const(int64_t{0});
      if (x[0] == x[1]) return to_value(x[0]);
      break;
    case OpKind::Or:
      if (int_is(1, 0)) return to_value(x[0]);
      if (int_is(0, 0)) return to_value(x[1]);
      if (int_is(0, all_ones(dt.scalar)) || int_is(1, all_ones(dt.scalar)))
        return to_const(all_ones(dt.scalar));
      if (x[0] == x[1]) return to_value(x[0]);
      break;
    case OpKind::Xor:
      if (int_is(1, 0)) return to_value(x[0]);
      if (int_is(0, 0)) return to_value(x[1]);
      if (ints && x[0] == x[1]) return to_const(int64_t{0});
      break;
    case OpKind::Shl:
    case OpKind::Shr:
      if (int_is(1, 0)) return to_value(x[0]);
      break;
    case OpKind::CmpEq:
    case OpKind::CmpLe:
    case OpKind::CmpGe:  // x == x is false for a float NaN; ints and pointers are safe
      if (!floats && x[0] == x[1]) return to_const(int64_t{1});
      break;
    case OpKind::CmpNe:
    case OpKind::CmpLt:
    case OpKind::CmpGt:
      if (!floats && x[0] == x[1]) return to_const(int64_t{0});
      break;
    case OpKind::Neg:
    case OpKind::Not:  // -(-x) and ~~x
      if (x[0]->def && x[0]->def->kind == op.kind) return to_value(x[0]->def->operand(0));
      break;
    case OpKind::Select:
      if (auto c = int_const(x[0])) return to_value(*c ? x[1] : x[2]);
      if (x[1] == x[2]) return to_value(x[1]);
      break;
    case OpKind::AddPtr:
      if (is_int_const(x[1], 0)) return to_value(x[0]);
      break;
    default: break;
  }
  return std::nullopt;
}

// Ops that apply one function to each element; a splat operand is then one scalar.
bool elementwise(const Op& op) {
  switch (op.info().rule) {
    case Rule::Cast: case Rule::Arith: case Rule::Bitwise: case Rule::Compare:
    case Rule::UnaryNumeric: case Rule::UnaryInt: case Rule::UnaryFloat: case Rule::Fma:
    case Rule::Select: case Rule::AddPtr:
      return true;
    default: return false;
  }
}

const Op* splat_def(const Value* v) {
  const Op* d = v->def;
  if (!d || d->kind != OpKind::Splat || d->operands.size() != 1) return nullptr;
  if (d->operand(0)->type != v->type.with_shape({})) return nullptr;
  return d;
}

class Canonicalizer {
 public:
  explicit Canonicalizer(Function& f) : fn_(f) {}

  bool run() {
    bool any = fold_specialised_params();
    // Every rewrite removes an op, turns one into a constant, or moves tile work onto
    // scalars, so sweeps reach a fixpoint; the bound is only a guard.
    for (int round = 0; round < kMaxRounds && sweep(); ++round) any = true;
    return any;
  }

 private:
  static constexpr int kMaxRounds = 256;

  // An integer parameter specialised "== 1" (ParamSpec::equal1) is the constant 1 in this
  // compiled variant, as the lowering also assumes: uses read a constant at the top instead.
  bool fold_specialised_params() {
    std::vector<int> uses = count_uses(fn_);
    size_t at = 0;
    for (size_t i = 0; i < fn_.params.size() && i < fn_.body.args.size(); ++i) {
      Value* p = fn_.body.args[i];
      if (!fn_.params[i].spec.equal1 || !p->type.dtype.is_int() || !p->type.is_scalar() ||
          uses[p->id] == 0)
        continue;
      Value* one = insert(fn_.body, at++, OpKind::Constant, {}, p->type, {Attr{"value", int64_t{1}}}, SrcLoc{});
      replace_all_uses(fn_.body, p, one);
    }
    return at > 0;
  }

  bool sweep() {
    changed_ = false;
    repl_.assign(fn_.num_values(), nullptr);
    erased_.clear();
    visit(fn_.body);
    if (!changed_) return false;
    walk(fn_.body, [&](Op& op) {  // catches any use that precedes its def in malformed IR
      for (auto& v : op.operands) v = resolve(v);
    });
    erase_marked(fn_.body);
    return true;
  }

  Value* resolve(Value* v) const {
    while (v->id < repl_.size() && repl_[v->id]) v = repl_[v->id];
    return v;
  }

  // Program order, so every operand is already rewritten when its user is reached.
  void visit(Block& b) {
    for (size_t i = 0; i < b.ops.size(); ++i) {
      Op& op = *b.ops[i];
      for (auto& v : op.operands) v = resolve(v);
      for (auto& r : op.regions) visit(*r);
      if (op.regions.empty() && op.results.size() == 1 && is_pure(op.kind) &&
          op.kind != OpKind::Constant)
        i += rewrite(b, i);
    }
  }

  // Rewrites b.ops[i]; returns how many ops it inserted before it.
  size_t rewrite(Block& b, size_t i) {
    Op& op = *b.ops[i];
    if (auto c = fold(op)) {
      make_constant(op, *c);
      return 0;
    }
    if (auto s = simplify(op)) {
      if (s->constant) {
        make_constant(op, *s->constant);
        return 0;
      }
      if (s->forward->type == op.result()->type) {
        repl_[op.result()->id] = s->forward;
        erased_.insert(&op);
        changed_ = true;
        return 0;
      }
    }
    return hoist_splats(b, i);
  }

  void make_constant(Op& op, AttrValue v) {
    op.kind = OpKind::Constant;
    op.operands.clear();
    op.attrs.assign({Attr{"value", v}});
    changed_ = true;
  }

  void make_splat(Op& op, Value* scalar) {
    op.kind = OpKind::Splat;
    op.operands.assign({scalar});
    op.attrs.clear();
    changed_ = true;
  }

  // broadcast/expand_dims/reshape/trans of a splat is a splat; an elementwise op over splats (and tile
  // constants) is one scalar op, splat: the work leaves the tile.
  size_t hoist_splats(Block& b, size_t i) {
    Op& op = *b.ops[i];
    const Type& rt = op.result()->type;
    if (op.kind == OpKind::Broadcast || op.kind == OpKind::ExpandDims || op.kind == OpKind::Reshape ||
        op.kind == OpKind::Trans) {
      if (const Op* s = splat_def(op.operand(0))) make_splat(op, s->operand(0));
      return 0;
    }
    if (!elementwise(op) || rt.is_scalar()) return 0;
    bool any_splat = false;
    for (const Value* v : op.operands) {
      if (v->type.shape != rt.shape) return 0;
      if (splat_def(v)) any_splat = true;
      else if (!constant_def(v)) return 0;
    }
    if (!any_splat) return 0;
    size_t at = i;
    std::vector<Value*> scalars;
    for (const Value* v : op.operands) {
      if (const Op* s = splat_def(v)) scalars.push_back(s->operand(0));
      else scalars.push_back(insert(b, at++, OpKind::Constant, {}, v->type.with_shape({}), v->def->attrs, op.loc));
    }
    Value* s = insert(b, at++, op.kind, std::move(scalars), rt.with_shape({}), op.attrs, op.loc);
    make_splat(op, s);
    return at - i;
  }

  Value* insert(Block& b, size_t pos, OpKind k, std::vector<Value*> operands, Type t,
                std::vector<Attr> attrs, SrcLoc loc) {
    auto op = std::make_unique<Op>();
    op->kind = k;
    op->operands = std::move(operands);
    op->attrs = std::move(attrs);
    op->parent = &b;
    op->loc = loc;
    Value* r = fn_.new_value(std::move(t));
    r->def = op.get();
    r->block = &b;
    r->index = 0;
    op->results.push_back(r);
    b.ops.insert(b.ops.begin() + static_cast<std::ptrdiff_t>(pos), std::move(op));
    return r;
  }

  void erase_marked(Block& b) {
    std::erase_if(b.ops, [&](const std::unique_ptr<Op>& op) { return erased_.contains(op.get()); });
    for (auto& op : b.ops)
      for (auto& r : op->regions) erase_marked(*r);
  }

  Function& fn_;
  bool changed_ = false;
  std::vector<Value*> repl_;              // uses of value id -> replacement
  std::unordered_set<const Op*> erased_;  // membership only; never iterated
};

}  // namespace

bool canonicalize(Function& f) { return Canonicalizer(f).run(); }

}  // namespace tessel::ir
