// Runtime loops: `for (auto i : range(lo, hi, step))` traced once, with Var loop-carried tiles.
#pragma once
#include "tessel/lang/tile.hpp"

namespace tessel::lang {

// A mutable tile. Reading or assigning a Var inside a range() loop that was opened after
// the Var was declared makes it a loop-carried value of that loop (and of every loop in
// between): after the loop it holds the value of the last iteration, or its value before
// the loop when the loop ran zero times. Assignments must keep the dtype and shape.
class Var {
 public:
  // Declare with braces or parentheses: `Var acc{zeros<f32>({BLOCK})};`, `Var n(0);`.
  // (Only Operand converts into a Var, so assignments below are never ambiguous and every
  // one records the user's line.)
  explicit Var(const Operand& init);
  Var(const Var&) = delete;
  // Deleted so `a = b` between Vars goes through Operand and records the user's line;
  // write `a = b.get();`.
  Var& operator=(const Var& other) = delete;

  Var& operator=(const Operand& v);
  Var& operator+=(const Operand& v);
  Var& operator-=(const Operand& v);
  Var& operator*=(const Operand& v);
  Var& operator/=(const Operand& v);

  // The current value (as seen at the current insertion point).
  Tile get(Loc loc = Loc::current()) const;
  operator Tile() const { return get(); }

  // Used by the trace context when loops open and close.
  ir::Value* current() const { return value_; }
  void set_current(ir::Value* v) { value_ = v; }
  int depth() const { return depth_; }
  int combine_depth() const { return combine_depth_; }
  uint64_t trace_id() const { return trace_id_; }

 private:
  void assign(const Operand& v, const Loc& loc);
  ir::Value* value_ = nullptr;
  int depth_ = 0;  // number of open loops when declared
  int combine_depth_ = 0;  // number of open reduce() combine bodies when declared
  uint64_t trace_id_ = 0;
};

class RangeLoop;

// The iterator of a traced loop: it yields one induction value (an i32 scalar tile),
// then closes the loop body.
class RangeIter {
 public:
  explicit RangeIter(RangeLoop* loop) : loop_(loop) {}
  Tile operator*() const;
  RangeIter& operator++();
  bool operator!=(const RangeIter& other) const { return loop_ != other.loop_; }

 private:
  RangeLoop* loop_;
};

// A loop over [lo, hi) by step (> 0) whose body is traced once into a loop region.
// `break`, `continue` with state or `return` inside the body are not supported: the body
// must run to its end.
class RangeLoop {
 public:
  RangeLoop(const Operand& lo, const Operand& hi, const Operand& step);
  ~RangeLoop();
  RangeLoop(const RangeLoop&) = delete;
  RangeLoop& operator=(const RangeLoop&) = delete;

  RangeIter begin();
  RangeIter end() { return RangeIter(nullptr); }

  Tile induction_var() const { return iv_; }
  void close();  // ends the body (emits yield) and restores the insertion point

 private:
  Operand lo_, hi_, step_;
  Loc loc_;
  Tile iv_;
  bool open_ = false;
  bool closed_ = false;
  int frame_index_ = -1;
};

RangeLoop range(const Operand& hi);
RangeLoop range(const Operand& lo, const Operand& hi);
RangeLoop range(const Operand& lo, const Operand& hi, const Operand& step);

}  // namespace tessel::lang
