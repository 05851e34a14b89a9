// Matmul tile kernels built with ir::Builder for the dot lowering tests.
#pragma once
#include "kernels.hpp"

namespace lowering_test {

struct MatmulSpec {
  int64_t m = 128, n = 128, bk = 32;
  Scalar in = Scalar::f16;   // a and b
  Scalar acc = Scalar::f32;  // accumulator
  Scalar out = Scalar::f32;  // stored
  bool allow_tf32 = true;
  bool loop = true;          // K loop carrying the accumulator and the pointer tiles
  bool bias_relu = false;    // epilogue: + bias[n], max(., 0)
};

// c[pid_m*M + i, j] = sum over k of a[., k] * b[k, j] (+ bias, relu), a row-major with row
// stride lda, b with row stride ldb, c with ldc; `steps` K tiles of BK.
inline std::unique_ptr<Function> matmul_kernel(const MatmulSpec& s) {
  auto f = std::make_unique<Function>("matmul_tile");
  Builder b(*f);
  const Type i32 = scalar_t(Scalar::i32);
  Value* pa = f->add_param("a", ptr_t(s.in), div16());
  Value* pb = f->add_param("b", ptr_t(s.in), div16());
  Value* pc = f->add_param("c", ptr_t(s.out), div16());
  Value* pbias = f->add_param("bias", ptr_t(s.acc), div16());
  Value* lda = f->add_param("lda", i32, div16());
  Value* ldb = f->add_param("ldb", i32, div16());
  Value* ldc = f->add_param("ldc", i32, div16());
  Value* steps = f->add_param("steps", i32);
  auto tile2 = [&](Value* rows, Value* stride, Value* cols, int64_t r, int64_t c) {
    Value* ri = b.broadcast(b.value(OpKind::Mul, {b.expand_dims(rows, 1), b.splat(stride, {r, 1})}), {r, c});
    return b.value(OpKind::Add, {ri, b.broadcast(b.expand_dims(cols, 0), {r, c})});
  };
  Value* row0 = b.value(OpKind::Mul, {b.program_id(0), b.const_int(s.m, i32)});
  Value* offs_m = b.value(OpKind::Add, {b.splat(row0, {s.m}), b.arange(0, s.m)});
  Value* offs_n = b.arange(0, s.n);
  Value* offs_k = b.arange(0, s.bk);
  Value* a_ptrs = at(b, pa, tile2(offs_m, lda, offs_k, s.m, s.bk));
  Value* b_ptrs = at(b, pb, tile2(offs_k, ldb, offs_n, s.bk, s.n));
  const Type acc_t{DType{s.acc}, {s.m, s.n}};
  Value* zero = s.acc == Scalar::i32 ? b.const_int(0, acc_t) : b.const_float(0.0, acc_t);
  Value* acc = nullptr;
  if (s.loop) {
    Op& loop = b.for_loop(b.const_int(0, i32), steps, b.const_int(1, i32), {zero, a_ptrs, b_ptrs});
    ForOp lp{loop};
    b.set_block(&loop.body());
    Value* at_ = b.value(OpKind::Load, {lp.carried(1)});
    Value* bt = b.value(OpKind::Load, {lp.carried(2)});
    Value* next = b.dot(at_, bt, lp.carried(0), s.allow_tf32);
    Value* a_next = b.value(OpKind::AddPtr, {lp.carried(1), b.splat(b.const_int(s.bk, i32), {s.m, s.bk})});
    Value* kstride = b.value(OpKind::Mul, {ldb, b.const_int(s.bk, i32)});
    Value* b_next = b.value(OpKind::AddPtr, {lp.carried(2), b.splat(kstride, {s.bk, s.n})});
    b.create(OpKind::Yield, {next, a_next, b_next});
    b.set_block(&f->body);
    acc = loop.results[0];
  } else {
    acc = b.dot(b.value(OpKind::Load, {a_ptrs}), b.value(OpKind::Load, {b_ptrs}), zero, s.allow_tf32);
  }
  if (s.bias_relu) {
    Value* bias = b.value(OpKind::Load, {at(b, pbias, offs_n)});
    acc = b.value(OpKind::Add, {acc, b.broadcast(b.expand_dims(bias, 0), {s.m, s.n})});
    Value* z = s.acc == Scalar::i32 ? b.const_int(0, acc_t) : b.const_float(0.0, acc_t);
    acc = b.value(OpKind::Max, {acc, z});
  }
  if (s.out != s.acc) acc = b.cast(acc, DType{s.out});
  b.create(OpKind::Store, {at(b, pc, tile2(offs_m, ldc, offs_n, s.m, s.n)), acc});
  return f;
}

}  // namespace lowering_test
