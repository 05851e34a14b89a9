// The program generator's op DAG: values and their tolerance Infos, guards, the random ops and
// runtime loops (buffers and memory access are in program_mem.cpp).
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "gen_internal.hpp"
#include "tessel/ir/printer.hpp"
#include "tessel/ir/verify.hpp"

namespace fuzz {

using tessel::ir::Attr;
using tessel::ir::Block;

int64_t numel(const Shape& s) {
  int64_t k = 1;
  for (int64_t d : s) k *= d;
  return k;
}

namespace {

bool is_data(const Value* v) { return !v->type.dtype.ptr; }
bool contains_zero(const Info& i) { return i.lo <= 0 && i.hi >= 0; }
Shape reduced(const Shape& s, int axis) {
  Shape r = s;
  r.erase(r.begin() + axis);
  return r;
}

}  // namespace

Gen::Gen(uint64_t seed) : r(seed) {
  p.seed = seed;
  p.fn = std::make_unique<Function>("fuzz_" + std::to_string(seed));
  f = p.fn.get();
  b = std::make_unique<Builder>(*f);
  ctx.memory = [this](const Op& op) -> Info {
    auto it = mem_.find(&op);
    if (it == mem_.end()) throw std::logic_error("fuzz generator: no memory Info for a load");
    return it->second;
  };
}

const Info& Gen::info(const Value* v) const {
  auto it = info_.find(v);
  if (it == info_.end()) throw std::logic_error("fuzz generator: a value without an Info");
  return it->second;
}

Value* Gen::emit(OpKind k, std::vector<Value*> operands, std::vector<Type> types, std::vector<Attr> attrs) {
  Op& op = b->create(k, std::move(operands), std::move(types), std::move(attrs));
  std::vector<Info> in;
  for (Value* v : op.operands) {
    ++uses_[v];
    in.push_back(v->type.dtype.ptr ? Info{} : info(v));
  }
  if (pending_mem_) mem_[&op] = *pending_mem_, pending_mem_.reset();
  ++n_ops;
  if (op.results.empty()) return nullptr;
  Value* res = op.results[0];
  info_[res] = res->type.dtype.ptr ? Info{} : transfer(op, in, ctx);
  return res;
}

void Gen::add(Value* v) {
  if (v && is_data(v)) pool_.push_back(v);
}

Value* Gen::c_int(int64_t v, Scalar s, const Shape& sh) {
  if (s == Scalar::i1) v &= 1;
  return emit(OpKind::Constant, {}, {Type{DType{s}, sh}}, {{"value", v}});
}

Value* Gen::c_float(double v, Scalar s, const Shape& sh) {
  return emit(OpKind::Constant, {}, {Type{DType{s}, sh}}, {{"value", v}});
}

// Picks a pool value satisfying `pred`, half the time among the 8 most recent (deep chains).
Value* Gen::pick(bool (*pred)(Gen&, Value*)) {
  std::vector<Value*> c;
  for (Value* v : pool_)
    if (pred(*this, v)) c.push_back(v);
  if (c.empty()) return nullptr;
  if (c.size() > 8 && r.coin(0.5)) return c[c.size() - 1 - static_cast<size_t>(r.below(8))];
  return r.pick(c);
}

Value* Gen::shape_to(Value* v, const Shape& t) {
  const Shape& s = v->type.shape;
  const DType d = v->type.dtype;
  if (s == t) return v;
  if (t.empty()) return nullptr;
  if (s.empty()) return emit(OpKind::Splat, {v}, {Type{d, t}});
  if (s.size() == 1 && t.size() == 2 && (s[0] == t[0] || s[0] == t[1])) {
    const int axis = s[0] == t[0] && (s[0] != t[1] || r.coin()) ? 1 : 0;
    Shape e = axis == 1 ? Shape{s[0], 1} : Shape{1, s[0]};
    Value* x = emit(OpKind::ExpandDims, {v}, {Type{d, e}}, {{"axis", int64_t{axis}}});
    return x->type.shape == t ? x : emit(OpKind::Broadcast, {x}, {Type{d, t}});
  }
  if (s.size() == 2 && t.size() == 2) {
    if (s[0] == t[1] && s[1] == t[0] && s != t) return emit(OpKind::Trans, {v}, {Type{d, t}});
    if ((s[0] == t[0] || s[0] == 1) && (s[1] == t[1] || s[1] == 1)) return emit(OpKind::Broadcast, {v}, {Type{d, t}});
  }
  if (numel(s) == numel(t)) return emit(OpKind::Reshape, {v}, {Type{d, t}});
  return nullptr;
}

Value* Gen::dtype_to(Value* v, DType d) {
  const DType from = v->type.dtype;
  if (from == d) return v;
  const Info& i = info(v);
  if (from.is_float() && !i.exact) {
    if (d.is_int()) return nullptr;  // truncation jumps: inexact values never become integers
    if (i.mag() > format_of(d.scalar).max / 2) v = guard(v, safe_bound(OpKind::Cast, d.scalar));
  }
  return emit(OpKind::Cast, {v}, {Type{d, v->type.shape}});
}

Value* Gen::guard(Value* v, double bound) {
  if (!v->type.dtype.is_float()) return v;
  const Scalar s = v->type.dtype.scalar;
  const Shape sh = v->type.shape;
  const double lim = std::exp2(std::floor(std::log2(std::min(bound, format_of(s).max / 2))));
  if (info(v).nan) v = emit(OpKind::Select, {emit(OpKind::CmpNe, {v, v}), c_float(0, s, sh), v});
  if (info(v).lo < -lim) v = emit(OpKind::Max, {v, c_float(-lim, s, sh)});
  if (info(v).hi > lim) v = emit(OpKind::Min, {v, c_float(lim, s, sh)});
  return v;
}

// A value of dtype d and shape sh: from the pool as it is, or cast, or broadcast, or a constant.
Value* Gen::operand(DType d, const Shape& sh, bool need_exact) {
  struct Want {
    DType d;
    Shape sh;
    bool exact;
  };
  static thread_local Want want;
  want = Want{d, sh, need_exact};
  auto ok = [](Gen& g, Value* v) { return !want.exact || !v->type.dtype.is_float() || g.info(v).exact; };
  for (int attempt = 0; attempt < 3; ++attempt) {
    const int64_t how = r.below(10);
    Value* v = nullptr;
    if (how < 6) {
      v = pick([](Gen& g, Value* x) { return is_data(x) && x->type.dtype == want.d && x->type.shape == want.sh && (!want.exact || !x->type.dtype.is_float() || g.info(x).exact); });
    } else if (how < 8) {
      Value* x = pick([](Gen& g, Value* y) { return is_data(y) && y->type.shape == want.sh && (!want.exact || !y->type.dtype.is_float() || g.info(y).exact); });
      if (x) v = dtype_to(x, d);
    } else {
      Value* x = pick([](Gen& g, Value* y) { return is_data(y) && y->type.dtype == want.d && (!want.exact || !y->type.dtype.is_float() || g.info(y).exact); });
      if (x) v = shape_to(x, sh);
    }
    if (v && ok(*this, v)) return v;
  }
  // A constant: small, exactly representable in every format.
  static const double fvals[] = {0.0, 1.0, -1.0, 0.5, 2.0, -2.0, 3.0, 0.25, 1.5, -0.75, 8.0, 100.0, -0.0};
  static const int64_t ivals[] = {0, 1, -1, 2, 3, 7, 31, 100, -128, 127};
  if (d.is_float()) return c_float(fvals[r.below(13)], d.scalar, sh);
  return c_int(ivals[r.below(10)], d.scalar, sh);
}

// LLVM 19.1's InstSimplify crashes (a segfault in getInverseMinMaxIntrinsic) on
// m(m'(X, Y), I(X, Y, ...)) where m, m' are float min/max and I is any intrinsic call whose
// first two operands are X and Y (fma, min, max): fuzz seed 21828 of the first version, reported
// with an opt reproducer. Programs avoid the exact pattern so runs go on finding other bugs.
namespace {
bool float_minmax(const Op* op) {
  return op && (op->kind == OpKind::Min || op->kind == OpKind::Max) && op->results[0]->type.dtype.is_float();
}
bool same_pair(const Op* a, const Op* b) {
  return (a->operands[0] == b->operands[0] && a->operands[1] == b->operands[1]) ||
         (a->operands[0] == b->operands[1] && a->operands[1] == b->operands[0]);
}
}  // namespace

bool Gen::llvm_minmax_hazard(OpKind k, Value* a, Value* b) const {
  if (!a->type.dtype.is_float()) return false;
  if (k == OpKind::Fma) {  // a later m(m'(a, b), fma(a, b, ..)): refuse while such an m' exists
    bool found = false;
    tessel::ir::walk(f->body, [&](const Op& op) {
      if (float_minmax(&op) && ((op.operands[0] == a && op.operands[1] == b) || (op.operands[0] == b && op.operands[1] == a)))
        found = true;
    });
    return found;
  }
  if (k != OpKind::Min && k != OpKind::Max) return false;
  for (int pass = 0; pass < 2; ++pass, std::swap(a, b)) {
    const Op* m = a->def;
    const Op* i = b->def;
    if (float_minmax(m) && i && (i->kind == OpKind::Fma || float_minmax(i)) && same_pair(m, i)) return true;
  }
  return false;
}

void Gen::step() {
  const int64_t k = r.below(100);
  if (k < 24) gen_binary();
  else if (k < 38) gen_unary();
  else if (k < 41) gen_fma();
  else if (k < 49) gen_compare();
  else if (k < 56) gen_select();
  else if (k < 66) gen_cast();
  else if (k < 75) gen_reduce();
  else if (k < 79) gen_scan();
  else if (k < 87) gen_shape();
  else if (k < 93) gen_load();
  else if (k < 96 && loop_depth < 2) gen_loop();
  else if (k < 98) add(r.pick(std::vector<Value*>{pid_lin, offs, mask, two_d ? rows : offs, two_d ? cols : mask}));
  else add(operand(DType{palette_scalar()}, r.coin() ? tile : Shape{}, false));
}

void Gen::gen_binary() {
  Value* a = pick([](Gen&, Value* v) { return is_data(v); });
  if (!a) return;
  const DType d = a->type.dtype;
  const Shape sh = a->type.shape;
  const Scalar s = d.scalar;
  static const std::vector<OpKind> fk = {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Min, OpKind::Max, OpKind::Rem};
  static const std::vector<OpKind> ik = {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Rem, OpKind::Min,
                                         OpKind::Max, OpKind::And, OpKind::Or,  OpKind::Xor, OpKind::Shl, OpKind::Shr};
  static const std::vector<OpKind> bk = {OpKind::And, OpKind::Or, OpKind::Xor};
  OpKind k = d.is_float() ? (r.coin(0.9) ? fk[r.below(6)] : OpKind::Rem)
                          : (d.is_bool() && r.coin(0.7) ? r.pick(bk) : r.pick(ik));
  const bool rem_f = d.is_float() && k == OpKind::Rem;
  if (rem_f && !info(a).exact) k = OpKind::Max;
  Value* y = r.coin(0.08) ? a : operand(d, sh, false);
  if (k == OpKind::Rem && d.is_float() && y != a)  // where the GPU's rem is exact (error_model.hpp)
    y = c_float(r.pick(std::vector<double>{1.0, -1.0, 2.0, 4.0, -4.0, 8.0}), s, sh);
  if (!y) return;
  if (d.is_int()) {
    if (k == OpKind::Div || k == OpKind::Rem) y = emit(OpKind::Or, {y, c_int(1, s, sh)});  // never 0
    if ((k == OpKind::Shl || k == OpKind::Shr) && r.coin(0.6))
      y = emit(OpKind::And, {y, c_int(tessel::ir::bit_width(s) - 1, s, sh)});  // in range (else any amount)
  } else {
    const bool inexact = !info(a).exact || !info(y).exact;
    if (inexact) {
      a = guard(a, safe_bound(k, s));
      y = guard(y, safe_bound(k, s));
    }
    if ((k == OpKind::Min || k == OpKind::Max) && llvm_minmax_hazard(k, a, y)) return;
    if (k == OpKind::Div) {
      const Info& iy = info(y);
      if (inexact) y = emit(OpKind::Add, {emit(OpKind::Abs, {y}), c_float(1, s, sh)});  // |y| + 1 >= 1
      else if (iy.zsign && contains_zero(iy)) y = emit(OpKind::Abs, {y});               // +0, never -0
    }
  }
  add(emit(k, {a, y}));
}

void Gen::gen_unary() {
  Value* a = pick([](Gen&, Value* v) { return is_data(v); });
  if (!a) return;
  const DType d = a->type.dtype;
  const Scalar s = d.scalar;
  if (!d.is_float()) {
    static const std::vector<OpKind> ik = {OpKind::Neg, OpKind::Abs, OpKind::Not};
    add(emit(r.pick(ik), {a}));
    return;
  }
  if (r.coin(0.2)) {
    add(emit(r.coin() ? OpKind::Neg : OpKind::Abs, {a}));
    return;
  }
  static const std::vector<OpKind> mk = {OpKind::Exp,  OpKind::Exp2, OpKind::Log,     OpKind::Log2, OpKind::Sqrt,
                                         OpKind::Rsqrt, OpKind::Sin, OpKind::Cos,     OpKind::Tanh, OpKind::Sigmoid,
                                         OpKind::Erf,  OpKind::Floor, OpKind::Ceil};
  OpKind k = r.pick(mk);
  const bool exact = info(a).exact;
  if ((k == OpKind::Floor || k == OpKind::Ceil) && !exact) k = OpKind::Tanh;
  if (k == OpKind::Floor || k == OpKind::Ceil) {
    add(emit(k, {a}));
  } else if (k == OpKind::Sqrt) {
    add(emit(k, {exact ? a : emit(OpKind::Abs, {a})}));  // exact: sqrt(-x) is NaN on both sides
  } else {
    Value* x = guard(a, safe_bound(k, s));
    if (k == OpKind::Log || k == OpKind::Log2 || k == OpKind::Rsqrt)
      x = emit(OpKind::Add, {emit(OpKind::Abs, {x}), c_float(1, s, a->type.shape)});  // >= 1
    add(emit(k, {x}));
  }
}

void Gen::gen_fma() {
  Value* a = pick([](Gen&, Value* v) { return v->type.dtype.is_float(); });
  if (!a) return;
  const DType d = a->type.dtype;
  Value* x = operand(d, a->type.shape, false);
  Value* y = operand(d, a->type.shape, false);
  const bool exact = info(a).exact && info(x).exact && info(y).exact;
  if (!exact || d.scalar == Scalar::f16 || d.scalar == Scalar::bf16) {
    const double lim = safe_bound(OpKind::Fma, d.scalar);
    a = guard(a, lim), x = guard(x, lim), y = guard(y, lim);
  }
  if (llvm_minmax_hazard(OpKind::Fma, a, x)) return;
  add(emit(OpKind::Fma, {a, x, y}));
}

void Gen::gen_compare() {
  Value* a = pick([](Gen& g, Value* v) { return is_data(v) && (!v->type.dtype.is_float() || g.info(v).exact); });
  if (!a) return;
  Value* y = operand(a->type.dtype, a->type.shape, true);
  static const std::vector<OpKind> ck = {OpKind::CmpEq, OpKind::CmpNe, OpKind::CmpLt,
                                         OpKind::CmpLe, OpKind::CmpGt, OpKind::CmpGe};
  add(emit(r.pick(ck), {a, y}));
}

void Gen::gen_select() {
  Value* a = pick([](Gen&, Value* v) { return is_data(v); });
  if (!a) return;
  Value* y = operand(a->type.dtype, a->type.shape, false);
  Value* c = operand(DType{Scalar::i1}, a->type.shape, true);
  if (a->type.dtype.is_float() && (!info(a).exact || !info(y).exact)) {
    a = guard(a, safe_bound(OpKind::Select, a->type.dtype.scalar));
    y = guard(y, safe_bound(OpKind::Select, a->type.dtype.scalar));
  }
  add(emit(OpKind::Select, {c, a, y}));
}

void Gen::gen_cast() {
  Value* a = pick([](Gen&, Value* v) { return is_data(v); });
  if (!a) return;
  add(dtype_to(a, DType{r.coin(0.6) ? random_scalar() : palette_scalar()}));
}

void Gen::gen_reduce() {
  Value* a = pick([](Gen&, Value* v) { return is_data(v) && !v->type.shape.empty(); });
  if (!a) return;
  const DType d = a->type.dtype;
  const int axis = static_cast<int>(r.below(a->type.rank()));
  const int64_t len = a->type.shape[static_cast<size_t>(axis)];
  const Shape out = reduced(a->type.shape, axis);
  const int64_t k = r.below(100);
  const Attr ax{"axis", int64_t{axis}};
  if (k < 20) {  // a generic reduce: the combine is a one-op body
    static const std::vector<OpKind> ic = {OpKind::Add, OpKind::Max, OpKind::Min, OpKind::Xor, OpKind::And, OpKind::Or};
    static const std::vector<OpKind> fc = {OpKind::Add, OpKind::Max, OpKind::Min};
    const OpKind combine = d.is_float() ? r.pick(fc) : r.pick(ic);
    Value* x = a;
    if (d.is_float() && combine == OpKind::Add && (len > 2 || !info(a).exact))
      x = guard(a, safe_bound(OpKind::Reduce, d.scalar, len));
    Op& red = b->reduce_region(x, axis);
    Block* outer = b->block();
    b->set_block(&red.body());
    Value* c = b->value(combine, {red.body().args[0], red.body().args[1]});
    b->create(OpKind::Yield, {c});
    b->set_block(outer);
    ++uses_[x];
    const Info in[] = {info(x)};
    info_[red.results[0]] = transfer(red, in, ctx);
    add(red.results[0]);
    return;
  }
  OpKind rk = k < 50 ? OpKind::ReduceSum : k < 65 ? OpKind::ReduceMax : k < 75 ? OpKind::ReduceMin
            : k < 88 ? OpKind::ArgMax : OpKind::ArgMin;
  if ((rk == OpKind::ArgMax || rk == OpKind::ArgMin) && d.is_float() && !info(a).exact) rk = OpKind::ReduceMax;
  Value* x = a;
  if (rk == OpKind::ReduceSum && d.is_float() && (len > 2 || !info(a).exact))
    x = guard(a, safe_bound(OpKind::ReduceSum, d.scalar, len));
  const DType rd = rk == OpKind::ArgMax || rk == OpKind::ArgMin ? DType{Scalar::i32} : d;
  add(emit(rk, {x}, {Type{rd, out}}, {ax}));
}

void Gen::gen_scan() {
  Value* a = pick([](Gen&, Value* v) { return is_data(v) && !v->type.shape.empty(); });
  if (!a) return;
  const int axis = static_cast<int>(r.below(a->type.rank()));
  const int64_t len = a->type.shape[static_cast<size_t>(axis)];
  Value* x = a;
  if (a->type.dtype.is_float() && (len > 2 || !info(a).exact))
    x = guard(a, safe_bound(OpKind::CumSum, a->type.dtype.scalar, len));
  add(emit(OpKind::CumSum, {x}, {}, {{"axis", int64_t{axis}}}));
}

void Gen::gen_shape() {
  Value* a = pick([](Gen&, Value* v) { return is_data(v); });
  if (!a) return;
  const Shape& s = a->type.shape;
  std::vector<Shape> targets;
  for (Value* v : pool_)  // shapes already in use combine with more values
    if (v->type.shape != s && std::find(targets.begin(), targets.end(), v->type.shape) == targets.end())
      targets.push_back(v->type.shape);
  if (!s.empty()) {
    const int64_t k = numel(s);
    targets.push_back({k});
    for (int64_t x = 1; x <= k; x *= 2) targets.push_back({x, k / x});
    if (s.size() == 2) targets.push_back({s[1], s[0]});
  }
  for (int attempt = 0; attempt < 4 && !targets.empty(); ++attempt) {
    const Shape t = r.pick(targets);
    if (t.empty() || t == s) continue;
    if (Value* v = shape_to(a, t)) {
      add(v);
      return;
    }
  }
}

// A runtime loop `for iv in range(lo, hi, step)` carrying 1-3 values of the pool, its body a
// few random ops (loads of an iv-indexed slice among them), each carried value's next value
// one of the body's of the same type.
void Gen::gen_loop() {
  const Scalar ivs = r.coin(0.8) ? Scalar::i32 : Scalar::i64;
  const int id = static_cast<int>(trips_.size());
  const int64_t lo_v = r.coin(0.6) ? 0 : r.range(-2, 3), step_v = r.coin(0.6) ? 1 : r.range(2, 3);
  Value* lo = r.coin() || params_full(14) ? c_int(lo_v, ivs) : int_param("lo" + std::to_string(id), ivs, lo_v);
  Value* stp = r.coin() || params_full(14) ? c_int(step_v, ivs) : int_param("step" + std::to_string(id), ivs, step_v);
  Value* hi = nullptr;
  int64_t trips = 0;
  if (r.coin(0.3)) {  // per-program trip counts: hi = lo + (pid % K) * step
    const int64_t K = r.range(2, 4);
    Value* m = emit(OpKind::Rem, {pid_lin, c_int(K, Scalar::i32)});
    if (ivs != Scalar::i32) m = dtype_to(m, DType{ivs});
    hi = emit(OpKind::Add, {lo, emit(OpKind::Mul, {m, stp})});
    trips = K - 1;
  } else {
    trips = r.range(0, 4);
    const int64_t hi_v = lo_v + trips * step_v - (trips > 0 ? r.below(step_v) : r.below(3));
    hi = r.coin(0.7) && !params_full(14) ? int_param("hi" + std::to_string(id), ivs, hi_v) : c_int(hi_v, ivs);
  }
  // Carried values and what the body may assume of them (kept true by guards at the yield).
  const int nc = static_cast<int>(r.range(1, 3));
  std::vector<Value*> inits;
  std::vector<Info> assumed;
  for (int i = 0; i < nc; ++i) {
    Value* v = pick([](Gen&, Value* x) { return is_data(x); });
    if (!v) return;
    Info a = unknown_of(v->type.dtype);
    a.zsign = v->type.dtype.is_float();  // anything the body may yield, a zero of either sign included
    if (v->type.dtype.is_float() && !info(v).exact) {
      const double lim = std::min(1024.0, safe_bound(OpKind::Mul, v->type.dtype.scalar));
      v = guard(v, lim);
      a = Info{false, false, true, -lim, lim, info(v).err, false};
    }
    inits.push_back(v);
    assumed.push_back(a);
  }
  Op& loop = b->for_loop(lo, hi, stp, inits);
  for (Value* v : loop.operands) ++uses_[v];
  trips_[&loop] = trips;
  Block* outer = b->block();
  b->set_block(&loop.body());
  const size_t mark = pool_.size();
  ++loop_depth;
  Value* iv = loop.body().args[0];
  info_[iv] = exact_range(static_cast<double>(lo_v),
                          static_cast<double>(lo_v + std::max<int64_t>(trips - 1, 0) * step_v));
  add(iv);
  for (int i = 0; i < nc; ++i) {
    info_[loop.body().args[static_cast<size_t>(i) + 1]] = assumed[static_cast<size_t>(i)];
    add(loop.body().args[static_cast<size_t>(i) + 1]);
  }
  if (lo_v >= 0 && r.coin(0.6)) gen_load(iv, lo_v + std::max<int64_t>(trips - 1, 0) * step_v + 1);
  const int64_t body_ops = r.range(3, 9);
  for (int64_t i = 0; i < body_ops; ++i) step();
  std::vector<Value*> next;
  for (int i = 0; i < nc; ++i) {
    Value* arg = loop.body().args[static_cast<size_t>(i) + 1];
    const Info& a = assumed[static_cast<size_t>(i)];
    std::vector<Value*> c;
    for (size_t j = mark; j < pool_.size(); ++j) {
      Value* v = pool_[j];
      if (v->type == arg->type && (!v->type.dtype.is_float() || !a.exact || info(v).exact)) c.push_back(v);
    }
    Value* y = c.empty() ? arg : r.pick(c);
    if (!a.exact) y = guard(y, a.hi);
    next.push_back(y);
  }
  for (Value* v : next) ++uses_[v];
  b->create(OpKind::Yield, next);
  --loop_depth;
  pool_.resize(mark);
  b->set_block(outer);
  const std::vector<Info> res = analyze_loop(loop);
  for (int i = 0; i < nc; ++i) {
    info_[loop.results[static_cast<size_t>(i)]] = res[static_cast<size_t>(i)];
    add(loop.results[static_cast<size_t>(i)]);
  }
}

void Gen::analyze_block(const Block& blk) {
  for (const auto& op : blk.ops) {
    if (op->kind == OpKind::Yield || op->results.empty()) continue;
    if (op->kind == OpKind::For) {
      const std::vector<Info> res = analyze_loop(*op);
      for (size_t i = 0; i < res.size(); ++i) info_[op->results[i]] = res[i];
      continue;
    }
    std::vector<Info> in;
    for (const Value* v : op->operands) in.push_back(v->type.dtype.ptr ? Info{} : info(v));
    info_[op->results[0]] = op->results[0]->type.dtype.ptr ? Info{} : transfer(*op, in, ctx);
  }
}

// The loop's results for any trip count up to its largest: the join of the carried values'
// Infos after 0, 1, ..., trips iterations of the body's transfer functions.
std::vector<Info> Gen::analyze_loop(const Op& loop) {
  const Block& body = loop.body();
  const size_t nc = loop.results.size();
  std::vector<Info> cur, joined;
  for (size_t i = 0; i < nc; ++i) cur.push_back(info(loop.operands[3 + i]));
  joined = cur;
  for (int64_t t = 0; t < trips_.at(&loop); ++t) {
    for (size_t i = 0; i < nc; ++i) info_[body.args[i + 1]] = cur[i];
    analyze_block(body);
    for (size_t i = 0; i < nc; ++i) {
      cur[i] = info(body.terminator()->operands[i]);
      joined[i] = join(joined[i], cur[i]);
    }
  }
  for (size_t i = 0; i < nc; ++i) info_[body.args[i + 1]] = joined[i];
  return joined;
}

Program Gen::run() {
  setup_kernel();
  const int64_t steps = r.range(12, 40);
  for (int64_t i = 0; i < steps; ++i) step();
  gen_outputs();
  tessel::ir::verify(*f);
  p.shape = (two_d ? "2-D " + std::to_string(R) + "x" + std::to_string(C) + " tile " + std::to_string(BM) + "x" +
                         std::to_string(BN)
                   : "1-D n=" + std::to_string(n) + " B=" + std::to_string(B)) +
            ", " + std::to_string(n_ops) + " ops, " + std::to_string(n_inputs) + " inputs, " +
            std::to_string(n_outputs) + " outputs";
  return std::move(p);
}

Program generate(uint64_t seed) {
  Gen g(seed);
  try {
    return g.run();
  } catch (const std::logic_error& e) {  // a generator bug: show the program as far as it got
    throw std::logic_error(std::string(e.what()) + "\n  the program so far:\n" + tessel::ir::print(*g.f));
  }
}

}  // namespace fuzz
