// Small kernels built with ir::Builder for the lowering tests (the parser may not exist yet).
#pragma once
#include <doctest/doctest.h>

#include <memory>

#include "tessel/ir/accessors.hpp"
#include "tessel/ir/builder.hpp"

namespace lowering_test {

using namespace tessel::ir;

inline Type scalar_t(Scalar s) { return Type{DType{s}, {}}; }
inline Type ptr_t(Scalar s) { return Type{DType{s, true}, {}}; }
inline ParamSpec div16() { return ParamSpec{true, false}; }

// offs = pid * BLOCK + arange(0, BLOCK)
inline Value* block_offsets(Builder& b, int64_t block) {
  Value* pid = b.program_id(0);
  Value* start = b.value(OpKind::Mul, {pid, b.const_int(block, scalar_t(Scalar::i32))});
  return b.value(OpKind::Add, {b.splat(start, {block}), b.arange(0, block)});
}

inline Value* at(Builder& b, Value* base, Value* offs) {
  return b.value(OpKind::AddPtr, {b.splat(base, offs->type.shape), offs});
}

// out[i] = x[i] + y[i] for i < n
inline std::unique_ptr<Function> vector_add(int64_t block, bool n_div16, bool masked = true,
                                            Scalar t = Scalar::f32) {
  auto f = std::make_unique<Function>("add_kernel");
  Builder b(*f);
  Value* x = f->add_param("x", ptr_t(t), div16());
  Value* y = f->add_param("y", ptr_t(t), div16());
  Value* out = f->add_param("out", ptr_t(t), div16());
  Value* n = f->add_param("n", scalar_t(Scalar::i32), ParamSpec{n_div16, false});
  Value* offs = block_offsets(b, block);
  std::vector<Value*> mask;
  if (masked) mask.push_back(b.value(OpKind::CmpLt, {offs, b.splat(n, {block})}));
  auto load = [&](Value* p) {
    std::vector<Value*> ops{at(b, p, offs)};
    ops.insert(ops.end(), mask.begin(), mask.end());
    return b.value(OpKind::Load, ops);
  };
  Value* sum = b.value(OpKind::Add, {load(x), load(y)});
  std::vector<Value*> st{at(b, out, offs), sum};
  st.insert(st.end(), mask.begin(), mask.end());
  b.create(OpKind::Store, st);
  return f;
}

// The op producing the nth (from 0) value of kind k in program order; REQUIREs that it exists.
inline const Op* find_op(const Function& f, OpKind k, int nth = 0) {
  const Op* found = nullptr;
  walk(f.body, [&](const Op& op) {
    if (op.kind == k && nth-- == 0 && !found) found = &op;
  });
  REQUIRE(found != nullptr);
  return found;
}

}  // namespace lowering_test

namespace lowering_test {

// A unary elementwise kernel: out[offs] = op(x[offs]) for each given op, summed.
inline std::unique_ptr<Function> unary_chain(const std::vector<OpKind>& kinds, Scalar t, int64_t block = 256) {
  auto f = std::make_unique<Function>("unary_kernel");
  Builder b(*f);
  Value* x = f->add_param("x", ptr_t(t), div16());
  Value* out = f->add_param("out", ptr_t(t), div16());
  Value* offs = block_offsets(b, block);
  Value* v = b.value(OpKind::Load, {at(b, x, offs)});
  Value* acc = nullptr;
  for (OpKind k : kinds) {
    Value* r = b.value(k, {v});
    acc = acc ? b.value(OpKind::Add, {acc, r}) : r;
  }
  b.create(OpKind::Store, {at(b, out, offs), acc});
  return f;
}

// out[i, j] = a[i] + b[j] over an M x N tile; out rows are `stride` apart.
inline std::unique_ptr<Function> outer_sum(int64_t m, int64_t n, bool share_arange) {
  auto f = std::make_unique<Function>("outer_sum");
  Builder b(*f);
  Value* a = f->add_param("a", ptr_t(Scalar::f32), div16());
  Value* bp = f->add_param("b", ptr_t(Scalar::f32), div16());
  Value* out = f->add_param("out", ptr_t(Scalar::f32), div16());
  Value* stride = f->add_param("stride", scalar_t(Scalar::i32), div16());
  Value* offs_m = b.arange(0, m);
  Value* offs_n = share_arange && m == n ? offs_m : b.arange(0, n);
  Value* va = b.value(OpKind::Load, {at(b, a, offs_m)});
  Value* vb = b.value(OpKind::Load, {at(b, bp, offs_n)});
  Value* col = b.broadcast(b.expand_dims(va, 1), {m, n});
  Value* row = b.broadcast(b.expand_dims(vb, 0), {m, n});
  Value* sum = b.value(OpKind::Add, {col, row});
  Value* ri = b.broadcast(b.value(OpKind::Mul, {b.expand_dims(offs_m, 1), b.splat(stride, {m, 1})}), {m, n});
  Value* ci = b.broadcast(b.expand_dims(offs_n, 0), {m, n});
  Value* idx = b.value(OpKind::Add, {ri, ci});
  b.create(OpKind::Store, {at(b, out, idx), sum});
  return f;
}

// acc = 0; for k in [0, steps): acc += x[k * BLOCK + offs]; out[offs] = acc
inline std::unique_ptr<Function> loop_sum(int64_t block) {
  auto f = std::make_unique<Function>("loop_sum");
  Builder b(*f);
  Value* x = f->add_param("x", ptr_t(Scalar::f32), div16());
  Value* out = f->add_param("out", ptr_t(Scalar::f32), div16());
  Value* steps = f->add_param("steps", scalar_t(Scalar::i32));
  Value* offs = b.arange(0, block);
  Value* zero = b.const_float(0.0, Type{DType{Scalar::f32}, {block}});
  Value* count0 = b.const_int(0, scalar_t(Scalar::i32));
  Op& loop = b.for_loop(b.const_int(0, scalar_t(Scalar::i32)), steps, b.const_int(1, scalar_t(Scalar::i32)),
                        {zero, count0});
  ForOp lp{loop};
  b.set_block(&loop.body());
  Value* base = b.value(OpKind::Mul, {lp.induction_var(), b.const_int(block, scalar_t(Scalar::i32))});
  Value* idx = b.value(OpKind::Add, {b.splat(base, {block}), offs});
  Value* v = b.value(OpKind::Load, {at(b, x, idx)});
  Value* acc = b.value(OpKind::Add, {lp.carried(0), v});
  Value* count = b.value(OpKind::Add, {lp.carried(1), b.const_int(1, scalar_t(Scalar::i32))});
  b.create(OpKind::Yield, {acc, count});
  b.set_block(&f->body);
  Value* scaled = b.value(OpKind::Mul, {loop.results[0], b.splat(b.cast(loop.results[1], DType{Scalar::f32}), {block})});
  b.create(OpKind::Store, {at(b, out, offs), scaled});
  return f;
}

}  // namespace lowering_test
