// Type promotion, literal typing and broadcasting for DSL operands.
#include "tessel/lang/promote.hpp"

#include <fmt/format.h>

#include <limits>

#include "tessel/lang/builtins.hpp"

namespace tessel::lang::detail {
namespace {
using ir::DType;
using ir::Scalar;

int float_rank(Scalar s) {
  switch (s) {
    case Scalar::f64: return 3;
    case Scalar::f32: return 2;
    case Scalar::f16:
    case Scalar::bf16: return 1;
    default: return 0;
  }
}

bool fits(int64_t v, Scalar s) {
  switch (s) {
    case Scalar::u8: return v >= 0 && v <= UINT8_MAX;
    case Scalar::u16: return v >= 0 && v <= UINT16_MAX;
    case Scalar::u32: return v >= 0 && v <= UINT32_MAX;
    case Scalar::u64: return v >= 0;
    case Scalar::i8: return v >= INT8_MIN && v <= INT8_MAX;
    case Scalar::i16: return v >= INT16_MIN && v <= INT16_MAX;
    case Scalar::i32: return v >= INT32_MIN && v <= INT32_MAX;
    case Scalar::i64: return true;
    default: return false;
  }
}
}  // namespace

DType promote(DType a, DType b, const char* op, const Loc& loc) {
  for (DType d : {a, b})
    if (d.is_fp8())
      throw CompileError(to_srcloc(loc), fmt::format("'{}' on {}: 8-bit floats are storage types; cast<f16> or "
                                                     "cast<f32> the tile first",
                                                     op, d.str()));
  if (a == b && !a.ptr) return a;
  if (a.ptr || b.ptr)
    throw CompileError(to_srcloc(loc), fmt::format("'{}' cannot combine {} with {}: pointers only take "
                                                   "integer offsets (+, -) and compare (==, !=)",
                                                   op, a.str(), b.str()));
  int fa = float_rank(a.scalar), fb = float_rank(b.scalar);
  if (fa || fb) {
    if (fa != fb) return fa > fb ? a : b;
    return DType{Scalar::f32};  // f16 with bf16
  }
  if (a.scalar == Scalar::i1) return b;
  if (b.scalar == Scalar::i1) return a;
  // The wider integer wins; at equal widths unsigned wins (C's rule: i32 with u32 is u32).
  const int wa = ir::bit_width(a.scalar), wb = ir::bit_width(b.scalar);
  if (wa != wb) return wa > wb ? a : b;
  return a.is_unsigned() ? a : b;
}

DType literal_default_dtype(const Operand& lit) {
  if (lit.is_bool_literal()) return DType{Scalar::i1};
  if (lit.is_float_literal()) return DType{Scalar::f32};
  return fits(std::get<int64_t>(lit.literal()), Scalar::i32) ? DType{Scalar::i32} : DType{Scalar::i64};
}

DType literal_dtype(const Operand& lit, DType t) {
  if (t.ptr) return literal_default_dtype(lit);
  if (t.is_float()) return t;
  if (lit.is_float_literal()) return DType{Scalar::f32};
  if (lit.is_bool_literal()) return t;
  int64_t v = std::get<int64_t>(lit.literal());
  if (t.scalar == Scalar::i1) return literal_default_dtype(lit);
  return fits(v, t.scalar) ? t : DType{Scalar::i64};
}

ir::Shape broadcast_shapes(const ir::Shape& a, const ir::Shape& b, const char* op, const Loc& loc) {
  size_t n = std::max(a.size(), b.size());
  ir::Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      throw CompileError(to_srcloc(loc),
                         fmt::format("shape mismatch in '{}': {} and {} cannot be broadcast together "
                                     "(dimension {}: {} vs {})",
                                     op, ir::shape_str(a), ir::shape_str(b), i, da, db));
    out[i] = da == 1 ? db : da;
  }
  // Each side is a legal tile, but their product may not be ([1024, 1] with [1, 2048]): a user
  // mistake at this line, not IR for the verifier to reject.
  int64_t elems = 1;
  for (int64_t d : out) elems = d > 0 && elems > kMaxTileElements / d ? kMaxTileElements + 1 : elems * d;
  if (elems > kMaxTileElements)
    throw CompileError(to_srcloc(loc), fmt::format("'{}': broadcasting {} and {} gives a tile of shape {}, more "
                                                   "than the limit of {} elements",
                                                   op, ir::shape_str(a), ir::shape_str(b), ir::shape_str(out),
                                                   kMaxTileElements));
  return out;
}

ir::Value* broadcast_value(TraceContext& ctx, ir::Value* v, const ir::Shape& shape, const Loc& loc) {
  const ir::Shape& s = v->type.shape;
  if (s == shape) return v;
  ir::Builder& b = ctx.at(loc);
  if (s.empty()) return b.splat(v, shape);
  TESSEL_ASSERT(s.size() <= shape.size(), "broadcast to a lower rank");
  while (v->type.shape.size() < shape.size()) v = b.expand_dims(v, 0);
  if (v->type.shape == shape) return v;
  return b.broadcast(v, shape);
}

DType dtype_of(const Operand& o) { return o.is_literal() ? literal_default_dtype(o) : o.tile().dtype(); }
ir::Shape shape_of(const Operand& o) { return o.is_literal() ? ir::Shape{} : o.tile().shape(); }

ir::Value* coerce(TraceContext& ctx, const Operand& o, DType dtype, const ir::Shape& shape,
                  const Loc& loc) {
  ir::Value* v;
  if (o.is_literal()) {
    ir::Builder& b = ctx.at(loc);
    ir::Type t{dtype, {}};
    const auto& lit = o.literal();
    if (dtype.is_float())
      v = b.const_float(std::holds_alternative<double>(lit) ? std::get<double>(lit)
                                                            : static_cast<double>(std::get<int64_t>(lit)),
                        t);
    else if (std::holds_alternative<double>(lit))
      throw CompileError(to_srcloc(loc), fmt::format("a float literal cannot be used as {}", dtype.str()));
    else if (int64_t iv = std::get<int64_t>(lit);
             dtype.scalar == Scalar::i1 ? (iv != 0 && iv != 1) : !fits(iv, dtype.scalar))
      throw CompileError(to_srcloc(loc), fmt::format("the literal {} does not fit in {}", iv, dtype.str()));
    else
      v = b.const_int(iv, t);
  } else {
    v = o.tile().use(loc);
    if (v->type.dtype != dtype) v = ctx.at(loc).cast(v, dtype);
  }
  return broadcast_value(ctx, v, shape, loc);
}

DType common_dtype(const Operand& a, const Operand& b, const char* op, const Loc& loc) {
  if (a.is_literal() && b.is_literal()) {
    DType da = literal_default_dtype(a), db = literal_default_dtype(b);
    return promote(da, db, op, loc);
  }
  for (const Operand* t : {&a, &b})  // a literal beside an fp8 tile would not reach promote
    if (!t->is_literal() && t->tile().dtype().is_fp8()) promote(t->tile().dtype(), t->tile().dtype(), op, loc);
  if (a.is_literal()) return literal_dtype(a, b.tile().dtype()) == b.tile().dtype()
                                 ? b.tile().dtype()
                                 : promote(literal_dtype(a, b.tile().dtype()), b.tile().dtype(), op, loc);
  if (b.is_literal()) return literal_dtype(b, a.tile().dtype()) == a.tile().dtype()
                                 ? a.tile().dtype()
                                 : promote(a.tile().dtype(), literal_dtype(b, a.tile().dtype()), op, loc);
  return promote(a.tile().dtype(), b.tile().dtype(), op, loc);
}

Pair unify(TraceContext& ctx, const Operand& a, const Operand& b, const char* op, const Loc& loc) {
  DType d = common_dtype(a, b, op, loc);
  ir::Shape s = broadcast_shapes(shape_of(a), shape_of(b), op, loc);
  return {coerce(ctx, a, d, s, loc), coerce(ctx, b, d, s, loc)};
}

}  // namespace tessel::lang::detail
