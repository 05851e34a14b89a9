// Builder: creates ops at an insertion point, inferring result types from ops.def.
#pragma once
#include <vector>

#include "tessel/ir/ir.hpp"

namespace tessel::ir {

// Result types of a non-Explicit op from its operands (ops.def's result rule).
std::vector<Type> infer_result_types(OpKind k, const std::vector<Value*>& operands);

class Builder {
 public:
  explicit Builder(Function& f) : fn_(f), block_(&f.body) {}

  Function& function() { return fn_; }
  Block* block() const { return block_; }
  void set_block(Block* b) { block_ = b; }
  SrcLoc loc;  // attached to every op created next

  // Appends an op. Empty `result_types` means "infer from the result rule".
  Op& create(OpKind k, std::vector<Value*> operands, std::vector<Type> result_types = {},
             std::vector<Attr> attrs = {});
  // Appends a one-result op and returns its value.
  Value* value(OpKind k, std::vector<Value*> operands, std::vector<Type> result_types = {},
               std::vector<Attr> attrs = {});

  Value* const_int(int64_t v, Type t);
  Value* const_float(double v, Type t);
  Value* program_id(int axis);
  Value* num_programs(int axis);
  Value* arange(int64_t start, int64_t end);
  Value* splat(Value* scalar, const Shape& shape);
  Value* broadcast(Value* v, const Shape& shape);
  Value* expand_dims(Value* v, int axis);
  Value* cast(Value* v, DType to);
  // Creates a loop with an empty body whose args are (%iv, carried...); the caller fills
  // the body and ends it with a yield. Result types equal the inits' types.
  Op& for_loop(Value* lo, Value* hi, Value* step, const std::vector<Value*>& inits);
  // Adds one more carried value to an existing loop (the DSL discovers them while
  // tracing the body): appends the init operand, a body argument and a loop result.
  // Returns the body argument.
  Value* add_carried(Op& loop, Value* init);
  // reduce_sum / reduce_max / reduce_min / argmax / argmin / cumsum of `v` along `axis`, with
  // the result type their rule demands (dimension dropped; i32 for arg reductions).
  Value* reduce(OpKind k, Value* v, int axis);
  // A generic reduce with an empty body whose args are (%acc, %elem), scalars of v's dtype;
  // the caller fills the body and ends it with `yield %combined`.
  Op& reduce_region(Value* v, int axis);
  Value* reshape(Value* v, const Shape& shape);
  Value* trans(Value* v);
  // dot %a, %b, %acc {allow_tf32}: result type = acc's type (see ops.def for the legal dtypes).
  Value* dot(Value* a, Value* b, Value* acc, bool allow_tf32 = true);
  // hint %v with one entry per dim for each non-empty family (ops.def; the verifier checks them).
  Value* hint(Value* v, const std::vector<int64_t>& multiple_of, const std::vector<int64_t>& max_contiguous = {});

 private:
  Function& fn_;
  Block* block_;
};

}  // namespace tessel::ir
