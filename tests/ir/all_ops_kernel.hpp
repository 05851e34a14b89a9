// A kernel built through the Builder that uses every op in ops.def (shared by IR tests).
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>

#include "tessel/ir/builder.hpp"

namespace tessel::ir::testing {

// Every op kind at least once, nested loops with carried values, loads with and without
// mask/other, masked and unmasked stores, unusual float constants, param specs and locs.
inline std::unique_ptr<Function> build_all_ops_kernel() {
  auto f = std::make_unique<Function>("all_ops");
  Builder b(*f);
  const DType pf32 = f32().pointer_to(), pf16 = DType{Scalar::f16}.pointer_to();
  Value* x = f->add_param("x", Type{pf32, {}}, ParamSpec{true, false});
  Value* y = f->add_param("y", Type{pf16, {}});
  Value* out = f->add_param("out", Type{pf32, {}}, ParamSpec{true, true});
  Value* n = f->add_param("n", Type{i32(), {}}, ParamSpec{true, false});
  Value* stride = f->add_param("stride", Type{i32(), {}}, ParamSpec{false, true});
  Value* seed = f->add_param("seed", Type{i64(), {}});
  const Shape S{128};
  const Type tf32{f32(), S}, ti32{i32(), S};

  b.loc = SrcLoc{f->intern("kernels/all_ops.cpp"), 12};
  Value* pid = b.program_id(0);
  Value* nprog = b.num_programs(2);
  Value* block = b.const_int(128, Type{i32(), {}});
  Value* base = b.value(OpKind::Mul, {pid, block});
  b.loc = SrcLoc{f->intern("kernels/all_ops.cpp"), 13};
  Value* offs = b.value(OpKind::Add, {b.splat(base, S), b.arange(0, 128)});
  Value* mask = b.value(OpKind::CmpLt, {offs, b.splat(n, S)});
  b.loc = SrcLoc{f->intern("other file.cpp"), 7};
  Value* xptrs = b.value(OpKind::AddPtr, {b.splat(x, S), offs});
  Value* zero = b.const_float(0.0, tf32);
  Value* xv = b.value(OpKind::Load, {xptrs, mask, zero});  // mask and other
  Value* xv_nomask = b.value(OpKind::Load, {xptrs});       // neither
  Value* xv_mask = b.value(OpKind::Load, {xptrs, mask});   // mask only
  b.loc = SrcLoc{};
  Value* yptrs = b.value(OpKind::AddPtr, {b.splat(y, S), offs});
  Value* yv = b.cast(b.value(OpKind::Load, {yptrs, mask}), f32());

  // float arithmetic and unary math
  Value* v = b.value(OpKind::Sub, {xv, yv});
  v = b.value(OpKind::Div, {v, xv_nomask});
  v = b.value(OpKind::Min, {v, xv_mask});
  v = b.value(OpKind::Max, {v, b.value(OpKind::Neg, {v})});
  v = b.value(OpKind::Abs, {v});
  for (OpKind k : {OpKind::Exp, OpKind::Exp2, OpKind::Log, OpKind::Log2, OpKind::Sqrt, OpKind::Rsqrt,
                   OpKind::Sin, OpKind::Cos, OpKind::Tanh, OpKind::Sigmoid, OpKind::Erf,
                   OpKind::Floor, OpKind::Ceil})
    v = b.value(k, {v});
  v = b.value(OpKind::Fma, {v, xv, yv});

  // integer and bitwise ops on the offsets
  Value* seven = b.splat(b.const_int(7, Type{i32(), {}}), S);
  Value* iv = b.value(OpKind::Rem, {offs, seven});
  iv = b.value(OpKind::And, {iv, offs});
  iv = b.value(OpKind::Or, {iv, seven});
  iv = b.value(OpKind::Xor, {iv, offs});
  iv = b.value(OpKind::Shl, {iv, seven});
  iv = b.value(OpKind::Shr, {iv, seven});
  iv = b.value(OpKind::Not, {iv});
  Value* c = b.value(OpKind::CmpEq, {iv, offs});
  c = b.value(OpKind::Or, {c, b.value(OpKind::CmpNe, {iv, seven})});
  c = b.value(OpKind::And, {c, b.value(OpKind::CmpLe, {iv, offs})});
  c = b.value(OpKind::Xor, {c, b.value(OpKind::CmpGt, {iv, offs})});
  c = b.value(OpKind::Or, {c, b.value(OpKind::CmpGe, {v, xv})});
  v = b.value(OpKind::Select, {c, v, xv});

  // bit-level ops: f32 bits as u32, and int4 fields of u32 words (32 words -> 128 fields)
  Value* bits = b.value(OpKind::Bitcast, {v}, {Type{DType{Scalar::u32}, S}});
  Value* words = b.reshape(bits, Shape{32, 4});
  Value* nib = b.value(OpKind::Unpack, {words}, {Type{f32(), Shape{256, 4}}}, {{"axis", int64_t{0}}, {"bits", int64_t{4}}});
  Value* nsum = b.reduce(OpKind::ReduceSum, b.reshape(nib, Shape{1024}), 0);  // f32
  v = b.value(OpKind::Add, {v, b.splat(nsum, S)});

  // random numbers
  Value* r = b.value(OpKind::Rand, {seed, offs});
  Value* rn = b.value(OpKind::RandN, {seed, b.value(OpKind::Add, {offs, b.splat(stride, S)})});
  v = b.value(OpKind::Add, {v, b.value(OpKind::Mul, {r, rn})});

  // unusual constants (exercised by the printer's float forms)
  const double consts[] = {std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN(), -0.0, 1e-30, 0.1, 3.0, -2.5e30};
  for (double d : consts) v = b.value(OpKind::Add, {v, b.const_float(d, tf32)});
  Value* big = b.const_int(std::numeric_limits<int64_t>::min(), Type{i64(), {}});
  Value* t = b.const_int(1, Type{i1(), S});
  Value* h = b.const_float(-65504.0, Type{DType{Scalar::f16}, {}});
  (void)big;
  (void)h;
  c = b.value(OpKind::And, {c, t});

  // 2-D shapes
  Value* row = b.expand_dims(v, 0);                  // f32[1,128]
  Value* tile = b.broadcast(row, Shape{4, 128});     // f32[4,128]
  Value* col = b.expand_dims(b.arange(3, 7), 1);     // i32[4,1]  (odd start)
  Value* colf = b.broadcast(b.cast(col, f32()), Shape{4, 128});
  tile = b.value(OpKind::Mul, {tile, colf});

  // reductions, scans and shape ops on the 2-D tile
  Value* rsum = b.reduce(OpKind::ReduceSum, tile, 1);             // f32[4]
  Value* rmax = b.reduce(OpKind::ReduceMax, tile, 0);             // f32[128]
  Value* rmin = b.reduce(OpKind::ReduceMin, rsum, 0);             // f32 (rank 1 -> scalar)
  Value* amax = b.reduce(OpKind::ArgMax, tile, 1);                // i32[4]
  Value* amin = b.reduce(OpKind::ArgMin, iv, 0);                  // i32
  Value* csum = b.reduce(OpKind::CumSum, tile, 1);                // f32[4,128]
  Op& red = b.reduce_region(csum, 0);                             // f32[128]
  b.set_block(&red.body());
  Value* comb = b.value(OpKind::Max, {red.body().args[0], red.body().args[1]});
  b.create(OpKind::Yield, {b.value(OpKind::Add, {comb, red.body().args[1]})});
  b.set_block(&f->body);
  Value* resh = b.reshape(b.trans(tile), Shape{4, 128});        // f32[128,4] -> f32[4,128]
  Value* scaled = b.value(OpKind::Mul, {rmax, b.splat(rmin, S)});
  Value* amaxf = b.reshape(b.broadcast(b.expand_dims(amax, 1), Shape{4, 32}), S);  // i32[128]
  scaled = b.value(OpKind::Add, {scaled, b.cast(amaxf, f32())});
  scaled = b.value(OpKind::Add, {scaled, b.cast(b.splat(amin, S), f32())});
  scaled = b.value(OpKind::Add, {scaled, red.result(0)});

  // nested loops with carried values
  Value* lo = b.const_int(0, Type{i32(), {}});
  Value* one = b.const_int(1, Type{i32(), {}});
  Op& outer = b.for_loop(lo, n, one, {v, tile});
  b.set_block(&outer.body());
  Value* k = outer.body().args[0];
  Value* acc = outer.body().args[1];
  Value* acc2 = outer.body().args[2];
  b.loc = SrcLoc{f->intern("kernels/all_ops.cpp"), 40};
  Op& inner = b.for_loop(k, n, stride, {acc});
  Value* inner_acc = b.add_carried(inner, pid);  // carried value discovered while tracing
  b.set_block(&inner.body());
  Value* a2 = b.value(OpKind::Add, {inner.body().args[1], yv});
  Value* cnt = b.value(OpKind::Add, {inner_acc, inner.body().args[0]});
  b.create(OpKind::Yield, {a2, cnt});
  b.set_block(&outer.body());
  b.loc = SrcLoc{};
  b.create(OpKind::Yield, {inner.result(0), acc2});
  b.set_block(&f->body);

  // dot (after the loops, so the value numbers above stay put): an f16 [16,32] x [32,16] product into an f32 [16,16] accumulator, folded into `scaled`
  const DType f16{Scalar::f16};
  Value* da = b.cast(b.reshape(b.broadcast(b.expand_dims(v, 0), Shape{4, 128}), Shape{16, 32}), f16);
  Value* db = b.value(OpKind::Add, {b.trans(da), b.trans(da)});  // f16[32,16]
  Value* dacc = b.const_float(0.5, Type{f32(), {16, 16}});
  Value* dsum = b.dot(da, db, dacc, /*allow_tf32=*/false);     // f32[16,16]
  scaled = b.value(OpKind::Add, {scaled, b.reduce(OpKind::ReduceSum, b.reshape(dsum, Shape{2, 128}), 0)});

  // stores: masked tile, unmasked scalar; an empty loop with nothing carried
  Value* optrs = b.value(OpKind::AddPtr, {b.splat(out, S), offs});
  b.create(OpKind::Store, {optrs, outer.result(0), mask});
  Value* optrs2 = b.value(OpKind::AddPtr, {b.splat(out, Shape{4, 128}), b.broadcast(col, Shape{4, 128})});
  b.create(OpKind::Store, {optrs2, outer.result(1)});
  // atomics: masked with its old values used, unmasked with its result unused
  Value* old = b.value(OpKind::AtomicAdd, {optrs, scaled, mask});
  b.create(OpKind::AtomicMax, {optrs2, b.value(OpKind::Add, {resh, b.broadcast(b.expand_dims(old, 0), Shape{4, 128})})});
  b.create(OpKind::Store, {out, b.cast(nprog, f32())});
  Op& empty = b.for_loop(lo, n, one, {});
  b.set_block(&empty.body());
  b.create(OpKind::Yield, {});
  b.set_block(&f->body);
  b.create(OpKind::Store, {b.cast(b.cast(out, i64()), pf32), b.const_float(2.0, Type{f32(), {}})});
  // compiler hints on a pointer tile (both families) and a scalar (last, so the numbers above stay put)
  Value* hinted = b.hint(b.value(OpKind::AddPtr, {b.splat(out, S), offs}), {16}, {4});
  b.create(OpKind::Store, {hinted, b.const_float(1.0, tf32)});
  b.create(OpKind::Store, {out, b.cast(b.hint(n, {16}), f32())});
  return f;
}

}  // namespace tessel::ir::testing
