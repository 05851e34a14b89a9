// The thread-local trace context: the kernel being recorded, its builder and open loops.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessel/ir/builder.hpp"
#include "tessel/lang/tile.hpp"

namespace tessel::lang {

class Var;

// One open range() loop while its body is traced.
struct LoopFrame {
  ir::Op* loop = nullptr;
  ir::Block* outer_block = nullptr;
  std::vector<std::pair<Var*, ir::Value*>> carried;  // in capture order (deterministic)
  SrcLoc loc;
};

class TraceContext {
 public:
  explicit TraceContext(std::string kernel_name);
  ~TraceContext();
  TraceContext(const TraceContext&) = delete;
  TraceContext& operator=(const TraceContext&) = delete;

  // The context of the kernel being traced on this thread; CompileError naming `what`
  // and `loc` when there is none.
  static TraceContext& current(const Loc& loc, const char* what);
  static TraceContext* active();

  uint64_t id() const { return id_; }
  ir::Function& function() { return *fn_; }
  std::unique_ptr<ir::Function> take_function() { return std::move(fn_); }
  // The builder, with its location set to `loc` for the ops created next.
  ir::Builder& at(const Loc& loc);
  Tile wrap(ir::Value* v) const { return Tile(v, id_); }

  // Loops (control.cpp drives these).
  std::vector<LoopFrame>& frames() { return frames_; }
  int depth() const { return static_cast<int>(frames_.size()); }
  // reduce() combine bodies being traced (reduce.hpp): memory ops, loops and assignments to
  // outer Vars are not allowed in them, since the body is a pure scalar function.
  int combine_depth() const { return combine_depth_; }
  void enter_combine() { ++combine_depth_; }
  void leave_combine() { --combine_depth_; }
  // CompileError at `loc` naming `what` when called inside a combine body.
  void check_not_in_combine(const Loc& loc, const char* what) const;

  // An error found where no exception may be thrown (a destructor); reported at the end.
  void defer_error(SrcLoc loc, std::string message);
  void rethrow_deferred();

 private:
  uint64_t id_;
  std::unique_ptr<ir::Function> fn_;
  ir::Builder builder_;
  std::vector<LoopFrame> frames_;
  int combine_depth_ = 0;
  TraceContext* previous_;
  bool has_deferred_ = false;
  SrcLoc deferred_loc_;
  std::string deferred_msg_;
};

}  // namespace tessel::lang
