// Builtins: sources of tiles, memory access, select, min/max/fma, casts and reshaping.
#include "tessel/lang/builtins.hpp"

#include <fmt/format.h>

#include "tessel/lang/promote.hpp"

namespace tessel::lang {
namespace {
using ir::OpKind;

void check_axis(int axis, const char* what, const Loc& loc) {
  if (axis < 0 || axis > 2)
    throw CompileError(to_srcloc(loc), fmt::format("{}: axis must be 0, 1 or 2, got {}", what, axis));
}

bool is_pow2(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }
}  // namespace

void detail::check_tile_shape(const ir::Shape& s, const char* what, const Loc& loc) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (!is_pow2(d))
      throw CompileError(to_srcloc(loc), fmt::format("{}: tile dimension {} must be a power of two (shape {})",
                                                     what, d, ir::shape_str(s)));
    n *= d;
  }
  if (n > kMaxTileElements)
    throw CompileError(to_srcloc(loc), fmt::format("{}: tile of {} elements exceeds the limit of {} (shape {})",
                                                   what, n, kMaxTileElements, ir::shape_str(s)));
}

namespace {
using detail::check_tile_shape;

// The tile an Operand holds; literals are rejected in places that need a tile.
const Tile& tile_arg(const Operand& o, const char* what, const char* role, const Loc& loc) {
  if (o.is_literal())
    throw CompileError(to_srcloc(loc), fmt::format("{}: the {} must be a tile, got a literal", what, role));
  return o.tile();
}

// `shape_of_v` must broadcast to `target` without changing it.
void check_fits_shape(const ir::Shape& v, const ir::Shape& target, const char* what, const char* role,
                      const Loc& loc) {
  bool ok = v.size() <= target.size();
  for (size_t i = 0; ok && i < v.size(); ++i) {
    int64_t vd = v[v.size() - 1 - i], td = target[target.size() - 1 - i];
    ok = vd == td || vd == 1;
  }
  if (!ok)
    throw CompileError(to_srcloc(loc), fmt::format("{}: {} of shape {} does not match the pointer tile's shape {}",
                                                   what, role, ir::shape_str(v), ir::shape_str(target)));
}

// The mask as i1 broadcast to the pointer's shape (without changing that shape).
ir::Value* mask_for(TraceContext& ctx, const Tile& ptr, const Operand& mask_op, const char* what, const Loc& loc) {
  const Tile& mask = tile_arg(mask_op, what, "mask", loc);
  ir::Value* m = mask.use(loc);
  if (!m->type.dtype.is_bool())
    throw CompileError(to_srcloc(loc), fmt::format("{}: the mask must be a boolean (i1) tile, got {}", what,
                                                   m->type.str()));
  check_fits_shape(m->type.shape, ptr.shape(), what, "mask", loc);
  return detail::broadcast_value(ctx, m, ptr.shape(), loc);
}

ir::Value* pointer_of(const Operand& ptr_op, const char* what, const Loc& loc) {
  if (ptr_op.is_literal())
    throw CompileError(to_srcloc(loc), fmt::format("{} through a non-pointer: expected a pointer tile (Ptr<T> "
                                                   "plus offsets), got a literal", what));
  ir::Value* p = ptr_op.tile().use(loc);
  if (!p->type.dtype.ptr)
    throw CompileError(to_srcloc(loc), fmt::format("{} through a non-pointer: expected a pointer tile (Ptr<T> "
                                                   "plus offsets), got {}", what, p->type.str()));
  return p;
}
}  // namespace

Tile program_id(int axis, Loc loc) {
  check_axis(axis, "program_id", loc);
  TraceContext& ctx = TraceContext::current(loc, "program_id");
  return ctx.wrap(ctx.at(loc).program_id(axis));
}

Tile num_programs(int axis, Loc loc) {
  check_axis(axis, "num_programs", loc);
  TraceContext& ctx = TraceContext::current(loc, "num_programs");
  return ctx.wrap(ctx.at(loc).num_programs(axis));
}

Tile arange(int64_t start, int64_t end, Loc loc) {
  TraceContext& ctx = TraceContext::current(loc, "arange");
  if (end <= start)
    throw CompileError(to_srcloc(loc), fmt::format("arange({}, {}): end must be greater than start", start, end));
  if (start < INT32_MIN || end > INT32_MAX)
    throw CompileError(to_srcloc(loc), fmt::format("arange({}, {}): bounds must fit in i32", start, end));
  check_tile_shape({end - start}, "arange", loc);
  return ctx.wrap(ctx.at(loc).arange(start, end));
}

namespace detail {
Tile full_impl(const ir::Shape& shape, const Operand& value, ir::DType dtype, const Loc& loc) {
  TraceContext& ctx = TraceContext::current(loc, "full");
  check_tile_shape(shape, "full", loc);
  if (!value.is_literal() && !value.tile().is_scalar())
    throw CompileError(to_srcloc(loc), "full: the fill value must be a scalar");
  return ctx.wrap(coerce(ctx, value, dtype, shape, loc));
}

Tile cast_impl(const Operand& x, ir::DType dtype, const Loc& loc) {
  TraceContext& ctx = TraceContext::current(loc, "cast");
  if (!x.is_literal() && x.tile().dtype().ptr)
    throw CompileError(to_srcloc(loc), fmt::format("cast: cannot convert pointer {} to {}", x.tile().dtype().str(),
                                                   dtype.str()));
  return ctx.wrap(coerce(ctx, x, dtype, shape_of(x), loc));
}
}  // namespace detail

static Tile load_impl(const Operand& ptr, const Operand* mask, const Operand* other, const Loc& loc) {
  TraceContext& ctx = TraceContext::current(loc, "load");
  ctx.check_not_in_combine(loc, "load");
  ir::Value* p = pointer_of(ptr, "load", loc);
  std::vector<ir::Value*> ops{p};
  if (mask) ops.push_back(mask_for(ctx, ptr.tile(), *mask, "load", loc));
  if (other) {
    check_fits_shape(detail::shape_of(*other), p->type.shape, "load", "`other`", loc);
    ops.push_back(detail::coerce(ctx, *other, p->type.dtype.pointee(), p->type.shape, loc));
  }
  return ctx.wrap(ctx.at(loc).value(OpKind::Load, std::move(ops)));
}

Tile load(const Operand& ptr, Loc loc) { return load_impl(ptr, nullptr, nullptr, loc); }
Tile load(const Operand& ptr, const Operand& mask, Loc loc) { return load_impl(ptr, &mask, nullptr, loc); }
Tile load(const Operand& ptr, const Operand& mask, const Operand& other, Loc loc) {
  return load_impl(ptr, &mask, &other, loc);
}

static void store_impl(const Operand& ptr, const Operand& value, const Operand* mask, const Loc& loc) {
  TraceContext& ctx = TraceContext::current(loc, "store");
  ctx.check_not_in_combine(loc, "store");
  ir::Value* p = pointer_of(ptr, "store", loc);
  if (!value.is_literal() && value.tile().dtype().ptr)
    throw CompileError(to_srcloc(loc), "store: storing pointers is not supported");
  check_fits_shape(detail::shape_of(value), p->type.shape, "store", "the value", loc);
  std::vector<ir::Value*> ops{p, detail::coerce(ctx, value, p->type.dtype.pointee(), p->type.shape, loc)};
  if (mask) ops.push_back(mask_for(ctx, ptr.tile(), *mask, "store", loc));
  ctx.at(loc).create(OpKind::Store, std::move(ops));
}

void store(const Operand& ptr, const Operand& value, Loc loc) { store_impl(ptr, value, nullptr, loc); }
void store(const Operand& ptr, const Operand& value, const Operand& mask, Loc loc) {
  store_impl(ptr, value, &mask, loc);
}

static Tile atomic_impl(OpKind k, const Operand& ptr, const Operand& value, const Operand* mask, const Loc& loc,
                        Order order = Order::relaxed) {
  const char* what = ir::name_of(k).data();
  TraceContext& ctx = TraceContext::current(loc, what);
  ctx.check_not_in_combine(loc, what);
  ir::Value* p = pointer_of(ptr, what, loc);
  ir::Scalar e = p->type.dtype.scalar;
  bool ok = e == ir::Scalar::i32 || e == ir::Scalar::i64 || e == ir::Scalar::f32 ||
            (k == OpKind::AtomicAdd && e == ir::Scalar::f64);
  if (!ok)
    throw CompileError(to_srcloc(loc), fmt::format("{}: not supported on {} elements (supported: {})", what,
                                                   ir::name_of(e), k == OpKind::AtomicAdd ? "i32, i64, f32, f64"
                                                                                          : "i32, i64, f32"));
  if (!value.is_literal() && value.tile().dtype().ptr)
    throw CompileError(to_srcloc(loc), fmt::format("{}: the value must be a number, got {}", what,
                                                   value.tile().type().str()));
  check_fits_shape(detail::shape_of(value), p->type.shape, what, "the value", loc);
  std::vector<ir::Value*> ops{p, detail::coerce(ctx, value, p->type.dtype.pointee(), p->type.shape, loc)};
  if (mask) ops.push_back(mask_for(ctx, ptr.tile(), *mask, what, loc));
  std::vector<ir::Attr> attrs;
  if (order == Order::acq_rel) attrs.push_back({"acq_rel", int64_t{1}});
  return ctx.wrap(ctx.at(loc).value(k, std::move(ops), {}, std::move(attrs)));
}

Tile atomic_add(const Operand& ptr, const Operand& value, Loc loc) {
  return atomic_impl(OpKind::AtomicAdd, ptr, value, nullptr, loc);
}
Tile atomic_add(const Operand& ptr, const Operand& value, const Operand& mask, Loc loc) {
  return atomic_impl(OpKind::AtomicAdd, ptr, value, &mask, loc);
}
Tile atomic_add(const Operand& ptr, const Operand& value, Order order, Loc loc) {
  return atomic_impl(OpKind::AtomicAdd, ptr, value, nullptr, loc, order);
}
Tile atomic_max(const Operand& ptr, const Operand& value, Order order, Loc loc) {
  return atomic_impl(OpKind::AtomicMax, ptr, value, nullptr, loc, order);
}
Tile atomic_add(const Operand& ptr, const Operand& value, const Operand& mask, Order order, Loc loc) {
  return atomic_impl(OpKind::AtomicAdd, ptr, value, &mask, loc, order);
}
Tile atomic_max(const Operand& ptr, const Operand& value, const Operand& mask, Order order, Loc loc) {
  return atomic_impl(OpKind::AtomicMax, ptr, value, &mask, loc, order);
}
Tile atomic_max(const Operand& ptr, const Operand& value, Loc loc) {
  return atomic_impl(OpKind::AtomicMax, ptr, value, nullptr, loc);
}
Tile atomic_max(const Operand& ptr, const Operand& value, const Operand& mask, Loc loc) {
  return atomic_impl(OpKind::AtomicMax, ptr, value, &mask, loc);
}

Tile where(const Operand& cond, const Operand& a, const Operand& b) {
  const Loc& loc = cond.loc();
  TraceContext& ctx = TraceContext::current(loc, "where");
  ir::DType cd = detail::dtype_of(cond);
  if (!cd.is_bool())
    throw CompileError(to_srcloc(loc), fmt::format("where: the condition must be boolean (i1), got {}", cd.str()));
  ir::DType d = detail::common_dtype(a, b, "where", loc);
  ir::Shape s = detail::broadcast_shapes(detail::shape_of(a), detail::shape_of(b), "where", loc);
  s = detail::broadcast_shapes(detail::shape_of(cond), s, "where", loc);
  ir::Value* vc = detail::coerce(ctx, cond, cd, s, loc);
  ir::Value* va = detail::coerce(ctx, a, d, s, loc);
  ir::Value* vb = detail::coerce(ctx, b, d, s, loc);
  return ctx.wrap(ctx.at(loc).value(OpKind::Select, {vc, va, vb}));
}

static Tile minmax(OpKind k, const Operand& a, const Operand& b, const char* what) {
  const Loc& loc = a.loc();
  TraceContext& ctx = TraceContext::current(loc, what);
  auto [va, vb] = detail::unify(ctx, a, b, what, loc);
  if (va->type.dtype.is_bool()) throw CompileError(to_srcloc(loc), fmt::format("{}: operands must be numeric", what));
  return ctx.wrap(ctx.at(loc).value(k, {va, vb}));
}
Tile minimum(const Operand& a, const Operand& b) { return minmax(OpKind::Min, a, b, "minimum"); }
Tile maximum(const Operand& a, const Operand& b) { return minmax(OpKind::Max, a, b, "maximum"); }

Tile fma(const Operand& a, const Operand& b, const Operand& c) {
  const Loc& loc = a.loc();
  TraceContext& ctx = TraceContext::current(loc, "fma");
  ir::DType d = detail::common_dtype(a, b, "fma", loc);
  if (c.is_literal()) {
    ir::DType dc = detail::literal_dtype(c, d);
    if (dc != d) d = detail::promote(d, dc, "fma", loc);
  } else {
    d = detail::promote(d, c.tile().dtype(), "fma", loc);
  }
  if (!d.is_float()) throw CompileError(to_srcloc(loc), fmt::format("fma: operands must be floating point, got {}", d.str()));
  ir::Shape s = detail::broadcast_shapes(detail::shape_of(a), detail::shape_of(b), "fma", loc);
  s = detail::broadcast_shapes(s, detail::shape_of(c), "fma", loc);
  return ctx.wrap(ctx.at(loc).value(OpKind::Fma, {detail::coerce(ctx, a, d, s, loc), detail::coerce(ctx, b, d, s, loc),
                                                  detail::coerce(ctx, c, d, s, loc)}));
}

Tile expand_dims(const Operand& x, int axis, Loc loc) {
  TraceContext& ctx = TraceContext::current(loc, "expand_dims");
  ir::Value* v = tile_arg(x, "expand_dims", "operand", loc).use(loc);
  if (axis < 0 || axis > v->type.rank())
    throw CompileError(to_srcloc(loc), fmt::format("expand_dims: axis {} out of range for a tile of rank {}",
                                                   axis, v->type.rank()));
  if (v->type.is_scalar())
    throw CompileError(to_srcloc(loc), "expand_dims: expects a tile, got a scalar (use full or broadcast_to)");
  return ctx.wrap(ctx.at(loc).expand_dims(v, axis));
}

Tile broadcast_to(const Operand& x, const ir::Shape& shape, Loc loc) {
  TraceContext& ctx = TraceContext::current(loc, "broadcast_to");
  check_tile_shape(shape, "broadcast_to", loc);
  ir::Value* v = tile_arg(x, "broadcast_to", "operand", loc).use(loc);
  ir::Shape s = detail::broadcast_shapes(v->type.shape, shape, "broadcast_to", loc);
  if (s != shape)
    throw CompileError(to_srcloc(loc), fmt::format("broadcast_to: cannot broadcast {} to {}",
                                                   ir::shape_str(v->type.shape), ir::shape_str(shape)));
  return ctx.wrap(detail::broadcast_value(ctx, v, shape, loc));
}

}  // namespace tessel::lang
