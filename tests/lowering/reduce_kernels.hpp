// Kernels with reductions, scans, reshapes and atomics, built with ir::Builder for the lowering tests.
#pragma once
#include <memory>

#include "kernels.hpp"

namespace lowering_test {

inline Value* i32c(Builder& b, int64_t v) { return b.const_int(v, scalar_t(Scalar::i32)); }

// Row-major element offsets of a tile of `shape` (rank 1 or 2), starting at program pid's tile.
inline Value* tile_offsets(Builder& b, const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  Value* base = b.value(OpKind::Mul, {b.program_id(0), i32c(b, n)});
  Value* offs;
  if (shape.size() == 1) {
    offs = b.arange(0, shape[0]);
  } else {
    Value* rows = b.value(OpKind::Mul, {b.expand_dims(b.arange(0, shape[0]), 1), b.splat(i32c(b, shape[1]), {shape[0], 1})});
    offs = b.value(OpKind::Add, {b.broadcast(rows, shape), b.broadcast(b.expand_dims(b.arange(0, shape[1]), 0), shape)});
  }
  return b.value(OpKind::Add, {b.splat(base, shape), offs});
}

// Stores `v` (a tile of rank <= 2 or a scalar) at out + its program's offsets.
inline void store_result(Builder& b, Value* out, Value* v) {
  if (v->type.is_scalar()) {
    b.create(OpKind::Store, {b.value(OpKind::AddPtr, {out, b.program_id(0)}), v});
    return;
  }
  b.create(OpKind::Store, {at(b, out, tile_offsets(b, v->type.shape)), v});
}

// out = op(x tile, axis): one tile per program.
inline std::unique_ptr<Function> reduce_kernel(OpKind k, const Shape& shape, int axis, Scalar t) {
  auto f = std::make_unique<Function>("reduce_kernel");
  Builder b(*f);
  const bool arg = k == OpKind::ArgMax || k == OpKind::ArgMin;
  Value* x = f->add_param("x", ptr_t(t), div16());
  Value* out = f->add_param("out", ptr_t(arg ? Scalar::i32 : t), div16());
  Value* v = b.value(OpKind::Load, {at(b, x, tile_offsets(b, shape))});
  store_result(b, out, b.reduce(k, v, axis));
  return f;
}

// out = reduce(x, axis) with a combine region made by `body(b, acc, elem)`.
template <class Body>
inline std::unique_ptr<Function> generic_reduce_kernel(const Shape& shape, int axis, Scalar t, Body body) {
  auto f = std::make_unique<Function>("generic_reduce");
  Builder b(*f);
  Value* x = f->add_param("x", ptr_t(t), div16());
  Value* out = f->add_param("out", ptr_t(t), div16());
  Value* v = b.value(OpKind::Load, {at(b, x, tile_offsets(b, shape))});
  Op& r = b.reduce_region(v, axis);
  b.set_block(&r.body());
  b.create(OpKind::Yield, {body(b, r.body().args[0], r.body().args[1])});
  b.set_block(&f->body);
  store_result(b, out, r.result());
  return f;
}

// Row softmax over an R x C tile: e = exp(x - max(x, 1)[:, None]); out = e / sum(e, 1)[:, None].
// A 1-D shape reduces to scalars instead.
inline std::unique_ptr<Function> softmax_kernel(const Shape& shape, Scalar t = Scalar::f32) {
  auto f = std::make_unique<Function>("softmax");
  Builder b(*f);
  Value* x = f->add_param("x", ptr_t(t), div16());
  Value* out = f->add_param("out", ptr_t(t), div16());
  Value* offs = tile_offsets(b, shape);
  Value* v = b.value(OpKind::Load, {at(b, x, offs)});
  if (t != Scalar::f32) v = b.cast(v, DType{Scalar::f32});
  const int axis = static_cast<int>(shape.size()) - 1;
  auto back = [&](Value* r) {
    if (r->type.is_scalar()) return b.splat(r, shape);
    return b.broadcast(b.expand_dims(r, axis), shape);
  };
  Value* m = b.reduce(OpKind::ReduceMax, v, axis);
  Value* e = b.value(OpKind::Exp, {b.value(OpKind::Sub, {v, back(m)})});
  Value* s = b.reduce(OpKind::ReduceSum, e, axis);
  Value* y = b.value(OpKind::Div, {e, back(s)});
  b.create(OpKind::Store, {at(b, out, offs), t == Scalar::f32 ? y : b.cast(y, DType{t})});
  return f;
}

// out = cumsum(x, axis)
inline std::unique_ptr<Function> cumsum_kernel(const Shape& shape, int axis, Scalar t) {
  auto f = std::make_unique<Function>("cumsum_kernel");
  Builder b(*f);
  Value* x = f->add_param("x", ptr_t(t), div16());
  Value* out = f->add_param("out", ptr_t(t), div16());
  Value* offs = tile_offsets(b, shape);
  Value* v = b.value(OpKind::Load, {at(b, x, offs)});
  b.create(OpKind::Store, {at(b, out, offs), b.reduce(OpKind::CumSum, v, axis)});
  return f;
}

// out (shape `to`) = reshape(x (shape `from`)), or trans(x) when `to` is empty; x is read as
// `t` and cast to `out_t` first.
inline std::unique_ptr<Function> reshape_kernel(const Shape& from, const Shape& to, Scalar t = Scalar::f32,
                                                Scalar out_t = Scalar::f32) {
  auto f = std::make_unique<Function>("reshape_kernel");
  Builder b(*f);
  Value* x = f->add_param("x", ptr_t(t), div16());
  Value* out = f->add_param("out", ptr_t(out_t), div16());
  Value* v = b.value(OpKind::Load, {at(b, x, tile_offsets(b, from))});
  if (out_t != t) v = b.cast(v, DType{out_t});
  Value* r = to.empty() ? b.trans(v) : b.reshape(v, to);
  store_result(b, out, r);
  return f;
}

// old = atomic(acc + offs, x[offs], offs < n); optionally out[offs] = old.
inline std::unique_ptr<Function> atomic_kernel(OpKind k, Scalar t, int64_t block, bool use_old, bool scalar = false,
                                               bool acq_rel = false) {
  std::vector<tessel::ir::Attr> attrs;
  if (acq_rel) attrs.push_back({"acq_rel", int64_t{1}});
  auto f = std::make_unique<Function>("atomic_kernel");
  Builder b(*f);
  Value* acc = f->add_param("acc", ptr_t(t), div16());
  Value* x = f->add_param("x", ptr_t(t), div16());
  Value* out = f->add_param("out", ptr_t(t), div16());
  Value* n = f->add_param("n", scalar_t(Scalar::i32));
  Value* old;
  if (scalar) {
    Value* pid = b.program_id(0);
    Value* v = b.value(OpKind::Load, {b.value(OpKind::AddPtr, {x, pid})});
    old = b.value(k, {acc, v, b.value(OpKind::CmpLt, {pid, n})}, {}, attrs);
    if (use_old) b.create(OpKind::Store, {b.value(OpKind::AddPtr, {out, pid}), old});
    return f;
  }
  Value* offs = block_offsets(b, block);
  Value* mask = b.value(OpKind::CmpLt, {offs, b.splat(n, {block})});
  Value* v = b.value(OpKind::Load, {at(b, x, offs), mask});
  old = b.value(k, {at(b, acc, b.arange(0, block)), v, mask}, {}, attrs);
  if (use_old) b.create(OpKind::Store, {at(b, out, offs), old, mask});
  return f;
}

}  // namespace lowering_test

namespace lowering_test {

// Online row statistics over `steps` tiles of R x C: m = running row max, l = running sum of
// exp(x - m), both carried through the loop as [R] tiles; out[rows] = l.
inline std::unique_ptr<Function> online_rows_kernel(int64_t r, int64_t c) {
  auto f = std::make_unique<Function>("online_rows");
  Builder b(*f);
  Value* x = f->add_param("x", ptr_t(Scalar::f32), div16());
  Value* out = f->add_param("out", ptr_t(Scalar::f32), div16());
  Value* steps = f->add_param("steps", scalar_t(Scalar::i32));
  const Shape shape{r, c};
  Value* offs = tile_offsets(b, shape);
  Value* m0 = b.const_float(-1e30, Type{DType{Scalar::f32}, {r}});
  Value* l0 = b.const_float(0.0, Type{DType{Scalar::f32}, {r}});
  Op& loop = b.for_loop(i32c(b, 0), steps, i32c(b, 1), {m0, l0});
  ForOp lp{loop};
  b.set_block(&loop.body());
  Value* shift = b.value(OpKind::Mul, {lp.induction_var(), i32c(b, r * c)});
  Value* v = b.value(OpKind::Load, {at(b, x, b.value(OpKind::Add, {offs, b.splat(shift, shape)}))});
  Value* m = lp.carried(0);
  Value* m_new = b.value(OpKind::Max, {m, b.reduce(OpKind::ReduceMax, v, 1)});
  Value* e = b.value(OpKind::Exp, {b.value(OpKind::Sub, {v, b.broadcast(b.expand_dims(m_new, 1), shape)})});
  Value* scale = b.value(OpKind::Exp, {b.value(OpKind::Sub, {m, m_new})});
  Value* l_new = b.value(OpKind::Add, {b.value(OpKind::Mul, {lp.carried(1), scale}), b.reduce(OpKind::ReduceSum, e, 1)});
  b.create(OpKind::Yield, {m_new, l_new});
  b.set_block(&f->body);
  store_result(b, out, loop.results[1]);
  return f;
}

}  // namespace lowering_test
