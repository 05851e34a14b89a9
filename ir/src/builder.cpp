// Builder: op creation at an insertion point, with result types from ops.def's rules.
#include "tessel/ir/builder.hpp"

#include <algorithm>

#include "tessel/ir/accessors.hpp"

namespace tessel::ir {

std::vector<Type> infer_result_types(OpKind k, const std::vector<Value*>& ops) {
  auto need = [&](size_t n) {
    TESSEL_ASSERT(ops.size() >= n, std::string(name_of(k)) + ": too few operands to infer a type");
  };
  switch (info(k).result) {
    case ResultRule::None: return {};
    case ResultRule::SameAs0: need(1); return {ops[0]->type};
    case ResultRule::SameAs1: need(2); return {ops[1]->type};
    case ResultRule::BoolOf0: need(1); return {ops[0]->type.with_dtype(i1())};
    case ResultRule::I32: return {Type{i32(), {}}};
    case ResultRule::F32Of1: need(2); return {ops[1]->type.with_dtype(f32())};
    case ResultRule::PointeeOf0: need(1); return {ops[0]->type.with_dtype(ops[0]->type.dtype.pointee())};
    case ResultRule::Explicit: break;
  }
  internal_error(__FILE__, __LINE__, std::string(name_of(k)) + " needs explicit result types");
}

Op& Builder::create(OpKind k, std::vector<Value*> operands, std::vector<Type> result_types,
                    std::vector<Attr> attrs) {
  TESSEL_ASSERT(block_ != nullptr, "no insertion block");
  if (result_types.empty() && info(k).result != ResultRule::None &&
      info(k).result != ResultRule::Explicit)
    result_types = infer_result_types(k, operands);
  auto op = std::make_unique<Op>();
  op->kind = k;
  op->operands = std::move(operands);
  std::sort(attrs.begin(), attrs.end(), [](const Attr& a, const Attr& b) { return a.name < b.name; });
  op->attrs = std::move(attrs);
  op->parent = block_;
  op->loc = loc;
  for (size_t i = 0; i < result_types.size(); ++i) {
    Value* v = fn_.new_value(std::move(result_types[i]));
    v->def = op.get();
    v->block = block_;
    v->index = static_cast<int>(i);
    op->results.push_back(v);
  }
  block_->ops.push_back(std::move(op));
  return *block_->ops.back();
}

Value* Builder::value(OpKind k, std::vector<Value*> operands, std::vector<Type> result_types,
                      std::vector<Attr> attrs) {
  Op& op = create(k, std::move(operands), std::move(result_types), std::move(attrs));
  TESSEL_ASSERT(op.results.size() == 1, std::string(op.name()) + " does not have one result");
  return op.results[0];
}

Value* Builder::const_int(int64_t v, Type t) {
  return value(OpKind::Constant, {}, {std::move(t)}, {{"value", v}});
}
Value* Builder::const_float(double v, Type t) {
  return value(OpKind::Constant, {}, {std::move(t)}, {{"value", v}});
}
Value* Builder::program_id(int axis) {
  return value(OpKind::ProgramId, {}, {}, {{"axis", int64_t{axis}}});
}
Value* Builder::num_programs(int axis) {
  return value(OpKind::NumPrograms, {}, {}, {{"axis", int64_t{axis}}});
}
Value* Builder::arange(int64_t start, int64_t end) {
  return value(OpKind::Arange, {}, {Type{i32(), {end - start}}}, {{"start", start}, {"end", end}});
}
Value* Builder::splat(Value* s, const Shape& shape) {
  return value(OpKind::Splat, {s}, {s->type.with_shape(shape)});
}
Value* Builder::broadcast(Value* v, const Shape& shape) {
  return value(OpKind::Broadcast, {v}, {v->type.with_shape(shape)});
}
Value* Builder::expand_dims(Value* v, int axis) {
  Shape s = v->type.shape;
  s.insert(s.begin() + axis, 1);
  return value(OpKind::ExpandDims, {v}, {v->type.with_shape(s)}, {{"axis", int64_t{axis}}});
}
Value* Builder::cast(Value* v, DType to) {
  return value(OpKind::Cast, {v}, {v->type.with_dtype(to)});
}

Op& Builder::for_loop(Value* lo, Value* hi, Value* step, const std::vector<Value*>& inits) {
  std::vector<Value*> operands{lo, hi, step};
  std::vector<Type> types;
  for (Value* v : inits) {
    operands.push_back(v);
    types.push_back(v->type);
  }
  Op& op = create(OpKind::For, std::move(operands), types);
  op.regions.push_back(std::make_unique<Block>());
  Block& body = *op.regions.back();
  body.parent_op = &op;
  fn_.add_block_arg(body, lo->type);
  for (Value* v : inits) fn_.add_block_arg(body, v->type);
  return op;
}

Value* Builder::add_carried(Op& loop, Value* init) {
  TESSEL_ASSERT(loop.kind == OpKind::For, "add_carried on a non-loop");
  loop.operands.push_back(init);
  Value* r = fn_.new_value(init->type);
  r->def = &loop;
  r->block = loop.parent;
  r->index = static_cast<int>(loop.results.size());
  loop.results.push_back(r);
  return fn_.add_block_arg(loop.body(), init->type);
}

Value* Builder::reduce(OpKind k, Value* v, int axis) {
  TESSEL_ASSERT(axis >= 0 && axis < v->type.rank(), "reduce: axis out of range");
  if (k == OpKind::CumSum) return value(k, {v}, {}, {{"axis", int64_t{axis}}});
  TESSEL_ASSERT(info(k).rule == Rule::Reduce || info(k).rule == Rule::ArgReduce, "reduce: not a reduction");
  Shape s = v->type.shape;
  s.erase(s.begin() + axis);
  DType d = info(k).rule == Rule::ArgReduce ? i32() : v->type.dtype;
  return value(k, {v}, {Type{d, std::move(s)}}, {{"axis", int64_t{axis}}});
}

Op& Builder::reduce_region(Value* v, int axis) {
  TESSEL_ASSERT(axis >= 0 && axis < v->type.rank(), "reduce: axis out of range");
  Shape s = v->type.shape;
  s.erase(s.begin() + axis);
  Op& op = create(OpKind::Reduce, {v}, {Type{v->type.dtype, std::move(s)}}, {{"axis", int64_t{axis}}});
  op.regions.push_back(std::make_unique<Block>());
  Block& body = *op.regions.back();
  body.parent_op = &op;
  fn_.add_block_arg(body, Type{v->type.dtype, {}});
  fn_.add_block_arg(body, Type{v->type.dtype, {}});
  return op;
}

Value* Builder::reshape(Value* v, const Shape& shape) {
  return value(OpKind::Reshape, {v}, {v->type.with_shape(shape)});
}

Value* Builder::trans(Value* v) {
  TESSEL_ASSERT(v->type.rank() == 2, "trans: not a 2-D tile");
  return value(OpKind::Trans, {v}, {v->type.with_shape(Shape{v->type.shape[1], v->type.shape[0]})});
}

Value* Builder::dot(Value* a, Value* b, Value* acc, bool allow_tf32) {
  return value(OpKind::Dot, {a, b, acc}, {acc->type}, {{"allow_tf32", int64_t{allow_tf32 ? 1 : 0}}});
}

Value* Builder::hint(Value* v, const std::vector<int64_t>& multiple_of, const std::vector<int64_t>& max_contiguous) {
  std::vector<Attr> attrs;
  for (size_t d = 0; d < multiple_of.size(); ++d)
    attrs.push_back(Attr{hint_attr_name("multiple_of", static_cast<int>(d)), multiple_of[d]});
  for (size_t d = 0; d < max_contiguous.size(); ++d)
    attrs.push_back(Attr{hint_attr_name("max_contiguous", static_cast<int>(d)), max_contiguous[d]});
  return value(OpKind::Hint, {v}, {}, std::move(attrs));
}

}  // namespace tessel::ir
