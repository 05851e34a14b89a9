// Operators on tiles: promotion, broadcasting, pointer offsets, then one IR op each.
#include "tessel/lang/operators.hpp"

#include <fmt/format.h>

#include "tessel/lang/promote.hpp"

namespace tessel::lang {
namespace {
using ir::OpKind;

enum class Category { Arith, Bitwise, Compare, Equality };

Tile binary(OpKind k, const Operand& a, const Operand& b, const char* sym, Category cat) {
  const Loc& loc = a.is_literal() ? b.loc() : a.loc();
  TraceContext& ctx = TraceContext::current(loc, sym);
  if (cat == Category::Equality) {
    bool pa = !a.is_literal() && a.tile().dtype().ptr, pb = !b.is_literal() && b.tile().dtype().ptr;
    if (pa && pb) {
      if (a.tile().dtype() != b.tile().dtype())
        throw CompileError(to_srcloc(loc), fmt::format("'{}' compares pointers of different types {} and {}",
                                                       sym, a.tile().dtype().str(), b.tile().dtype().str()));
      ir::Shape s = detail::broadcast_shapes(a.tile().shape(), b.tile().shape(), sym, loc);
      ir::Value* va = detail::broadcast_value(ctx, a.tile().use(loc), s, loc);
      ir::Value* vb = detail::broadcast_value(ctx, b.tile().use(loc), s, loc);
      return ctx.wrap(ctx.at(loc).value(k, {va, vb}));
    }
  }
  ir::DType d = detail::common_dtype(a, b, sym, loc);
  if (cat == Category::Bitwise && !d.is_int())
    throw CompileError(to_srcloc(loc), fmt::format("'{}' needs integer operands, got {} and {}", sym,
                                                   detail::dtype_of(a).str(), detail::dtype_of(b).str()));
  if (cat == Category::Arith && d.is_bool()) d = ir::i32();  // arithmetic on booleans counts in i32
  ir::Shape s = detail::broadcast_shapes(detail::shape_of(a), detail::shape_of(b), sym, loc);
  ir::Value* va = detail::coerce(ctx, a, d, s, loc);
  ir::Value* vb = detail::coerce(ctx, b, d, s, loc);
  return ctx.wrap(ctx.at(loc).value(k, {va, vb}));
}

bool is_ptr(const Operand& o) { return !o.is_literal() && o.tile().dtype().ptr; }

// ptr +/- integer offsets: addptr with the offsets broadcast against the pointer tile.
Tile pointer_offset(const Operand& p, const Operand& off, bool negate, const char* sym) {
  const Loc& loc = p.loc();
  TraceContext& ctx = TraceContext::current(loc, sym);
  ir::DType od = detail::dtype_of(off);
  if (!od.is_int() || od.is_bool())
    throw CompileError(to_srcloc(loc),
                       fmt::format("pointer offsets must be integers: cannot apply '{}' to {} and {}", sym,
                                   p.tile().dtype().str(), od.str()));
  ir::Shape s = detail::broadcast_shapes(p.tile().shape(), detail::shape_of(off), sym, loc);
  ir::Value* vp = detail::broadcast_value(ctx, p.tile().use(loc), s, loc);
  ir::Value* vo = detail::coerce(ctx, off, od, s, loc);
  if (negate) vo = ctx.at(loc).value(OpKind::Neg, {vo});
  return ctx.wrap(ctx.at(loc).value(OpKind::AddPtr, {vp, vo}));
}

ir::Value* to_bool(TraceContext& ctx, const Operand& o, const Loc& loc) {
  ir::DType d = detail::dtype_of(o);
  ir::Shape s = detail::shape_of(o);
  if (d.is_bool()) return detail::coerce(ctx, o, d, s, loc);
  if (d.ptr) throw CompileError(to_srcloc(loc), "a pointer cannot be used as a condition");
  ir::Value* v = detail::coerce(ctx, o, d, s, loc);
  ir::Value* zero = d.is_float() ? ctx.at(loc).const_float(0.0, {d, {}}) : ctx.at(loc).const_int(0, {d, {}});
  return ctx.at(loc).value(OpKind::CmpNe, {v, detail::broadcast_value(ctx, zero, s, loc)});
}

Tile logical(OpKind k, const Operand& a, const Operand& b, const char* sym) {
  const Loc& loc = a.is_literal() ? b.loc() : a.loc();
  TraceContext& ctx = TraceContext::current(loc, sym);
  ir::Shape s = detail::broadcast_shapes(detail::shape_of(a), detail::shape_of(b), sym, loc);
  ir::Value* va = detail::broadcast_value(ctx, to_bool(ctx, a, loc), s, loc);
  ir::Value* vb = detail::broadcast_value(ctx, to_bool(ctx, b, loc), s, loc);
  return ctx.wrap(ctx.at(loc).value(k, {va, vb}));
}
}  // namespace

Tile operator+(const Operand& a, const Operand& b) {
  if (is_ptr(a) && !is_ptr(b)) return pointer_offset(a, b, false, "+");
  if (is_ptr(b) && !is_ptr(a)) return pointer_offset(b, a, false, "+");
  return binary(OpKind::Add, a, b, "+", Category::Arith);
}
Tile operator-(const Operand& a, const Operand& b) {
  if (is_ptr(a) && !is_ptr(b)) return pointer_offset(a, b, true, "-");
  return binary(OpKind::Sub, a, b, "-", Category::Arith);
}
Tile operator*(const Operand& a, const Operand& b) { return binary(OpKind::Mul, a, b, "*", Category::Arith); }
Tile operator/(const Operand& a, const Operand& b) { return binary(OpKind::Div, a, b, "/", Category::Arith); }
Tile operator%(const Operand& a, const Operand& b) { return binary(OpKind::Rem, a, b, "%", Category::Arith); }
Tile operator&(const Operand& a, const Operand& b) { return binary(OpKind::And, a, b, "&", Category::Bitwise); }
Tile operator|(const Operand& a, const Operand& b) { return binary(OpKind::Or, a, b, "|", Category::Bitwise); }
Tile operator^(const Operand& a, const Operand& b) { return binary(OpKind::Xor, a, b, "^", Category::Bitwise); }
Tile operator<<(const Operand& a, const Operand& b) { return binary(OpKind::Shl, a, b, "<<", Category::Bitwise); }
Tile operator>>(const Operand& a, const Operand& b) { return binary(OpKind::Shr, a, b, ">>", Category::Bitwise); }
Tile operator<(const Operand& a, const Operand& b) { return binary(OpKind::CmpLt, a, b, "<", Category::Compare); }
Tile operator<=(const Operand& a, const Operand& b) { return binary(OpKind::CmpLe, a, b, "<=", Category::Compare); }
Tile operator>(const Operand& a, const Operand& b) { return binary(OpKind::CmpGt, a, b, ">", Category::Compare); }
Tile operator>=(const Operand& a, const Operand& b) { return binary(OpKind::CmpGe, a, b, ">=", Category::Compare); }
Tile operator==(const Operand& a, const Operand& b) { return binary(OpKind::CmpEq, a, b, "==", Category::Equality); }
Tile operator!=(const Operand& a, const Operand& b) { return binary(OpKind::CmpNe, a, b, "!=", Category::Equality); }
Tile operator&&(const Operand& a, const Operand& b) { return logical(OpKind::And, a, b, "&&"); }
Tile operator||(const Operand& a, const Operand& b) { return logical(OpKind::Or, a, b, "||"); }

Tile operator!(const Operand& a) {
  TraceContext& ctx = TraceContext::current(a.loc(), "!");
  return ctx.wrap(ctx.at(a.loc()).value(OpKind::Not, {to_bool(ctx, a, a.loc())}));
}

Tile operator-(const Operand& a) {
  TraceContext& ctx = TraceContext::current(a.loc(), "unary -");
  ir::DType d = detail::dtype_of(a);
  if (d.ptr || d.is_bool())
    throw CompileError(to_srcloc(a.loc()), fmt::format("unary '-' needs a numeric operand, got {}", d.str()));
  return ctx.wrap(ctx.at(a.loc()).value(OpKind::Neg, {detail::coerce(ctx, a, d, detail::shape_of(a), a.loc())}));
}

Tile operator~(const Operand& a) {
  TraceContext& ctx = TraceContext::current(a.loc(), "~");
  ir::DType d = detail::dtype_of(a);
  if (!d.is_int())
    throw CompileError(to_srcloc(a.loc()), fmt::format("'~' needs an integer operand, got {}", d.str()));
  return ctx.wrap(ctx.at(a.loc()).value(OpKind::Not, {detail::coerce(ctx, a, d, detail::shape_of(a), a.loc())}));
}

}  // namespace tessel::lang
