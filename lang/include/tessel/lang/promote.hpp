// Triton's type promotion and numpy-style broadcasting for DSL operands.
#pragma once
#include <utility>

#include "tessel/lang/trace_context.hpp"

namespace tessel::lang::detail {

// The common element type of two tiles (Triton's rules):
//   f64 > f32 > (f16 | bf16; f16 with bf16 gives f32) > integers; among integers the wider
//   wins and i1 gives way to any other. Pointers never promote (CompileError).
ir::DType promote(ir::DType a, ir::DType b, const char* op, const Loc& loc);

// The element type a literal takes next to a tile of type `t` (literals are "weak": they
// adopt the tile's type unless they do not fit: a float literal next to integers is f32,
// an integer literal too large for the tile's integer type is i64).
ir::DType literal_dtype(const Operand& lit, ir::DType t);
// The type a literal takes on its own: bool -> i1, integers -> i32 (i64 if too large), float -> f32.
ir::DType literal_default_dtype(const Operand& lit);

// The broadcast shape of two shapes (align right; each dim equal or 1). CompileError otherwise.
ir::Shape broadcast_shapes(const ir::Shape& a, const ir::Shape& b, const char* op, const Loc& loc);

// Emits the IR value of an operand as `dtype` (literals become constants, tiles are cast
// when their type differs) broadcast to `shape`.
ir::Value* coerce(TraceContext& ctx, const Operand& o, ir::DType dtype, const ir::Shape& shape,
                  const Loc& loc);
// Broadcasts a value to `shape` (splat for scalars, expand_dims + broadcast for tiles).
ir::Value* broadcast_value(TraceContext& ctx, ir::Value* v, const ir::Shape& shape, const Loc& loc);

// The dtype of an operand when used alone (tiles: their dtype; literals: default).
ir::DType dtype_of(const Operand& o);
ir::Shape shape_of(const Operand& o);

// Two operands brought to a common dtype and shape.
struct Pair {
  ir::Value* a;
  ir::Value* b;
};
Pair unify(TraceContext& ctx, const Operand& a, const Operand& b, const char* op, const Loc& loc);
// The common dtype of two operands, literals being weak.
ir::DType common_dtype(const Operand& a, const Operand& b, const char* op, const Loc& loc);

}  // namespace tessel::lang::detail
