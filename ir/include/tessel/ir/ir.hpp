// The tile IR's node types: values, ops (one uniform node), blocks and kernel functions.
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "tessel/ir/error.hpp"
#include "tessel/ir/op_kind.hpp"
#include "tessel/ir/types.hpp"

namespace tessel::ir {

class Op;
class Block;
class Function;

// An SSA value: an op's result or a block argument.
class Value {
 public:
  Type type;
  Op* def = nullptr;       // defining op; null for block arguments
  Block* block = nullptr;  // block holding `def`, or owning the argument
  int index = 0;           // result index in def, or argument index in block
  uint32_t id = 0;         // creation order in the function; stable, not printed

  bool is_block_arg() const { return def == nullptr; }
};

// A named attribute; values are integers or floats. Kept sorted by name.
struct Attr {
  std::string name;
  std::variant<int64_t, double> value;
  friend bool operator==(const Attr&, const Attr&) = default;
};

// A uniform op node; kinds and their rules live in ops.def.
class Op {
 public:
  OpKind kind;
  std::vector<Value*> operands;
  std::vector<Value*> results;
  std::vector<Attr> attrs;
  std::vector<std::unique_ptr<Block>> regions;  // For: one body block
  Block* parent = nullptr;
  SrcLoc loc;

  const OpInfo& info() const { return ir::info(kind); }
  std::string_view name() const { return ir::name_of(kind); }
  Value* result(int i = 0) const { return results.at(i); }
  Value* operand(int i) const { return operands.at(i); }
  int num_operands() const { return static_cast<int>(operands.size()); }
  Block& body() const { return *regions.at(0); }

  // attributes
  bool has_attr(std::string_view name) const;
  const Attr* find_attr(std::string_view name) const;
  int64_t int_attr(std::string_view name) const;     // InternalError if absent or not an int
  double float_attr(std::string_view name) const;    // ints widen to double
  void set_attr(std::string_view name, std::variant<int64_t, double> v);
};

// A straight-line list of ops with arguments; the kernel body or a loop body.
class Block {
 public:
  std::vector<Value*> args;
  std::vector<std::unique_ptr<Op>> ops;
  Op* parent_op = nullptr;  // null for the kernel's entry block

  Op* terminator() const { return ops.empty() ? nullptr : ops.back().get(); }
  // Is `this` equal to, or nested inside, `outer`?
  bool is_within(const Block* outer) const;
};

// Specialisation facts about a kernel argument (Triton's "divisible by 16" and "== 1").
struct ParamSpec {
  bool div16 = false;
  bool equal1 = false;
  friend bool operator==(const ParamSpec&, const ParamSpec&) = default;
};

struct Param {
  std::string name;
  ParamSpec spec;
};

// A kernel: parameters are the entry block's arguments. Owns every value.
class Function {
 public:
  explicit Function(std::string name = "kernel");
  Function(const Function&) = delete;
  Function& operator=(const Function&) = delete;

  std::string name;
  std::vector<Param> params;
  Block body;
  // The meta-parameters the kernel was traced with, sorted by name (lang::Meta's order). Not
  // printed: the IR already shows their effect. They name the PTX entry (lowering::entry_symbol)
  // so profilers tell a kernel's variants apart, and are part of the cache key for that reason.
  std::vector<std::pair<std::string, int64_t>> meta;

  Value* new_value(Type t);
  Value* add_param(std::string pname, Type t, ParamSpec spec = {});
  Value* add_block_arg(Block& b, Type t);
  // Interns a file name so SrcLoc can point at it for the function's lifetime.
  const char* intern(std::string_view s);
  size_t num_values() const { return values_.size(); }

 private:
  std::vector<std::unique_ptr<Value>> values_;
  std::deque<std::string> strings_;
};

// Walks every op in program order, descending into regions (pre-order).
template <class F>
void walk(Block& b, F&& f) {
  for (auto& op : b.ops) {
    f(*op);
    for (auto& r : op->regions) walk(*r, f);
  }
}
template <class F>
void walk(const Block& b, F&& f) {
  for (const auto& op : b.ops) {
    f(static_cast<const Op&>(*op));
    for (const auto& r : op->regions) walk(static_cast<const Block&>(*r), f);
  }
}

// Replaces every use of `from` by `to` in `b` and the blocks nested in it.
void replace_all_uses(Block& b, Value* from, Value* to);
// Number of uses of each value, indexed by Value::id.
std::vector<int> count_uses(const Function& f);

}  // namespace tessel::ir
