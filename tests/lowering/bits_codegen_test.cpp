// Codegen of unsigned kinds, fp8 casts, bitcast and unpack: the PTX instructions they lower to.
#include <doctest/doctest.h>

#include "check_ptx.hpp"
#include "kernels.hpp"
#include "tessel/ir/error.hpp"

using namespace lowering_test;
using tessel::lowering::compile;
using tessel::lowering::Options;
using tessel::lowering::Target;

namespace {

// out[offs] = f(in[offs]) over a block of 256 elements (both pointers 16-byte aligned).
std::unique_ptr<Function> map_kernel(Scalar in_t, Scalar out_t, const std::function<Value*(Builder&, Value*)>& body) {
  auto f = std::make_unique<Function>("map");
  Value* in = f->add_param("in", ptr_t(in_t), div16());
  Value* out = f->add_param("out", ptr_t(out_t), div16());
  Builder b(*f);
  Value* offs = block_offsets(b, 256);
  Value* x = b.value(OpKind::Load, {at(b, in, offs)});
  b.create(OpKind::Store, {at(b, out, offs), body(b, x)});
  return f;
}

tessel::lowering::Compiled compile_for(const Function& f, const char* arch, int ptx = 0) {
  Options o;
  o.target = Target::parse(arch);
  o.target.ptx_version = ptx;
  auto c = compile(f, o);
  assemble(c.ptx, arch);
  return c;
}

// A [rows, 64] tile of u32 words unpacked along dim 0 (int4, eight per word) to `to`, stored.
std::unique_ptr<Function> unpack_kernel(Scalar to, int64_t rows = 16, int64_t zero = 0, bool scaled = false) {
  auto f = std::make_unique<Function>("unpack_int4");
  Value* in = f->add_param("w", ptr_t(Scalar::u32), div16());
  Value* out = f->add_param("out", ptr_t(to), div16());
  Builder b(*f);
  auto offsets = [&](int64_t r, int64_t c) {
    Value* ri = b.broadcast(b.expand_dims(b.arange(0, r), 1), {r, c});
    Value* ci = b.broadcast(b.expand_dims(b.arange(0, c), 0), {r, c});
    return b.value(OpKind::Add, {b.value(OpKind::Mul, {ri, b.splat(b.const_int(c, scalar_t(Scalar::i32)), {r, c})}), ci});
  };
  Value* w = b.value(OpKind::Load, {at(b, in, offsets(rows, 64))});
  std::vector<Attr> attrs{{"axis", int64_t{0}}, {"bits", int64_t{4}}};
  if (zero != 0) attrs.push_back({"zero", zero});
  Value* u = b.value(OpKind::Unpack, {w}, {Type{DType{to}, {rows * 8, 64}}}, attrs);
  if (scaled) {  // times a row of 64 scales, then plus the same
    Value* s = b.value(OpKind::Load, {at(b, out, b.arange(0, 64))});
    Value* row = b.broadcast(b.expand_dims(s, 0), {rows * 8, 64});
    u = b.value(OpKind::Add, {b.value(OpKind::Mul, {u, row}), row});
  }
  b.create(OpKind::Store, {at(b, out, offsets(rows * 8, 64)), u});
  return f;
}

}  // namespace

TEST_CASE("unsigned kinds lower to the unsigned PTX instructions") {
  for (OpKind k : {OpKind::Div, OpKind::Rem, OpKind::Shr, OpKind::Max, OpKind::CmpLt}) {
    CAPTURE(static_cast<int>(k));
    const Scalar out = k == OpKind::CmpLt ? Scalar::i1 : Scalar::u32;
    auto f = map_kernel(Scalar::u32, out, [&](Builder& b, Value* x) {
      Value* y = b.value(OpKind::Add, {x, b.splat(b.const_int(3, scalar_t(Scalar::u32)), {256})});
      return b.value(k, {x, y});
    });
    auto c = compile_checked(*f);
    INFO(c.ptx);
    const char* want = k == OpKind::Div ? "div.u32" : k == OpKind::Rem ? "rem.u32" : k == OpKind::Shr ? "shr.u32"
                       : k == OpKind::Max ? "max.u32" : "setp.lt.u32";
    CHECK(c.ptx.find(want) != std::string::npos);
  }
  auto to_f = map_kernel(Scalar::u32, Scalar::f32, [](Builder& b, Value* x) { return b.cast(x, DType{Scalar::f32}); });
  CHECK(compile_checked(*to_f).ptx.find("cvt.rn.f32.u32") != std::string::npos);
  auto from_f = map_kernel(Scalar::f32, Scalar::u32, [](Builder& b, Value* x) { return b.cast(x, DType{Scalar::u32}); });
  CHECK(compile_checked(*from_f).ptx.find(".u32.f32") != std::string::npos);
}

TEST_CASE("int4 unpack to f16 and bf16: two fields per lop3 and one f16x2 subtraction, no conversions") {
  for (Scalar to : {Scalar::f16, Scalar::bf16}) {
    CAPTURE(static_cast<int>(to));
    auto f = unpack_kernel(to);
    auto c = compile_for(*f, "sm_90");
    INFO(c.ptx);
    // 16 x 64 words over 128 threads: 8 words and 64 results per thread.
    // Each pair's mask and magic number in one lop3 (an and + or of two constants would be two
    // LOP3s in ptxas).
    CHECK(count(c.ptx, "lop3.b32") == 32);
    CHECK(c.ptx.find("cvt.rn.f16.u32") == std::string::npos);
    CHECK(c.ptx.find("cvt.rn.bf16.u32") == std::string::npos);
    CHECK(c.ptx.find("cvt.rn.f32.u32") == std::string::npos);
    const std::string t = to == Scalar::f16 ? "f16x2" : "bf16x2";
    CHECK(count(c.ptx, "sub.rn." + t) + count(c.ptx, "add.rn." + t) + count(c.ptx, "fma.rn." + t) >= 32);
    CHECK(c.ptx.find("st.shared") == std::string::npos);  // fields stay in their thread
  }
  // A zero point costs nothing: it joins the subtraction of the magic number: 1024 + 8 in both
  // halves (+-1032 = 0x6408 / 0xE408 as f16, the PTX writes the pair as a decimal b32).
  auto z = compile_for(*unpack_kernel(Scalar::f16, 16, 8), "sm_90");
  auto plain = compile_for(*unpack_kernel(Scalar::f16), "sm_90");
  CHECK(count(z.ptx, "f16x2") == count(plain.ptx, "f16x2"));
  CHECK((z.ptx.find(" 1678271496;") != std::string::npos || z.ptx.find(" -469179384;") != std::string::npos));
  CHECK(plain.ptx.find(" -469179384;") == std::string::npos);
  // Arithmetic on the unpacked pairs stays two lanes per instruction, f16 and bf16 (sm_90).
  for (Scalar to : {Scalar::f16, Scalar::bf16}) {
    CAPTURE(static_cast<int>(to));
    auto sc = compile_for(*unpack_kernel(to, 16, 8, true), "sm_90");
    INFO(sc.ptx);
    const std::string t = to == Scalar::f16 ? "f16" : "bf16";
    CHECK(count(sc.ptx, "mul.rn." + t + "x2") + count(sc.ptx, "fma.rn." + t + "x2") >= 32);
    CHECK(count(sc.ptx, "mul.rn." + t + " ") + count(sc.ptx, "add.rn." + t + " ") == 0);
  }
  // sm_80 has no bf16x2 add/mul: the backend computes the pairs' lanes in f32 and rounds each
  // back (cvt.rn.bf16.f32); the PTX assembles (compile_for runs ptxas where it is found).
  auto bf80 = compile_for(*unpack_kernel(Scalar::bf16, 16, 8, true), "sm_80");
  CHECK(count(bf80.ptx, "mul.rn.bf16x2") + count(bf80.ptx, "add.rn.bf16x2") == 0);
  CHECK(count(bf80.ptx, "mul.rn.f32") >= 64);
  CHECK(count(bf80.ptx, "cvt.rn.bf16") >= 64);
  // The generic path (to i32) shifts and masks each field.
  auto c = compile_for(*unpack_kernel(Scalar::i32), "sm_80");
  CHECK(c.ptx.find("st.shared") == std::string::npos);
  CHECK(count(c.ptx, "bfe.u32") + count(c.ptx, "and.b32") + count(c.ptx, "shr.u32") >= 32);
}

TEST_CASE("fp8 casts: cvt pairs on sm_89 and sm_90, a CompileError naming the line before sm_89") {
  for (Scalar e : {Scalar::f8e4m3, Scalar::f8e5m2}) {
    CAPTURE(static_cast<int>(e));
    const std::string ptx_t = e == Scalar::f8e4m3 ? "e4m3x2" : "e5m2x2";
    auto enc = map_kernel(Scalar::f32, e, [&](Builder& b, Value* x) { return b.cast(x, DType{e}); });
    auto dec = map_kernel(e, Scalar::f32, [&](Builder& b, Value* x) { return b.cast(x, DType{Scalar::f32}); });
    for (const char* arch : {"sm_89", "sm_90"}) {
      const int ptx = arch[4] == '9' ? 81 : 0;  // sm_89 has the cvt from PTX ISA 8.1
      auto ce = compile_for(*enc, arch, ptx);
      auto cd = compile_for(*dec, arch, ptx);
      // 256 elements over 128 threads: 2 per thread, one pair each.
      CHECK(count(ce.ptx, "cvt.rn.satfinite." + ptx_t + ".f32") == 1);
      CHECK(count(cd.ptx, "cvt.rn.f16x2." + ptx_t) == 1);
    }
    Options o;
    o.target = Target::parse("sm_80");
    CHECK_THROWS_WITH_AS(compile(*enc, o), doctest::Contains("sm_89"), tessel::CompileError);
    o.target = Target::parse("sm_89");  // PTX ISA 8.0 by default: too old for sm_89's fp8 cvt
    CHECK_THROWS_WITH_AS(compile(*dec, o), doctest::Contains("8.1"), tessel::CompileError);
  }
  // A bitcast between u8 and fp8 is no instruction at all; a masked fp8 load's zero needs no cvt.
  auto bc = map_kernel(Scalar::u8, Scalar::f8e4m3, [](Builder& b, Value* x) {
    return b.value(OpKind::Bitcast, {x}, {x->type.with_dtype(DType{Scalar::f8e4m3})});
  });
  CHECK(compile_checked(*bc).ptx.find("cvt.rn") == std::string::npos);
}

namespace {

// c[16, N] = a[16, K] x unpack<T>(w[K / 8, N] words of `word` type, axis 0, 32 / 8 bits) with
// no loop: the register-B form of a dot (mma_b_register_layout).
std::unique_ptr<Function> register_b_kernel(Scalar t, Scalar word, int64_t K, int64_t N, int64_t zero,
                                            int64_t M = 16) {
  auto f = std::make_unique<Function>("register_b");
  Value* pa = f->add_param("a", ptr_t(t), div16());
  Value* pw = f->add_param("w", ptr_t(word), div16());
  Value* pc = f->add_param("c", ptr_t(Scalar::f32), div16());
  Builder b(*f);
  const Type i32 = scalar_t(Scalar::i32);
  auto offsets = [&](int64_t r, int64_t c) {
    Value* ri = b.broadcast(b.expand_dims(b.arange(0, r), 1), {r, c});
    Value* ci = b.broadcast(b.expand_dims(b.arange(0, c), 0), {r, c});
    return b.value(OpKind::Add, {b.value(OpKind::Mul, {ri, b.splat(b.const_int(c, i32), {r, c})}), ci});
  };
  Value* a = b.value(OpKind::Load, {at(b, pa, offsets(M, K))});
  Value* w = b.value(OpKind::Load, {at(b, pw, offsets(K / 8, N))});
  const int bits = static_cast<int>(tessel::ir::bit_width(word)) / 8;
  std::vector<Attr> attrs{{"axis", int64_t{0}}, {"bits", int64_t{bits}}};
  if (zero != 0) attrs.push_back({"zero", zero});
  Value* u = b.value(OpKind::Unpack, {w}, {Type{DType{t}, {K, N}}}, attrs);
  Value* acc = b.dot(a, u, b.const_float(0.0, Type{DType{Scalar::f32}, {M, N}}), false);
  b.create(OpKind::Store, {at(b, pc, offsets(M, N)), acc});
  return f;
}

}  // namespace

TEST_CASE("register B: an unpacked B is the mma's fragments, f16 and bf16, sm_80 and sm_90a, any warps") {
  struct Case {
    Scalar t, word;
    int64_t K, N, zero;
    int warps;
    const char* arch;
  };
  for (const Case& c : {Case{Scalar::f16, Scalar::u32, 64, 64, 8, 4, "sm_90a"},
                        Case{Scalar::bf16, Scalar::u32, 64, 64, 8, 4, "sm_80"},
                        Case{Scalar::f16, Scalar::u32, 128, 128, 0, 8, "sm_80"},
                        Case{Scalar::bf16, Scalar::u32, 32, 32, 3, 2, "sm_90a"},
                        Case{Scalar::f16, Scalar::u16, 32, 64, 1, 4, "sm_80"},  // 2-bit fields: shift and convert
                        Case{Scalar::f16, Scalar::u32, 16, 8, 8, 1, "sm_80"}}) {
    CAPTURE(static_cast<int>(c.t));
    CAPTURE(c.K);
    CAPTURE(c.N);
    CAPTURE(c.warps);
    CAPTURE(c.arch);
    auto f = register_b_kernel(c.t, c.word, c.K, c.N, c.zero);
    Options o;
    o.target = Target::parse(c.arch);
    o.num_warps = c.warps;
    auto k = compile(*f, o);
    INFO(k.plan);
    CHECK(count(k.plan, "mma reads it from registers") == 1);
    // Only A is staged (16 rows of K elements); every warp reads it with ldmatrix, B with none.
    CHECK(k.plan.find("staging " + std::to_string(16 * c.K * 2) + " B") != std::string::npos);
    CHECK(k.ptx.find(".trans") == std::string::npos);
    const int64_t n_tiles = c.N / (8 * c.warps);
    const char* mma = c.t == Scalar::f16 ? "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
                                         : "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32";
    CHECK(count(k.ptx, mma) == c.K / 16 * n_tiles);
    CHECK(count(k.ptx, "ldmatrix") == c.K / 16);
    // No integer-to-float conversion on the magic-number path (u32 words, 4-bit fields).
    if (c.word == Scalar::u32) CHECK(k.ptx.find("cvt.rn.f16.u32") == std::string::npos);
    assemble(k.ptx, c.arch);
  }
  // Warps along M (a 64-row A over 4 warps) keep B staged: two warps would need the same B.
  auto tall = register_b_kernel(Scalar::f16, Scalar::u32, 64, 64, 8, 64);
  Options o;
  o.target = Target::parse("sm_80");
  o.num_warps = 4;
  auto k = compile(*tall, o);
  INFO(k.plan);
  CHECK(count(k.plan, "mma reads it from registers") == 0);
  CHECK(k.ptx.find("ldmatrix.sync.aligned.m8n8.x4.trans") != std::string::npos);
  assemble(k.ptx, "sm_80");
}
