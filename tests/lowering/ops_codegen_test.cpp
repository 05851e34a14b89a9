// Every op family lowers and assembles: math, integer ops, casts, random, loops, 2-D tiles.
#include <doctest/doctest.h>

#include "check_ptx.hpp"
#include "kernels.hpp"

using namespace lowering_test;
using tessel::lowering::compile;
using tessel::lowering::Options;

namespace {
const std::vector<OpKind> kMathOps{OpKind::Exp,  OpKind::Exp2, OpKind::Log,     OpKind::Log2, OpKind::Sqrt,
                                   OpKind::Rsqrt, OpKind::Sin,  OpKind::Cos,     OpKind::Tanh, OpKind::Sigmoid,
                                   OpKind::Erf,  OpKind::Floor, OpKind::Ceil,   OpKind::Neg,  OpKind::Abs};
}

TEST_CASE("every math op lowers (f32)") {
  auto f = unary_chain(kMathOps, Scalar::f32);
  auto c = compile_checked(*f);
  INFO(c.ptx);
  for (const char* s : {"ex2.approx.ftz.f32", "lg2.approx.f32", "sqrt.rn.f32", "rsqrt.approx.f32", "sin.approx.f32",
                        "cos.approx.f32", "cvt.rmi.f32.f32", "cvt.rpi.f32.f32", "fma.rn.f32", "abs.f32",
                        "div.rn.f32"})  // (neg then abs folds to abs: no neg.f32 here)
    CHECK_MESSAGE(c.ptx.find(s) != std::string::npos, s);
}

TEST_CASE("every math op lowers (f16, bf16, f64)") {
  for (Scalar t : {Scalar::f16, Scalar::bf16, Scalar::f64}) {
    CAPTURE(static_cast<int>(t));
    auto f = unary_chain(kMathOps, t);
    auto c = compile_checked(*f);
    if (t == Scalar::f64) {
      CHECK(c.ptx.find("sqrt.rn.f64") != std::string::npos);
      CHECK(c.ptx.find("cvt.rmi.f64.f64") != std::string::npos);
      CHECK(c.ptx.find("cvt.rni.f64.f64") != std::string::npos);  // exp/sin range reduction
      CHECK(c.ptx.find("fma.rn.f64") != std::string::npos);
    } else {
      CHECK(c.ptx.find("ex2.approx.ftz.f32") != std::string::npos);
    }
  }
}

TEST_CASE("integer and comparison ops: every binary op on i32, i64, i8 and bool") {
  for (Scalar t : {Scalar::i32, Scalar::i64, Scalar::i8, Scalar::i16}) {
    CAPTURE(static_cast<int>(t));
    Function f("int_ops");
    Builder b(f);
    Value* x = f.add_param("x", ptr_t(t), div16());
    Value* y = f.add_param("y", ptr_t(t), div16());
    Value* out = f.add_param("out", ptr_t(t), div16());
    Value* flags = f.add_param("flags", ptr_t(Scalar::i1), div16());
    Value* offs = block_offsets(b, 256);
    Value* a = b.value(OpKind::Load, {at(b, x, offs)});
    Value* c = b.value(OpKind::Load, {at(b, y, offs)});
    Value* acc = a;
    for (OpKind k : {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Rem, OpKind::Min, OpKind::Max,
                     OpKind::And, OpKind::Or, OpKind::Xor, OpKind::Shl, OpKind::Shr})
      acc = b.value(OpKind::Add, {acc, b.value(k, {a, c})});
    acc = b.value(OpKind::Add, {acc, b.value(OpKind::Neg, {a})});
    acc = b.value(OpKind::Add, {acc, b.value(OpKind::Abs, {c})});
    acc = b.value(OpKind::Xor, {acc, b.value(OpKind::Not, {a})});
    Value* any = nullptr;
    for (OpKind k : {OpKind::CmpEq, OpKind::CmpNe, OpKind::CmpLt, OpKind::CmpLe, OpKind::CmpGt, OpKind::CmpGe}) {
      Value* cmp = b.value(k, {a, c});
      any = any ? b.value(OpKind::Xor, {any, cmp}) : cmp;
    }
    acc = b.value(OpKind::Select, {any, acc, c});
    b.create(OpKind::Store, {at(b, out, offs), acc});
    b.create(OpKind::Store, {at(b, flags, offs), any});
    auto r = compile_checked(f);
    INFO(r.ptx);
    CHECK(r.ptx.find("div.s") != std::string::npos);  // rem reuses the quotient: x - (x / y) * y
    CHECK(r.ptx.find("shr.s") != std::string::npos);
  }
}

TEST_CASE("casts between every pair of element types") {
  const std::vector<Scalar> all{Scalar::i1,  Scalar::i8,   Scalar::i16, Scalar::i32, Scalar::i64,
                                Scalar::f16, Scalar::bf16, Scalar::f32, Scalar::f64};
  for (Scalar from : all) {
    CAPTURE(static_cast<int>(from));
    Function f("casts");
    Builder b(f);
    Value* x = f.add_param("x", ptr_t(from), div16());
    std::vector<Value*> outs;
    for (Scalar to : all) outs.push_back(f.add_param("out", ptr_t(to), div16()));
    Value* offs = block_offsets(b, 128);
    Value* v = b.value(OpKind::Load, {at(b, x, offs)});
    for (size_t i = 0; i < all.size(); ++i)
      b.create(OpKind::Store, {at(b, outs[i], offs), b.cast(v, DType{all[i]})});
    auto c = compile_checked(f);
    if (tessel::ir::is_float(from)) {
      INFO(c.ptx);
      CHECK(c.ptx.find("cvt.rzi") != std::string::npos);  // float -> int truncates
    }
  }
}

TEST_CASE("pointer <-> integer casts and float min/max") {
  Function f("ptr_ops");
  Builder b(f);
  Value* x = f.add_param("x", ptr_t(Scalar::f32), div16());
  Value* out = f.add_param("out", ptr_t(Scalar::f32), div16());
  Value* offs = block_offsets(b, 128);
  Value* addr = b.cast(b.splat(x, {128}), DType{Scalar::i64});
  Value* back = b.cast(addr, DType{Scalar::f32, true});
  Value* p = b.value(OpKind::AddPtr, {back, offs});
  Value* v = b.value(OpKind::Load, {p});
  Value* w = b.value(OpKind::Max, {v, b.value(OpKind::Min, {v, b.splat(b.const_float(0.5, scalar_t(Scalar::f32)), {128})})});
  b.create(OpKind::Store, {at(b, out, offs), w});
  auto c = compile_checked(f);
  INFO(c.ptx);
  CHECK(c.ptx.find("max.NaN.f32") != std::string::npos);
  CHECK(c.ptx.find("min.NaN.f32") != std::string::npos);
}

TEST_CASE("rand and randn: Philox rounds use mul.hi.u32") {
  Function f("dropout");
  Builder b(f);
  Value* out = f.add_param("out", ptr_t(Scalar::f32), div16());
  Value* seed = f.add_param("seed", scalar_t(Scalar::i64));
  Value* offs = block_offsets(b, 256);
  Value* u = b.value(OpKind::Rand, {seed, offs});
  Value* g = b.value(OpKind::RandN, {seed, offs});
  b.create(OpKind::Store, {at(b, out, offs), b.value(OpKind::Add, {u, g})});
  auto c = compile_checked(f);
  INFO(c.ptx);
  CHECK(c.ptx.find("mul.hi.u32") != std::string::npos);
  // the round multiplier 0xD2511F53 appears as a signed 32-bit immediate
  CHECK(c.ptx.find("-766435501") != std::string::npos);
  CHECK(c.ptx.find("cos.approx.f32") != std::string::npos);
}

TEST_CASE("a for loop with a carried tile and a carried scalar") {
  auto f = loop_sum(512);
  auto c = compile_checked(*f);
  INFO(c.ptx);
  CHECK(c.ptx.find("bra") != std::string::npos);
  CHECK(c.ptx.find("ld.global.v4.f32") != std::string::npos);
}

TEST_CASE("2-D tiles: a[i] + b[j] over 64x64 loads each vector in its slice layout") {
  for (bool share : {false, true}) {
    CAPTURE(share);
    auto f = outer_sum(64, 64, share);
    auto c = compile_checked(*f);
    INFO(c.ptx);
    CHECK(count(c.ptx, "st.global.v4.f32") == 8);  // 32 elements per thread
    CHECK(c.ptx.find(".shared") == std::string::npos);  // recomputed aranges, no conversion
    CHECK(c.launch.shared_bytes == 0);
  }
  for (auto [m, n] : std::vector<std::pair<int64_t, int64_t>>{{16, 128}, {128, 8}, {1, 64}, {32, 1}, {2, 2}}) {
    CAPTURE(m);
    CAPTURE(n);
    compile_checked(*outer_sum(m, n, false));
  }
}

TEST_CASE("a loaded vector used along both dims goes through shared memory") {
  Function f("outer_product");
  Builder b(f);
  Value* a = f.add_param("a", ptr_t(Scalar::f32), div16());
  Value* out = f.add_param("out", ptr_t(Scalar::f32), div16());
  Value* offs = b.arange(0, 64);
  Value* v = b.value(OpKind::Load, {at(b, a, offs)});
  Value* col = b.broadcast(b.expand_dims(v, 1), {64, 64});
  Value* row = b.broadcast(b.expand_dims(v, 0), {64, 64});
  Value* ri = b.value(OpKind::Mul, {b.expand_dims(offs, 1), b.splat(b.const_int(64, scalar_t(Scalar::i32)), {64, 1})});
  Value* idx = b.value(OpKind::Add, {b.broadcast(ri, {64, 64}), b.broadcast(b.expand_dims(offs, 0), {64, 64})});
  b.create(OpKind::Store, {at(b, out, idx), b.value(OpKind::Mul, {col, row})});
  auto c = compile_checked(f);
  INFO(c.ptx);
  CHECK(c.ptx.find("bar.sync") != std::string::npos);
  CHECK(c.ptx.find(".shared") != std::string::npos);
  // Two conversions of 64 floats: two buffers, so the second needs no barrier before its
  // writes (one barrier each instead of two).
  CHECK(c.launch.shared_bytes == 2 * 64 * 4);
  CHECK(count(c.ptx, "bar.sync") == 2);
}

TEST_CASE("equal1 parameters are constant-folded; options are validated") {
  Function f("strided");
  Builder b(f);
  Value* x = f.add_param("x", ptr_t(Scalar::f32), div16());
  Value* stride = f.add_param("stride", scalar_t(Scalar::i32), ParamSpec{false, true});
  Value* offs = b.value(OpKind::Mul, {b.arange(0, 256), b.splat(stride, {256})});
  Value* p = at(b, x, offs);
  Value* v = b.value(OpKind::Load, {p});
  b.create(OpKind::Store, {p, b.value(OpKind::Add, {v, v})});
  auto c = compile_checked(f);
  INFO(c.ptx);
  CHECK(c.ptx.find("strided_w4_s1_param_1") != std::string::npos);  // still in the signature
  CHECK(c.ptx.find("ld.param.u32") == std::string::npos);           // never read
  CHECK(c.ptx.find("ld.global.v2.f32") != std::string::npos);       // stride 1: contiguous

  Options bad;
  bad.num_warps = 3;
  CHECK_THROWS_AS(compile(f, bad), tessel::CompileError);
  bad.num_warps = 64;
  CHECK_THROWS_AS(compile(f, bad), tessel::CompileError);
  Options old;
  old.target.ptx_version = 71;  // sm_90 needs 7.8
  CHECK_THROWS_AS(compile(f, old), tessel::CompileError);
}

TEST_CASE("tiles whose dims are not powers of two are the user's mistake") {
  Function f("odd");
  Builder b(f);
  Value* x = f.add_param("x", ptr_t(Scalar::f32), div16());
  b.loc = tessel::SrcLoc{"user.cpp", 42};
  Value* offs = b.arange(0, 48);
  b.create(OpKind::Store, {at(b, x, offs), b.cast(offs, DType{Scalar::f32})});
  try {
    compile(f, Options{});
    FAIL("expected a CompileError");
  } catch (const tessel::CompileError& e) {
    CHECK(e.line() == 42);
    CHECK(std::string(e.what()).find("i32[48]") != std::string::npos);
  }
}

TEST_CASE("compile time of a small kernel (LLVM initialised once per process)") {
  auto f = vector_add(1024, true);
  compile(*f, Options{});
  double best = 1e9;
  for (int i = 0; i < 5; ++i) {
    auto c = compile(*f, Options{});
    best = std::min(best, c.ms_to_llvm + c.ms_to_ptx);
    CHECK(c.ms_to_llvm >= 0);
    CHECK(c.ms_to_ptx > 0);
  }
  MESSAGE("vector add tile IR -> PTX, best of 5: " << best << " ms");
  CHECK(best < 100);  // ~3 ms on an idle core; loose for shared CI machines
}

TEST_CASE("float binary ops, fma and comparisons on f32, f16, bf16 and f64") {
  for (Scalar t : {Scalar::f32, Scalar::f16, Scalar::bf16, Scalar::f64}) {
    CAPTURE(static_cast<int>(t));
    Function f("float_ops");
    Builder b(f);
    Value* x = f.add_param("x", ptr_t(t), div16());
    Value* y = f.add_param("y", ptr_t(t), div16());
    Value* out = f.add_param("out", ptr_t(t), div16());
    Value* offs = block_offsets(b, 512);
    Value* a = b.value(OpKind::Load, {at(b, x, offs)});
    Value* c = b.value(OpKind::Load, {at(b, y, offs)});
    Value* acc = b.value(OpKind::Fma, {a, c, a});
    for (OpKind k : {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Rem, OpKind::Min, OpKind::Max})
      acc = b.value(OpKind::Add, {acc, b.value(k, {a, c})});
    Value* lt = b.value(OpKind::CmpLt, {a, c});
    Value* ne = b.value(OpKind::CmpNe, {a, acc});
    acc = b.value(OpKind::Select, {b.value(OpKind::And, {lt, ne}), acc, c});
    b.create(OpKind::Store, {at(b, out, offs), acc});
    auto r = compile_checked(f);
    INFO(r.ptx);
    if (t == Scalar::f32) {
      CHECK(r.ptx.find("div.rn.f32") != std::string::npos);
      CHECK(r.ptx.find("cvt.rzi.f32.f32") != std::string::npos);  // fmod: a - trunc(a / b) * b
      CHECK(r.ptx.find("fma.rn.f32") != std::string::npos);
    }
  }
}
