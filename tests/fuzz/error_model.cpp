// The fuzzer's tolerance model: exactness, ranges and error bounds per op (see error_model.hpp).
#include "error_model.hpp"

#include <cfloat>
#include <limits>
#include <string>

namespace fuzz {

using tessel::ir::DType;
using tessel::ir::Op;
using tessel::ir::OpKind;
using tessel::ir::Scalar;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

[[noreturn]] void broken(const Op& op, const std::string& why) {
  throw std::logic_error("fuzz tolerance model: op '" + std::string(op.name()) + "': " + why);
}

bool is_f(const tessel::ir::Value* v) { return v->type.dtype.is_float(); }

// A float result: [lo, hi] is the range of the exact function over the operands' ranges
// (which hold both sides' operands); each side's result lies within `widen` of it (its own
// rounding or approximation, not the propagated difference; kRounded: one rounding at each
// end), and the two sides differ by at
// most `err`. Bounds past the format become infinite. Both sides lie in the range, so they
// differ by at most its width: the bound is capped there (a clamp ends any growth).
constexpr double kRounded = -1;  // float_result's `widen` for a correctly rounded op
Info float_result(Scalar s, double lo, double hi, bool exact, double err, bool zsign, bool nan, double widen) {
  Info r;
  r.exact = exact;
  r.err = exact ? 0 : err;
  r.zsign = zsign;
  r.nan = nan;
  if (std::isnan(lo)) lo = -kInf;
  if (std::isnan(hi)) hi = kInf;
  if (widen == kRounded) {  // a correctly rounded result: rounding is monotone, each end moves by its own ulp
    r.lo = std::isfinite(lo) ? lo - ulp_at(s, lo) : lo, r.hi = std::isfinite(hi) ? hi + ulp_at(s, hi) : hi;
  } else {
    r.lo = lo - widen, r.hi = hi + widen;
  }
  const double m = format_of(s).max;
  if (!(r.lo > -m)) r.lo = -kInf;
  if (!(r.hi < m)) r.hi = kInf;
  if (!exact && std::isfinite(r.hi - r.lo)) r.err = std::min(r.err, r.hi - r.lo);
  return r;
}
// One rounding of a value of magnitude up to max(|lo|, |hi|).
double rnd_of(Scalar s, double lo, double hi) {
  const double m = std::max(std::fabs(lo), std::fabs(hi));
  return std::isfinite(m) ? ulp_at(s, m) : 0;
}

// An integer result: the range when it fits the type, else the type's whole range.
Info int_result(Scalar s, double lo, double hi) {
  Info r;
  if (s == Scalar::i1) {
    r.lo = 0, r.hi = 1;
    return r;
  }
  if (std::isnan(lo) || std::isnan(hi) || lo < int_min(s) || hi > int_max(s)) lo = int_min(s), hi = int_max(s);
  r.lo = lo, r.hi = hi;
  return r;
}

double min4(double a, double b, double c, double d) { return std::min(std::min(a, b), std::min(c, d)); }
double max4(double a, double b, double c, double d) { return std::max(std::max(a, b), std::max(c, d)); }
// Range products: 0 * inf is 0 here (NaN is tracked by the nan flag, not the range).
double mul0(double a, double b) { return a == 0 || b == 0 ? 0 : a * b; }
bool contains_zero(const Info& a) { return a.lo <= 0 && a.hi >= 0; }
bool may_inf(const Info& a) { return std::isinf(a.lo) || std::isinf(a.hi); }
// Smallest |x| over the range (0 when it spans zero).
double min_abs(const Info& a) { return contains_zero(a) ? 0 : std::min(std::fabs(a.lo), std::fabs(a.hi)); }
double next_pow2_minus1(double m) {
  double p = 1;
  while (p <= m && p < 1e300) p *= 2;
  return p - 1;
}
double log2n(int64_t n) { return std::ceil(std::log2(static_cast<double>(std::max<int64_t>(n, 1)))); }
double e_of(const Info& a) { return a.exact ? 0 : a.err; }

// How far the GPU may be from the true value of math op k (f32 working precision, see the
// header), at argument magnitude xm and result magnitude ym; the format rounding is added by
// the caller.
double dev_core(const Op& op, Scalar s, double xm, double ym) {
  const bool f64 = s == Scalar::f64;
  // f64 is computed in f64: f64_math.hpp's few ulp, erf libdevice's 2 ulp (lower_math.cpp).
  if (f64) return op.kind == OpKind::Rsqrt ? ulp_at(s, ym) : 0x1p-40 * ym + 0x1p-60;
  switch (op.kind) {
    // exp and exp2 flush results below 2^-126 to 0 (ex2.approx.ftz, fast_math.hpp).
    case OpKind::Exp: return (0x1p-21 + xm * 0x1p-23) * ym + 0x1p-126;
    case OpKind::Exp2: return 0x1p-21 * ym + 0x1p-126;
    case OpKind::Rsqrt: return 0x1p-21 * ym;
    case OpKind::Log: case OpKind::Log2: return 0x1p-20 * std::max(1.0, ym);
    case OpKind::Sin: case OpKind::Cos:  // the .approx range reduction loses ~|x| 2^-24.8 (seen on the H100)
      if (xm > 64) broken(op, "sin/cos argument beyond 64 (clamp it)");
      return 0x1p-20 + xm * 0x1p-22;
    case OpKind::Tanh: return 0x1p-20 * ym + 0x1p-21;
    case OpKind::Erf: return 0x1p-20 * ym + 0x1p-21;
    case OpKind::Sigmoid: return (0x1p-20 + xm * 0x1p-23) * ym + 0x1p-21;
    default: break;
  }
  broken(op, "not an approximate math op");
}

// exp .. erf on a finite, in-domain operand: always inexact (.approx on the GPU).
Info approx_math(const Op& op, Scalar s, const Info& x) {
  if (!x.finite()) broken(op, "operand may be NaN or infinite (sanitize it)");
  const double lo = x.lo, hi = x.hi, e = e_of(x), xm = x.mag();
  double L = 0, rlo = 0, rhi = 0;
  switch (op.kind) {
    case OpKind::Exp: L = std::exp(hi), rlo = std::exp(lo), rhi = std::exp(hi); break;
    case OpKind::Exp2: L = std::log(2.0) * std::exp2(hi), rlo = std::exp2(lo), rhi = std::exp2(hi); break;
    case OpKind::Log: case OpKind::Log2: {
      if (lo <= 0) broken(op, "operand range reaches 0 (guard with abs(x) + 1)");
      const double k = op.kind == OpKind::Log ? 1.0 : 1.0 / std::log(2.0);
      L = k / lo, rlo = k * std::log(lo), rhi = k * std::log(hi);
      break;
    }
    case OpKind::Rsqrt:
      if (lo <= 0) broken(op, "operand range reaches 0 (guard with abs(x) + 1)");
      L = 0.5 * std::pow(lo, -1.5), rlo = 1 / std::sqrt(hi), rhi = 1 / std::sqrt(lo);
      break;
    case OpKind::Sin: case OpKind::Cos: L = 1, rlo = -1, rhi = 1; break;
    case OpKind::Tanh: L = 1, rlo = std::tanh(lo), rhi = std::tanh(hi); break;
    case OpKind::Sigmoid: L = 0.25, rlo = 1 / (1 + std::exp(-lo)), rhi = 1 / (1 + std::exp(-hi)); break;
    case OpKind::Erf: L = 1.1284, rlo = std::erf(lo), rhi = std::erf(hi); break;
    default: broken(op, "not an approximate math op");
  }
  const double ym = std::max(std::fabs(rlo), std::fabs(rhi));
  const double dev = dev_core(op, s, xm, ym) + ulp_at(s, ym);
  Info r = float_result(s, rlo, rhi, false, L * e + dev, false, false, dev);
  if (!r.finite()) broken(op, "result may overflow (clamp the operand)");
  return r;
}

// An inexact result must stay finite; an exact one may be anything.
Info checked(const Op& op, Info r) {
  if (!r.exact && !r.finite()) broken(op, "an inexact result may be NaN or overflow (clamp the operands)");
  return r;
}

Info float_binary(const Op& op, Scalar s, const Info& a, const Info& b) {
  const bool exact = a.exact && b.exact;
  const double ea = e_of(a), eb = e_of(b);
  const bool nan = a.nan || b.nan;
  auto rnd = [&](double lo, double hi) { return rnd_of(s, lo, hi); };
  switch (op.kind) {
    case OpKind::Add: case OpKind::Sub: {
      const bool add = op.kind == OpKind::Add;
      const double lo = add ? a.lo + b.lo : a.lo - b.hi, hi = add ? a.hi + b.hi : a.hi - b.lo;
      const bool inf_nan = add ? (a.hi == kInf && b.lo == -kInf) || (a.lo == -kInf && b.hi == kInf)
                               : (a.hi == kInf && b.hi == kInf) || (a.lo == -kInf && b.lo == -kInf);
      return checked(op, float_result(s, lo, hi, exact, ea + eb + rnd(lo, hi), a.zsign || b.zsign, nan || inf_nan, kRounded));
    }
    case OpKind::Mul: {
      const double p[4] = {mul0(a.lo, b.lo), mul0(a.lo, b.hi), mul0(a.hi, b.lo), mul0(a.hi, b.hi)};
      const double lo = min4(p[0], p[1], p[2], p[3]), hi = max4(p[0], p[1], p[2], p[3]);
      const bool zero_inf = (contains_zero(a) && may_inf(b)) || (contains_zero(b) && may_inf(a));
      const double err = b.mag() * ea + a.mag() * eb + ea * eb + rnd(lo, hi);
      return checked(op, float_result(s, lo, hi, exact, err, a.zsign || b.zsign, nan || zero_inf, kRounded));
    }
    case OpKind::Div: {
      if (b.zsign && contains_zero(b)) broken(op, "divisor may be a zero of either sign (guard it)");
      const bool nan2 = nan || (contains_zero(a) && contains_zero(b)) || (may_inf(a) && may_inf(b));
      if (contains_zero(b) || may_inf(b)) {
        if (!exact) broken(op, "inexact division by a range that reaches 0 or infinity (guard the divisor)");
        return float_result(s, -kInf, kInf, true, 0, a.zsign, nan2, 0);
      }
      const double q[4] = {a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi};
      const double lo = min4(q[0], q[1], q[2], q[3]), hi = max4(q[0], q[1], q[2], q[3]);
      const double dm = min_abs(b);
      const double err = ea / dm + a.mag() * eb / (dm * dm) + rnd(lo, hi);
      return checked(op, float_result(s, lo, hi, exact, err, a.zsign, nan2, kRounded));
    }
    case OpKind::Rem: {  // exact operands only (the central rule)
      const double m = std::min(a.mag(), b.mag());
      const bool nan2 = nan || contains_zero(b) || may_inf(a);
      return float_result(s, a.lo < 0 ? -m : 0, a.hi > 0 ? m : 0, true, 0, a.zsign, nan2, 0);
    }
    case OpKind::Min: case OpKind::Max: {
      const bool mn = op.kind == OpKind::Min;
      const double lo = mn ? std::min(a.lo, b.lo) : std::max(a.lo, b.lo);
      const double hi = mn ? std::min(a.hi, b.hi) : std::max(a.hi, b.hi);
      const bool zs = a.zsign || b.zsign || (contains_zero(a) && contains_zero(b));
      return checked(op, float_result(s, lo, hi, exact, std::max(ea, eb), zs, nan, 0));
    }
    default: break;
  }
  broken(op, "not a float binary op");
}

Info fma_info(const Op& op, Scalar s, const Info& a, const Info& b, const Info& c) {
  const double p[4] = {mul0(a.lo, b.lo), mul0(a.lo, b.hi), mul0(a.hi, b.lo), mul0(a.hi, b.hi)};
  const double lo = min4(p[0], p[1], p[2], p[3]) + c.lo, hi = max4(p[0], p[1], p[2], p[3]) + c.hi;
  const bool all_exact = a.exact && b.exact && c.exact;
  // f16/bf16: the GPU rounds the f32 fma to the format, the interpreter the double one: 1 ulp.
  const bool exact = all_exact && (s == Scalar::f32 || s == Scalar::f64);
  if (!exact && !(a.finite() && b.finite() && c.finite()))
    broken(op, "an f16/bf16 fma of values that may be NaN or infinite (sanitize them)");
  const bool nan = a.nan || b.nan || c.nan || (contains_zero(a) && may_inf(b)) || (contains_zero(b) && may_inf(a)) ||
                   may_inf(a) || may_inf(b) || may_inf(c);  // inf - inf: be coarse
  const double err = b.mag() * e_of(a) + a.mag() * e_of(b) + e_of(a) * e_of(b) + e_of(c) + rnd_of(s, lo, hi);
  return checked(op, float_result(s, lo, hi, exact, err, a.zsign || b.zsign || c.zsign, nan, kRounded));
}

Info cast_info(const Op& op, const Info& x) {
  const DType from = op.operands[0]->type.dtype, to = op.results[0]->type.dtype;
  if (from.ptr || to.ptr) return Info{};  // addresses: not generated as data
  if (to.is_int()) {
    if (from.is_int()) return int_result(to.scalar, x.lo, x.hi);
    if (to.scalar == Scalar::i1) return int_result(Scalar::i1, 0, 1);
    // Truncation toward zero, saturating; NaN -> 0.
    double lo = std::clamp(std::trunc(x.lo), int_min(to.scalar), int_max(to.scalar));
    double hi = std::clamp(std::trunc(x.hi), int_min(to.scalar), int_max(to.scalar));
    if (x.nan) lo = std::min(lo, 0.0), hi = std::max(hi, 0.0);
    return int_result(to.scalar, lo, hi);
  }
  const double w = rnd_of(to.scalar, x.lo, x.hi);
  if (from.is_int()) return float_result(to.scalar, x.lo, x.hi, true, 0, false, false, kRounded);
  if (x.exact) return float_result(to.scalar, x.lo, x.hi, true, 0, x.zsign, x.nan, kRounded);
  if (x.mag() > format_of(to.scalar).max / 2) broken(op, "an inexact value may overflow the target (clamp it)");
  return checked(op, float_result(to.scalar, x.lo, x.hi, false, x.err + w, x.zsign, false, kRounded));
}

// reduce_sum / cumsum / an add-combine reduce over n elements along the axis.
Info sum_info(const Op& op, Scalar s, const Info& x, int64_t n, bool is_float) {
  const double dn = static_cast<double>(n);
  if (!is_float) return int_result(s, dn * std::min(x.lo, 0.0), dn * std::max(x.hi, 0.0));
  const double lo = x.lo < 0 ? dn * x.lo : x.lo, hi = x.hi > 0 ? dn * x.hi : x.hi;
  // Up to two elements add in one order on both sides (a + b == b + a).
  if (x.exact && n <= 2)
    return float_result(s, lo, hi, true, 0, true, x.nan || (x.lo == -kInf && x.hi == kInf), kRounded);
  if (!x.finite()) broken(op, "a sum of values that may be NaN or infinite (sanitize them)");
  // Summation trees of depth d add at most d * 2u * n * max|x| (first order): the
  // interpreter's pairwise tree has d = log2 n, the GPU's (in-thread runs, then shuffles and
  // shared memory) at most min(n, 128) + log2 n. Each side is within its own bound of the
  // exact sum of its operands, which differ by e each.
  const double unit = std::ldexp(1.0, 1 - format_of(s).p) * dn * x.mag();
  const double d_gpu = static_cast<double>(std::min<int64_t>(n, 128)) + log2n(n), d_interp = log2n(n);
  const double err = dn * e_of(x) + (d_gpu + d_interp) * unit + ulp_at(s, dn * x.mag());
  return checked(op, float_result(s, lo, hi, false, err, true, false, d_gpu * unit + ulp_at(s, dn * x.mag())));
}

int64_t axis_len(const Op& op) { return op.operands[0]->type.shape.at(static_cast<size_t>(op.int_attr("axis"))); }

Info int_binary(const Op& op, Scalar s, const Info& a, const Info& b) {
  switch (op.kind) {
    case OpKind::Add: return int_result(s, a.lo + b.lo, a.hi + b.hi);
    case OpKind::Sub: return int_result(s, a.lo - b.hi, a.hi - b.lo);
    case OpKind::Mul: {
      const double p[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
      return int_result(s, min4(p[0], p[1], p[2], p[3]), max4(p[0], p[1], p[2], p[3]));
    }
    case OpKind::Div: case OpKind::Rem:
      // Division by zero is unspecified: the generator divides by (y | 1).
      if (!b.nonzero && contains_zero(b)) broken(op, "integer divisor may be 0 (use y | 1)");
      if (op.kind == OpKind::Div) return int_result(s, -a.mag(), a.mag());
      return int_result(s, a.lo < 0 ? -std::min(a.mag(), b.mag()) : 0, a.hi > 0 ? std::min(a.mag(), b.mag()) : 0);
    case OpKind::Min: return int_result(s, std::min(a.lo, b.lo), std::min(a.hi, b.hi));
    case OpKind::Max: return int_result(s, std::max(a.lo, b.lo), std::max(a.hi, b.hi));
    case OpKind::And:
      if (a.lo >= 0 || b.lo >= 0) return int_result(s, 0, a.lo >= 0 && b.lo >= 0 ? std::min(a.hi, b.hi) : a.lo >= 0 ? a.hi : b.hi);
      return int_result(s, int_min(s), int_max(s));
    case OpKind::Or: case OpKind::Xor: {
      Info r = a.lo >= 0 && b.lo >= 0 ? int_result(s, 0, next_pow2_minus1(std::max(a.hi, b.hi)))
                                      : int_result(s, int_min(s), int_max(s));
      // x | c with a constant c != 0 is never 0 (the generator's safe divisor).
      for (const tessel::ir::Value* v : op.operands)
        if (op.kind == OpKind::Or && v->def && v->def->kind == OpKind::Constant &&
            std::get<int64_t>(v->def->find_attr("value")->value) != 0)
          r.nonzero = true;
      return r;
    }
    case OpKind::Shl: return int_result(s, int_min(s), int_max(s));
    case OpKind::Shr: return a.lo >= 0 ? int_result(s, 0, a.hi) : int_result(s, std::min(a.lo, -1.0), std::max(a.hi, 0.0));
    default: break;
  }
  broken(op, "not an integer binary op");
}

// select(x != x, c, x): x without its NaN (the generator's NaN guard).
bool is_nan_guard(const Op& sel) {
  const Op* cmp = sel.operands[0]->def;
  return cmp && cmp->kind == OpKind::CmpNe && cmp->operands[0] == cmp->operands[1] && cmp->operands[0] == sel.operands[2];
}

}  // namespace

Format format_of(Scalar s) {
  switch (s) {
    case Scalar::f16: return {11, 65504.0, 0x1p-24};
    case Scalar::bf16: return {8, 0x1.fep127, 0x1p-133};
    case Scalar::f32: return {24, FLT_MAX, 0x1p-149};
    case Scalar::f64: return {53, DBL_MAX, 0x1p-1074};
    default: break;
  }
  throw std::logic_error("fuzz tolerance model: format_of an integer type");
}

double ulp_at(Scalar s, double m) {
  const Format f = format_of(s);
  return std::ldexp(std::fabs(m), 1 - f.p) + f.min_sub;
}

double int_min(Scalar s) { return s == Scalar::i1 ? 0 : -std::ldexp(1.0, tessel::ir::bit_width(s) - 1); }
double int_max(Scalar s) { return s == Scalar::i1 ? 1 : std::ldexp(1.0, tessel::ir::bit_width(s) - 1) - 1; }

Info exact_range(double lo, double hi) {
  Info i;
  i.lo = lo, i.hi = hi;
  return i;
}

Info float_range(double lo, double hi, bool nan) {
  Info i;
  i.lo = lo, i.hi = hi, i.nan = nan;
  return i;
}

Info unknown_of(DType d) {
  if (d.is_float()) return float_range(-kInf, kInf, true);
  if (d.ptr) return Info{};
  return int_result(d.scalar, int_min(d.scalar), int_max(d.scalar));
}

Info join(const Info& a, const Info& b) {
  Info r;
  r.exact = a.exact && b.exact;
  r.nan = a.nan || b.nan;
  r.zsign = a.zsign || b.zsign;
  r.lo = std::min(a.lo, b.lo), r.hi = std::max(a.hi, b.hi);
  r.err = std::max(e_of(a), e_of(b));
  if (!r.exact && std::isfinite(r.hi - r.lo)) r.err = std::min(r.err, r.hi - r.lo);
  r.nonzero = a.nonzero && b.nonzero;
  return r;
}

bool needs_exact_operands(const Op& op) {
  switch (op.kind) {
    case OpKind::CmpEq: case OpKind::CmpNe: case OpKind::CmpLt: case OpKind::CmpLe: case OpKind::CmpGt:
    case OpKind::CmpGe: case OpKind::Floor: case OpKind::Ceil: case OpKind::ArgMax: case OpKind::ArgMin:
      return true;
    case OpKind::Rem: return is_f(op.operands[0]);
    case OpKind::Cast: return is_f(op.operands[0]) && op.results[0]->type.dtype.is_int();
    default: return false;
  }
}

double safe_bound(OpKind k, Scalar s, int64_t n) {
  const Format f = format_of(s);
  const bool h = s == Scalar::f16;
  switch (k) {
    case OpKind::Exp: return h ? 8 : 16;
    case OpKind::Exp2: return h ? 8 : 16;
    case OpKind::Sin: case OpKind::Cos: return 64;
    case OpKind::Log: case OpKind::Log2: case OpKind::Rsqrt: return h ? 1024 : 0x1p20;
    case OpKind::Tanh: case OpKind::Sigmoid: case OpKind::Erf: return h ? 1024 : 0x1p14;
    case OpKind::Add: case OpKind::Sub: return std::exp2(std::floor(std::log2(f.max / 8)));
    case OpKind::Mul: case OpKind::Div: return std::exp2(std::floor(std::log2(std::sqrt(f.max) / 4)));
    case OpKind::Fma: return std::exp2(std::floor(std::log2(std::sqrt(f.max) / 8)));
    case OpKind::ReduceSum: case OpKind::CumSum: case OpKind::Reduce: case OpKind::AtomicAdd:
      return std::exp2(std::floor(std::log2(f.max / (8.0 * static_cast<double>(std::max<int64_t>(n, 1))))));
    default: return std::exp2(std::floor(std::log2(f.max / 4)));
  }
}

Info transfer(const Op& op, std::span<const Info> in, const Context& ctx) {
  // Central rules: ops that jump take exact operands; an inexact operand makes every float
  // operand of the op need to be finite (a NaN or infinity next to it would make the bound
  // meaningless).
  bool any_inexact = false;
  for (size_t i = 0; i < in.size(); ++i)
    if (is_f(op.operands[i]) && !in[i].exact) any_inexact = true;
  if (any_inexact && needs_exact_operands(op)) broken(op, "an inexact operand into an op whose result jumps");
  if (any_inexact)
    for (size_t i = 0; i < in.size(); ++i)
      if (is_f(op.operands[i]) && !in[i].finite()) broken(op, "a NaN/infinite operand next to an inexact one");
  const DType rd = op.results.empty() ? DType{} : op.results[0]->type.dtype;
  const Scalar s = rd.scalar;
  switch (op.kind) {
    case OpKind::Constant: {
      const auto& v = op.find_attr("value")->value;
      if (std::holds_alternative<double>(v)) {
        const double d = std::get<double>(v);
        return std::isnan(d) ? float_range(-kInf, kInf, true) : float_range(d, d, false);
      }
      const double d = static_cast<double>(std::get<int64_t>(v));
      Info r = int_result(s, d, d);
      r.nonzero = d != 0;
      return r;
    }
    case OpKind::ProgramId: return int_result(Scalar::i32, 0, static_cast<double>(ctx.grid[op.int_attr("axis")] - 1));
    case OpKind::NumPrograms: {
      const double g = static_cast<double>(ctx.grid[op.int_attr("axis")]);
      return int_result(Scalar::i32, g, g);
    }
    case OpKind::Arange:
      return int_result(Scalar::i32, static_cast<double>(op.int_attr("start")), static_cast<double>(op.int_attr("end") - 1));
    case OpKind::Splat: case OpKind::Broadcast: case OpKind::ExpandDims: case OpKind::Reshape: case OpKind::Trans:
    case OpKind::Hint: case OpKind::AddPtr:
      return in[0];
    case OpKind::Cast: return cast_info(op, in[0]);
    case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div: case OpKind::Rem: case OpKind::Min:
    case OpKind::Max:
      if (rd.is_float()) return float_binary(op, s, in[0], in[1]);
      return int_binary(op, s, in[0], in[1]);
    case OpKind::And: case OpKind::Or: case OpKind::Xor: case OpKind::Shl: case OpKind::Shr:
      return int_binary(op, s, in[0], in[1]);
    case OpKind::CmpEq: case OpKind::CmpNe: case OpKind::CmpLt: case OpKind::CmpLe: case OpKind::CmpGt:
    case OpKind::CmpGe:
      return int_result(Scalar::i1, 0, 1);
    case OpKind::Neg: {
      if (!rd.is_float()) return int_result(s, -in[0].hi, -in[0].lo);
      Info r = in[0];
      r.lo = -in[0].hi, r.hi = -in[0].lo;
      return r;
    }
    case OpKind::Abs: {
      const Info& x = in[0];
      if (!rd.is_float())
        return x.lo <= int_min(s) ? int_result(s, int_min(s), int_max(s)) : int_result(s, min_abs(x), x.mag());
      Info r = x;
      r.lo = min_abs(x), r.hi = x.mag(), r.zsign = false;
      return r;
    }
    case OpKind::Not: return s == Scalar::i1 ? int_result(s, 0, 1) : int_result(s, -in[0].hi - 1, -in[0].lo - 1);
    case OpKind::Sqrt: {
      const Info& x = in[0];
      const double lo = std::sqrt(std::max(x.lo, 0.0)), hi = std::sqrt(std::max(x.hi, 0.0));
      if (x.exact) return float_result(s, lo, hi, true, 0, x.zsign, x.nan || x.lo < 0, kRounded);
      if (x.lo < 0) broken(op, "sqrt of an inexact value that may be negative (guard with abs)");
      const double lip = x.lo > 0 ? x.err / (2 * std::sqrt(x.lo)) : kInf;
      return checked(op, float_result(s, lo, hi, false, std::min(std::sqrt(x.err), lip) + ulp_at(s, hi), false, false,
                                      kRounded));
    }
    case OpKind::Exp: case OpKind::Exp2: case OpKind::Log: case OpKind::Log2: case OpKind::Rsqrt: case OpKind::Sin:
    case OpKind::Cos: case OpKind::Tanh: case OpKind::Sigmoid: case OpKind::Erf:
      return approx_math(op, s, in[0]);
    case OpKind::Floor: return float_result(s, std::floor(in[0].lo), std::floor(in[0].hi), true, 0, in[0].zsign, in[0].nan, 0);
    case OpKind::Ceil: return float_result(s, std::ceil(in[0].lo), std::ceil(in[0].hi), true, 0, in[0].zsign, in[0].nan, 0);
    case OpKind::Fma: return fma_info(op, s, in[0], in[1], in[2]);
    case OpKind::Select: {
      if (rd.is_float() && is_nan_guard(op)) {
        Info x = in[2];
        x.nan = false;
        return join(in[1], x);
      }
      return join(in[1], in[2]);
    }
    case OpKind::Load: {
      Info r = ctx.memory(op);
      if (op.num_operands() == 3) return checked(op, join(r, in[2]));
      if (op.num_operands() == 2) return join(r, rd.is_float() ? exact_range(0, 0) : int_result(s, 0, 0));
      return r;
    }
    case OpKind::AtomicAdd: case OpKind::AtomicMax: {
      Info r = ctx.memory(op);
      return op.num_operands() == 3 ? join(r, rd.is_float() ? exact_range(0, 0) : int_result(s, 0, 0)) : r;
    }
    case OpKind::Rand: return exact_range(0, 1);
    case OpKind::ReduceSum: case OpKind::CumSum: return sum_info(op, s, in[0], axis_len(op), rd.is_float());
    case OpKind::ReduceMax: case OpKind::ReduceMin: {
      Info r = in[0];
      if (rd.is_float()) r.zsign = r.zsign || contains_zero(r);
      return r;
    }
    case OpKind::ArgMax: case OpKind::ArgMin: return int_result(Scalar::i32, 0, static_cast<double>(axis_len(op) - 1));
    case OpKind::Reduce: {
      const Op* combine = op.body().terminator()->operands.at(0)->def;
      const OpKind k = combine ? combine->kind : OpKind::Yield;
      if (k == OpKind::Add) return sum_info(op, s, in[0], axis_len(op), rd.is_float());
      if (k == OpKind::Max || k == OpKind::Min) {
        Info r = in[0];
        if (rd.is_float()) r.zsign = r.zsign || contains_zero(r);
        return r;
      }
      if (rd.is_float()) broken(op, "a float reduce with an unmodelled combine");
      return int_result(s, int_min(s), int_max(s));
    }
    default: break;
  }
  broken(op, "no tolerance rule (not generated by the fuzzer)");
}

}  // namespace fuzz
