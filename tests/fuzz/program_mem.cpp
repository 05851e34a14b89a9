// The program generator's memory side: the kernel's parameters and index tiles, buffers and
// their data, loads (access patterns, masks, `other`), stores, atomics, and the launch text.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <sstream>

#include "gen_internal.hpp"
#include "tessel/interp/float_formats.hpp"

namespace fuzz {

namespace {

constexpr Scalar kAll[] = {Scalar::i1,  Scalar::i8,  Scalar::i16, Scalar::i32, Scalar::i64,
                           Scalar::f16, Scalar::bf16, Scalar::f32, Scalar::f64};

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
bool is_data(const Value* v) { return !v->type.dtype.ptr; }
std::string fmt_double(double v) {
  std::ostringstream o;
  o.precision(17);
  o << v;
  return o.str();
}

// Writes element i of a buffer of `s` from a double (floats, rounded to the format) or an
// integer (wrapped to the width); returns the value as stored.
double put_float(std::vector<std::byte>& buf, size_t i, Scalar s, double v) {
  switch (s) {
    case Scalar::f16: {
      const uint16_t h = tessel::interp::f16_from_double(v);
      std::memcpy(buf.data() + 2 * i, &h, 2);
      return tessel::interp::f16_to_double(h);
    }
    case Scalar::bf16: {
      const uint16_t h = tessel::interp::bf16_from_double(v);
      std::memcpy(buf.data() + 2 * i, &h, 2);
      return tessel::interp::bf16_to_double(h);
    }
    case Scalar::f32: {
      const float x = static_cast<float>(v);
      std::memcpy(buf.data() + 4 * i, &x, 4);
      return x;
    }
    default:
      std::memcpy(buf.data() + 8 * i, &v, 8);
      return v;
  }
}
int64_t put_int(std::vector<std::byte>& buf, size_t i, Scalar s, int64_t v) {
  const int w = tessel::ir::bit_width(s);
  if (s == Scalar::i1) v &= 0xFF;  // a byte; any nonzero byte reads as 1
  else if (w < 64) v = static_cast<int64_t>(static_cast<uint64_t>(v) << (64 - w)) >> (64 - w);
  const size_t es = static_cast<size_t>(DType{s}.bytes());
  std::memcpy(buf.data() + es * i, &v, es);  // little-endian: the low bytes
  return s == Scalar::i1 ? (v != 0) : v;
}

}  // namespace

Scalar Gen::random_scalar() { return kAll[r.below(9)]; }
Scalar Gen::palette_scalar() { return r.pick(palette_); }

size_t Gen::new_buffer(const std::string& name, Scalar elem, size_t count, bool written) {
  Buffer buf;
  buf.name = name;
  buf.elem = elem;
  buf.count = std::max<size_t>(count, 1);
  buf.written = written;
  buf.init.resize(buf.bytes());
  p.buffers.push_back(std::move(buf));
  buf_info_.push_back(Info{});
  tessel::ir::ParamSpec spec;
  spec.div16 = r.coin(0.5);  // device and host buffers are aligned far beyond 16 bytes
  f->add_param(name, Type{DType{elem, true}, {}}, spec);
  Arg a;
  a.kind = Arg::Buf;
  a.buffer = p.buffers.size() - 1;
  p.args.push_back(a);
  return p.buffers.size() - 1;
}

Value* Gen::buffer_param(size_t buffer) {
  for (size_t i = 0; i < p.args.size(); ++i)
    if (p.args[i].kind == Arg::Buf && p.args[i].buffer == buffer) return f->body.args[i];
  throw std::logic_error("fuzz generator: no parameter for a buffer");
}

Value* Gen::int_param(const std::string& name, Scalar s, int64_t v) {
  tessel::ir::ParamSpec spec;
  spec.div16 = v % 16 == 0 && r.coin(0.5);
  spec.equal1 = v == 1 && r.coin(0.5);
  Value* a = f->add_param(name, Type{DType{s}, {}}, spec);
  info_[a] = exact_range(static_cast<double>(v), static_cast<double>(v));
  Arg g;
  g.kind = Arg::Int;
  g.i = v;
  p.args.push_back(g);
  return a;
}

Value* Gen::float_param(const std::string& name, Scalar s, double v) {
  std::vector<std::byte> tmp(8);
  v = put_float(tmp, 0, s, v);  // the value the kernel sees, rounded to the format
  Value* a = f->add_param(name, Type{DType{s}, {}});
  info_[a] = float_range(v, v, false);
  Arg g;
  g.kind = Arg::Float;
  g.f = v;
  p.args.push_back(g);
  return a;
}

// Random contents for an input (or an atomic target): a distribution per buffer, the range
// of what was written recorded as the buffer's Info.
void Gen::fill_input(size_t buffer, bool specials) {
  Buffer& buf = p.buffers[buffer];
  const Scalar s = buf.elem;
  Info in;
  in.lo = std::numeric_limits<double>::infinity(), in.hi = -in.lo;
  std::ostringstream what;
  const int64_t dist = r.below(specials ? 4 : 3);
  if (DType{s}.is_float()) {
    static const double kSpecial[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 65504.0, -3.0e38, 0x1p-126, 0x1p-140,
                                      0.5, -2.5, 1e30};
    const double R = dist == 1 ? r.pick(std::vector<double>{4.0, 100.0, 3000.0}) : dist == 2 ? 8.0 : dist == 3 ? 4.0 : 1.0;
    what << name_of(s) << (dist == 2 ? " halves in [-" : " uniform [-") << R << ", " << R << "]"
         << (dist == 3 ? " with 10% specials (+-0, +-inf, NaN, huge, tiny)" : "");
    for (size_t i = 0; i < buf.count; ++i) {
      double v = dist == 2 ? static_cast<double>(r.range(-16, 16)) / 2 : (2 * r.uniform() - 1) * R;
      if (dist == 3 && r.coin(0.1)) v = kSpecial[r.below(12)];
      v = put_float(buf.init, i, s, v);
      if (std::isnan(v)) in.nan = true;
      else in.lo = std::min(in.lo, v), in.hi = std::max(in.hi, v);
    }
    if (in.lo > in.hi) in.lo = in.hi = 0;  // all NaN
  } else {
    const bool bit = s == Scalar::i1;
    what << name_of(s) << (bit ? (dist == 3 ? " bytes 0/1 and other nonzero bytes" : " bytes 0/1")
                               : dist == 0 ? " small [-8, 8]" : dist == 1 ? " [0, 63]" : dist == 2 ? " random bits"
                                                                                      : " extremes (min, max, -1, 0, 1) and small");
    const int w = tessel::ir::bit_width(s);
    const int64_t mn = w == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (w - 1));
    const int64_t mx = w == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (w - 1)) - 1;
    for (size_t i = 0; i < buf.count; ++i) {
      int64_t v;
      if (bit) v = dist == 3 && r.coin(0.2) ? r.pick(std::vector<int64_t>{2, 128, 255}) : r.below(2);
      else if (dist == 0) v = r.range(-8, 8);
      else if (dist == 1) v = r.range(0, 63);
      else if (dist == 2) v = static_cast<int64_t>(r.next());
      else v = r.coin(0.3) ? r.pick(std::vector<int64_t>{mn, mx, -1, 0, 1, mn + 1}) : r.range(-8, 8);
      v = put_int(buf.init, i, s, v);
      in.lo = std::min(in.lo, static_cast<double>(v)), in.hi = std::max(in.hi, static_cast<double>(v));
    }
  }
  buf.fill = what.str();
  buf_info_[buffer] = in;
}

void Gen::setup_kernel() {
  two_d = r.coin(0.45);
  const int np = static_cast<int>(r.range(2, 4));
  for (int i = 0; i < np; ++i) palette_.push_back(random_scalar());
  p.num_warps = static_cast<int>(r.pick(std::vector<int64_t>{1, 2, 4, 4, 8}));
  const Scalar i32 = Scalar::i32;
  if (!two_d) {
    n = r.pick(std::vector<int64_t>{1, 2, 3, 5, 7, 16, 31, 100, 127, 128, 129, 255, 1000, 1023, 1025, 2049, 4097});
    B = int64_t{1} << r.pick(std::vector<int64_t>{0, 2, 4, 5, 5, 6, 6, 7, 7, 8, 9, 10});
    while (ceil_div(n, B) > 257) B *= 2;
    tile = {B};
    p.grid = tessel::interp::Grid{ceil_div(n, B), 1, 1};
  } else {
    static const std::vector<int64_t> sizes = {1, 2, 3, 7, 16, 17, 33, 64, 100, 129};
    R = r.pick(sizes), C = r.pick(sizes);
    BM = int64_t{1} << r.range(0, 6), BN = int64_t{1} << r.range(0, 6);
    while (BM * BN > 2048) (BM > BN ? BM : BN) /= 2;
    while (ceil_div(R, BM) * ceil_div(C, BN) > 256) (BM < BN ? BM : BN) *= 2;
    tile = {BM, BN};
    p.grid = tessel::interp::Grid{ceil_div(R, BM), ceil_div(C, BN), 1};
  }
  grid_total = p.grid.x * p.grid.y * p.grid.z;
  ctx.grid[0] = p.grid.x, ctx.grid[1] = p.grid.y, ctx.grid[2] = p.grid.z;
  if (p.grid.x % 2 == 0 && p.num_warps <= 8 && r.coin(0.15)) p.programs_per_cta = 2;

  if (!two_d) {
    n_val = int_param("n", i32, n);
    Value* pid = emit(OpKind::ProgramId, {}, {}, {{"axis", int64_t{0}}});
    pid_lin = pid;
    Value* base = emit(OpKind::Splat, {emit(OpKind::Mul, {pid, c_int(B, i32)})}, {Type{DType{i32}, tile}});
    offs = emit(OpKind::Add, {base, emit(OpKind::Arange, {}, {Type{DType{i32}, tile}}, {{"end", B}, {"start", int64_t{0}}})});
    mask = emit(OpKind::CmpLt, {offs, emit(OpKind::Splat, {n_val}, {Type{DType{i32}, tile}})});
  } else {
    r_val = int_param("R", i32, R);
    c_val = int_param("C", i32, C);
    Value* pm = emit(OpKind::ProgramId, {}, {}, {{"axis", int64_t{0}}});
    Value* pn = emit(OpKind::ProgramId, {}, {}, {{"axis", int64_t{1}}});
    pid_lin = emit(OpKind::Add, {emit(OpKind::Mul, {pm, emit(OpKind::NumPrograms, {}, {}, {{"axis", int64_t{1}}})}), pn});
    auto span = [&](Value* pidv, int64_t len) {
      Value* base = emit(OpKind::Splat, {emit(OpKind::Mul, {pidv, c_int(len, i32)})}, {Type{DType{i32}, {len}}});
      return emit(OpKind::Add, {base, emit(OpKind::Arange, {}, {Type{DType{i32}, {len}}}, {{"end", len}, {"start", int64_t{0}}})});
    };
    rows = span(pm, BM);
    cols = span(pn, BN);
    rows_t = shape_to(rows, tile);
    cols_t = shape_to(cols, tile);
    if (BM == BN) {  // shape_to may pick either axis for a square tile: make the roles explicit
      rows_t = emit(OpKind::Broadcast, {emit(OpKind::ExpandDims, {rows}, {Type{DType{i32}, {BM, 1}}}, {{"axis", int64_t{1}}})},
                    {Type{DType{i32}, tile}});
      cols_t = emit(OpKind::Broadcast, {emit(OpKind::ExpandDims, {cols}, {Type{DType{i32}, {1, BN}}}, {{"axis", int64_t{0}}})},
                    {Type{DType{i32}, tile}});
    }
    mask = emit(OpKind::And, {emit(OpKind::CmpLt, {rows_t, shape_to(r_val, tile)}), emit(OpKind::CmpLt, {cols_t, shape_to(c_val, tile)})});
    offs = emit(OpKind::Add, {emit(OpKind::Mul, {rows_t, shape_to(c_val, tile)}), cols_t});
  }
  // The index tiles join the pool now and then (gen_index), not at once: they would crowd it.
  const int64_t loads = r.range(1, 3);
  for (int64_t i = 0; i < loads; ++i) gen_load();
  if (r.coin(0.4)) {
    const Scalar s = r.pick(std::vector<Scalar>{Scalar::i8, Scalar::i16, Scalar::i32, Scalar::i64});
    add(int_param("si", s, s == Scalar::i8 ? r.range(-128, 127) : r.range(-1000, 1000)));
  }
  if (r.coin(0.4)) add(float_param("sf", r.pick(std::vector<Scalar>{Scalar::f16, Scalar::bf16, Scalar::f32, Scalar::f64}),
                                   (2 * r.uniform() - 1) * 10));
}

Value* Gen::index_tile(const Shape& sh) {
  const int64_t k = numel(sh);
  Value* a = emit(OpKind::Arange, {}, {Type{DType{Scalar::i32}, {k}}}, {{"end", k}, {"start", int64_t{0}}});
  return sh.size() == 1 ? a : emit(OpKind::Reshape, {a}, {Type{DType{Scalar::i32}, sh}});
}

// A load of a new input buffer through one access pattern; in a loop body (iv given), of the
// slice iv of a buffer of `slices` slices.
void Gen::gen_load(Value* iv, int64_t slices) {
  if (params_full(12)) return;  // room for the outputs
  const Scalar s = r.coin(0.8) ? palette_scalar() : random_scalar();
  const Scalar i32 = Scalar::i32;
  const DType ti{i32};
  Value* off = nullptr;       // i32 offsets, scalar or tile
  Value* need = nullptr;      // the mask that keeps the access in bounds (null: always in bounds)
  int64_t count = 0;
  std::string how;
  const int64_t pat = iv ? 0 : r.below(7);
  auto sp = [&](Value* v, const Shape& sh) { return shape_to(v, sh); };
  if (!two_d) {
    switch (pat) {
      case 0: off = offs, need = mask, count = n, how = "contiguous"; break;
      case 1: {
        const int64_t st = r.range(1, 3);
        Value* stv = r.coin() ? int_param("stride" + std::to_string(n_inputs), i32, st) : c_int(st, i32);
        off = emit(OpKind::Mul, {offs, sp(stv, tile)}), need = mask, count = (n - 1) * st + 1, how = "strided";
        break;
      }
      case 2:
        off = emit(OpKind::Sub, {sp(emit(OpKind::Sub, {n_val, c_int(1, i32)}), tile), offs}), need = mask, count = n;
        how = "reversed";
        break;
      case 3: off = emit(OpKind::Shr, {offs, c_int(1, i32, tile)}), need = mask, count = (n + 1) / 2, how = "pairs (offs >> 1)"; break;
      case 4: off = pid_lin, count = grid_total, how = "one scalar per program"; break;
      default: break;
    }
  } else {
    switch (pat) {
      case 0: case 1: {
        const int64_t ld = (pat == 0 ? C : R) + r.pick(std::vector<int64_t>{0, 0, 1, 3, 16});
        Value* ldv = r.coin() ? int_param("ld" + std::to_string(n_inputs), i32, ld) : c_int(ld, i32);
        Value* major = pat == 0 ? rows_t : cols_t;
        Value* minor = pat == 0 ? cols_t : rows_t;
        off = emit(OpKind::Add, {emit(OpKind::Mul, {major, sp(ldv, tile)}), minor}), need = mask;
        count = ((pat == 0 ? R : C) - 1) * ld + (pat == 0 ? C : R);
        how = pat == 0 ? "row-major, leading dim " + std::to_string(ld) : "column-major (transposed), leading dim " + std::to_string(ld);
        break;
      }
      case 2: off = cols, need = emit(OpKind::CmpLt, {cols, sp(c_val, {BN})}), count = C, how = "a row vector [BN]"; break;
      case 3: off = rows, need = emit(OpKind::CmpLt, {rows, sp(r_val, {BM})}), count = R, how = "a column vector [BM]"; break;
      case 4: off = pid_lin, count = grid_total, how = "one scalar per program"; break;
      case 5:
        off = cols_t, need = emit(OpKind::CmpLt, {cols_t, sp(c_val, tile)}), count = C;
        how = "a row broadcast over the tile's rows";
        break;
      default: break;
    }
  }
  if (!off) {  // a gather: offsets from the program's integer data, masked to a small table
    const int64_t T = int64_t{1} << r.range(3, 6);
    Value* src = pick([](Gen&, Value* v) { return v->type.dtype.is_int() && !v->type.shape.empty(); });
    if (!src) src = offs;
    off = emit(OpKind::And, {dtype_to(src, ti), c_int(T - 1, i32, src->type.shape)}), count = T;
    how = "gathered from a table of " + std::to_string(T) + " by integer data";
  }
  if (iv) {  // slice iv of `slices`
    const int64_t slice = count;  // the extent one slice's accesses reach
    Value* ivi = dtype_to(iv, ti);
    off = emit(OpKind::Add, {off, sp(emit(OpKind::Mul, {ivi, c_int(slice, i32)}), off->type.shape)});
    count = slices * slice;
    how += ", slice iv of " + std::to_string(slices);
  }
  const Shape sh = off->type.shape;
  const size_t buf = new_buffer("in" + std::to_string(n_inputs++), s, static_cast<size_t>(std::max<int64_t>(count, 1)), false);
  fill_input(buf, r.coin(0.3));
  p.buffers[buf].fill += ", " + how;
  if (r.coin(0.2)) off = dtype_to(off, DType{Scalar::i64});
  Value* param = buffer_param(buf);
  Value* ptr = emit(OpKind::AddPtr, {sh.empty() ? param : emit(OpKind::Splat, {param}, {Type{DType{s, true}, sh}}), off});
  Value* m = need;
  if (!sh.empty() && r.coin(0.3)) {  // a data-dependent mask on top
    Value* extra = operand(DType{Scalar::i1}, sh, true);
    m = m ? emit(OpKind::And, {m, extra}) : extra;
  }
  std::vector<Value*> ops = {ptr};
  if (m) {
    ops.push_back(m);
    if (r.coin(0.5)) {  // an inexact `other` next to data that may be NaN or infinite has no bound
      Value* other = operand(DType{s}, sh, !buf_info_[buf].finite());
      ops.push_back(other);
    }
  }
  pending_mem_ = buf_info_[buf];
  add(emit(OpKind::Load, ops));
}

// Stores `v` to a new output: into the index space (masked), transposed, or to the program's
// own slab of a per-program array (optionally under a data-dependent mask).
void Gen::store_value(Value* v) {
  const DType d = v->type.dtype;
  const Shape sh = v->type.shape;
  const Scalar i32 = Scalar::i32;
  Value* off = nullptr;
  Value* m = nullptr;
  int64_t count = 0;
  std::string how;
  if (sh == tile && r.coin(0.6)) {
    if (!two_d) {
      off = offs, m = mask, count = n, how = "the index space (masked)";
    } else {
      const int64_t ld = C + r.pick(std::vector<int64_t>{0, 0, 2});
      off = emit(OpKind::Add, {emit(OpKind::Mul, {rows_t, c_int(ld, i32, tile)}), cols_t}), m = mask;
      count = (R - 1) * ld + C, how = "the index space, row-major, leading dim " + std::to_string(ld) + " (masked)";
    }
  } else if (two_d && sh == Shape{BN, BM} && BM != BN && r.coin(0.7)) {
    const Shape ts{BN, BM};
    Value* rr = emit(OpKind::Broadcast, {emit(OpKind::ExpandDims, {rows}, {Type{DType{i32}, {1, BM}}}, {{"axis", int64_t{0}}})}, {Type{DType{i32}, ts}});
    Value* cc = emit(OpKind::Broadcast, {emit(OpKind::ExpandDims, {cols}, {Type{DType{i32}, {BN, 1}}}, {{"axis", int64_t{1}}})}, {Type{DType{i32}, ts}});
    off = emit(OpKind::Add, {emit(OpKind::Mul, {cc, c_int(R, i32, ts)}), rr});
    m = emit(OpKind::And, {emit(OpKind::CmpLt, {rr, shape_to(r_val, ts)}), emit(OpKind::CmpLt, {cc, shape_to(c_val, ts)})});
    count = C * R, how = "the index space, column-major from a [BN, BM] tile (masked)";
  } else {
    const int64_t k = numel(sh);
    Value* base = emit(OpKind::Mul, {pid_lin, c_int(k, i32)});
    off = sh.empty() ? base : emit(OpKind::Add, {shape_to(base, sh), index_tile(sh)});
    count = grid_total * k, how = "per-program slabs of " + std::to_string(k);
  }
  if (!sh.empty() && r.coin(0.3)) {
    Value* extra = operand(DType{Scalar::i1}, sh, true);
    m = m ? emit(OpKind::And, {m, extra}) : extra;
    how += " under a data-dependent mask";
  }
  const size_t buf = new_buffer("out" + std::to_string(n_outputs++), d.scalar, static_cast<size_t>(count), true);
  for (auto& byte : p.buffers[buf].init) byte = static_cast<std::byte>(r.next());
  p.buffers[buf].fill = std::string(name_of(d.scalar)) + " poison (random bytes), written to " + how;
  const Info& iv = info(v);
  p.buffers[buf].exact = !d.is_float() || iv.exact;
  p.buffers[buf].abs_err = d.is_float() && !iv.exact ? iv.err : 0;
  Value* param = buffer_param(buf);
  Value* ptr = emit(OpKind::AddPtr, {sh.empty() ? param : emit(OpKind::Splat, {param}, {Type{d.pointer_to(), sh}}), off});
  std::vector<Value*> ops = {ptr, v};
  if (m) ops.push_back(m);
  emit(OpKind::Store, ops);
}

// atomic_add / atomic_max of `v` (cast to a dtype with atomics) into a new buffer: to unique
// addresses (each program its own slab; the old values are stored too), or, for integers, to
// a small table with collisions (the final values do not depend on the order).
void Gen::atomic_value(Value* v) {
  const bool add_op = r.coin();
  const bool fl = v->type.dtype.is_float();
  const Scalar t = fl ? (add_op && r.coin() ? Scalar::f64 : Scalar::f32) : (r.coin() ? Scalar::i32 : Scalar::i64);
  Value* x = dtype_to(v, DType{t});
  if (!x) return store_value(v);
  if (fl) x = guard(x, safe_bound(OpKind::AtomicAdd, t, 1));  // finite, no NaN (f32 max is unspecified with NaN)
  const Shape sh = x->type.shape;
  const Scalar i32 = Scalar::i32;
  const bool table = !fl && !sh.empty() && r.coin(0.4);
  const int64_t k = numel(sh);
  Value* off;
  int64_t count;
  if (table) {
    count = int64_t{1} << r.range(0, 4);
    off = emit(OpKind::And, {dtype_to(x, DType{i32}), c_int(count - 1, i32, sh)});
  } else {
    Value* base = emit(OpKind::Mul, {pid_lin, c_int(k, i32)});
    off = sh.empty() ? base : emit(OpKind::Add, {shape_to(base, sh), index_tile(sh)});
    count = grid_total * k;
  }
  const size_t buf = new_buffer("acc" + std::to_string(n_outputs++), t, static_cast<size_t>(count), true);
  fill_input(buf, false);
  p.buffers[buf].fill += table ? ", atomic target: a table of " + std::to_string(count) + " slots (collisions)"
                               : ", atomic target: per-program slabs (unique addresses)";
  Value* param = buffer_param(buf);
  Value* ptr = emit(OpKind::AddPtr, {sh.empty() ? param : emit(OpKind::Splat, {param}, {Type{DType{t, true}, sh}}), off});
  std::vector<Value*> ops = {ptr, x};
  if (!sh.empty() && r.coin(0.3)) ops.push_back(operand(DType{Scalar::i1}, sh, true));
  const Info& xi = info(x);
  const Info& old = buf_info_[buf];
  p.buffers[buf].exact = !fl || xi.exact;
  p.buffers[buf].abs_err = fl && !xi.exact ? xi.err + (add_op ? ulp_at(t, old.mag() + xi.mag()) : 0) : 0;
  pending_mem_ = old;
  Value* olds = emit(add_op ? OpKind::AtomicAdd : OpKind::AtomicMax, ops);
  if (!table) store_value(olds);  // unique targets: the old values are the initial contents
}

void Gen::gen_outputs() {
  std::vector<Value*> leaves;
  for (Value* v : pool_)
    if (is_data(v) && uses_[v] == 0 && v->def && v->def->kind != OpKind::Constant) leaves.push_back(v);
  const int64_t want = r.range(2, 5);
  std::vector<Value*> outs;
  for (size_t i = leaves.size(); i-- > 0 && static_cast<int64_t>(outs.size()) < want;)
    if (r.coin(0.8)) outs.push_back(leaves[i]);
  while (static_cast<int64_t>(outs.size()) < want && !pool_.empty()) outs.push_back(r.pick(pool_));
  for (Value* v : outs) {
    if (params_full(2)) break;
    if (r.coin(0.15)) atomic_value(v);
    else store_value(v);
  }
}

std::string Program::launch() const {
  std::ostringstream o;
  o << "launch: grid (" << grid.x << ", " << grid.y << ", " << grid.z << "), num_warps " << num_warps
    << ", programs_per_cta " << programs_per_cta << "\n";
  for (size_t i = 0; i < args.size(); ++i) {
    o << "  %" << fn->params.at(i).name << " = ";
    const Arg& a = args[i];
    if (a.kind == Arg::Int) o << a.i << "\n";
    else if (a.kind == Arg::Float) o << fmt_double(a.f) << "\n";
    else {
      const Buffer& b = buffers.at(a.buffer);
      o << (b.written ? "output " : "input ") << name_of(b.elem) << "[" << b.count << "]: " << b.fill;
      if (b.written) o << (DType{b.elem}.is_float() && !b.exact ? "; tolerance " + fmt_double(b.abs_err) : "; exact");
      o << "\n";
    }
  }
  return o.str();
}

void HostRun::Free::operator()(std::byte* p) const { ::operator delete[](p, std::align_val_t{64}); }

HostRun::HostRun(const Program& p) {
  for (const Buffer& b : p.buffers) {
    std::byte* d = static_cast<std::byte*>(::operator new[](std::max<size_t>(b.bytes(), 1), std::align_val_t{64}));
    storage_.emplace_back(d);
    std::memcpy(d, b.init.data(), b.bytes());
    mem.push_back(tessel::interp::MemRegion{d, b.bytes(), b.written});
  }
  for (const Arg& a : p.args) {
    if (a.kind == Arg::Buf) args.push_back(tessel::interp::ArgValue::pointer(mem.at(a.buffer).base));
    else if (a.kind == Arg::Int) args.push_back(tessel::interp::ArgValue::integer(a.i));
    else args.push_back(tessel::interp::ArgValue::floating(a.f));
  }
}

}  // namespace fuzz
