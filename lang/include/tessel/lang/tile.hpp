// Tile: a traced value (a scalar or a statically shaped tile) and Operand, its call-site wrapper.
#pragma once
#include <cstdint>
#include <source_location>
#include <variant>

#include "tessel/ir/ir.hpp"
#include "tessel/lang/dtype.hpp"

namespace tessel::lang {

using Loc = std::source_location;
SrcLoc to_srcloc(const Loc& l);

class Var;

// A handle to an IR value recorded by the active trace. Copying a Tile copies the handle.
// Tiles are only meaningful inside the kernel whose trace created them.
class Tile {
 public:
  Tile() = default;
  Tile(ir::Value* v, uint64_t trace_id) : value_(v), trace_id_(trace_id) {}

  bool valid() const { return value_ != nullptr; }
  // The type, after check_live(loc): a Tile kept past its trace (a global, a member) points
  // into IR that may be freed, so asking its type outside that trace is a CompileError at the
  // caller's line, never a read of freed memory.
  const ir::Type& type(Loc loc = Loc::current()) const;
  ir::DType dtype(Loc loc = Loc::current()) const { return type(loc).dtype; }
  const ir::Shape& shape(Loc loc = Loc::current()) const { return type(loc).shape; }
  bool is_scalar(Loc loc = Loc::current()) const { return shape(loc).empty(); }

  // The IR value, after checking it belongs to the active trace and is visible at the
  // current insertion point. Throws CompileError naming `loc` otherwise.
  ir::Value* use(const Loc& loc) const;
  ir::Value* raw() const { return value_; }
  // Throws CompileError at `loc` unless this tile belongs to the kernel being traced now
  // (checked before anything looks at the value, which may belong to a finished trace).
  void check_live(const Loc& loc) const;
  uint64_t trace_id() const { return trace_id_; }

  // Shorthands for Triton's x[:, None] and x[None, :]: col() appends a trailing dimension of
  // size 1 (an [N] tile becomes the column [N, 1]); row() prepends one ([N] becomes the row
  // [1, N]). Broadcasting then builds 2-D tiles: `rows.col() * stride + cols.row()`.
  Tile col(Loc loc = Loc::current()) const;
  Tile row(Loc loc = Loc::current()) const;

 private:
  ir::Value* value_ = nullptr;
  uint64_t trace_id_ = 0;
};

// One operand of a DSL operation: a Tile, a Var (read), or a host literal. Implicit
// conversion into an Operand records the user's source line (the default argument is
// evaluated at the call site), which is how operators like `a + b` report locations.
class Operand {
 public:
  Operand(const Tile& t, Loc loc = Loc::current()) : tile_(t), loc_(loc) { t.check_live(loc); }
  Operand(const Var& v, Loc loc = Loc::current());
  template <Literal S>
  Operand(S s, Loc loc = Loc::current()) : loc_(loc) {
    if constexpr (std::is_same_v<S, bool>) literal_ = s, is_bool_ = true;
    else if constexpr (std::is_floating_point_v<S>) literal_ = static_cast<double>(s);
    else literal_ = static_cast<int64_t>(s);
  }

  bool is_literal() const { return !tile_.valid(); }
  bool is_bool_literal() const { return is_bool_; }
  bool is_float_literal() const { return is_literal() && std::holds_alternative<double>(literal_); }
  const Tile& tile() const { return tile_; }
  const std::variant<int64_t, double>& literal() const { return literal_; }
  const Loc& loc() const { return loc_; }

 private:
  Tile tile_;
  std::variant<int64_t, double> literal_ = int64_t{0};
  bool is_bool_ = false;
  Loc loc_;
};

}  // namespace tessel::lang
