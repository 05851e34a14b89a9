// Golden PTX features of loads and stores: vector widths, predication, replication.
#include <doctest/doctest.h>

#include "check_ptx.hpp"
#include "kernels.hpp"

using namespace lowering_test;
using tessel::lowering::compile;
using tessel::lowering::Options;

TEST_CASE("vector add, aligned pointers and n % 16 == 0: 16-byte predicated accesses") {
  auto f = vector_add(1024, true);
  auto c = compile_checked(*f);
  INFO(c.ptx);
  CHECK(c.kernel_name == "add_kernel");
  // The entry is named for the variant (no meta-parameters here: warps and stages only).
  CHECK(c.launch.symbol == "add_kernel_w4_s1");
  CHECK(c.ptx.find(".entry add_kernel_w4_s1(") != std::string::npos);
  CHECK(c.ptx.find(".maxntid 128, 1, 1") != std::string::npos);
  // 1024 elements / 128 threads = 8 per thread = two v4 per operand
  CHECK(count(c.ptx, "ld.global.v4.b32") == 4);
  CHECK(count(c.ptx, "st.global.v4.b32") == 2);
  CHECK(count(c.ptx, "@%p") >= 6);
  CHECK(c.ptx.find("ld.global.b32") == std::string::npos);
  CHECK(c.launch.shared_bytes == 0);
  CHECK(c.llvm_ir.find("!\"kernel\"") != std::string::npos);
}

TEST_CASE("vector add without n % 16: per-element predicates, no vectors") {
  auto f = vector_add(1024, false);
  auto c = compile_checked(*f);
  INFO(c.ptx);
  CHECK(c.ptx.find("ld.global.v4") == std::string::npos);
  CHECK(count(c.ptx, "ld.global.b32") == 16);
  CHECK(count(c.ptx, "st.global.b32") == 8);
}

TEST_CASE("unmasked aligned accesses are plain LLVM vectors: ld.global.v4.f32") {
  auto f = vector_add(512, true, /*masked=*/false);
  auto c = compile_checked(*f);
  INFO(c.ptx);
  CHECK(count(c.ptx, "ld.global.v4.f32") == 2);
  CHECK(count(c.ptx, "st.global.v4.f32") == 1);
  CHECK(c.ptx.find("@%p") == std::string::npos);
}

TEST_CASE("f16 and f64 tiles pick 16-byte vectors of their own width") {
  auto h = vector_add(1024, true, true, Scalar::f16);
  auto ch = compile_checked(*h);
  INFO(ch.ptx);
  CHECK(count(ch.ptx, "ld.global.v4.b32") == 2);  // 8 halves per thread in one v4.b32
  CHECK(count(ch.ptx, "st.global.v4.b32") == 1);
  // f16 + f16 computed in f32 and rounded once equals a correctly rounded f16 add; LLVM
  // narrows it to add.rn.f16
  CHECK(ch.ptx.find("add.rn.f16") != std::string::npos);

  auto d = vector_add(256, true, true, Scalar::f64);
  auto cd = compile_checked(*d);
  INFO(cd.ptx);
  CHECK(count(cd.ptx, "ld.global.v2.b64") == 2);
  CHECK(cd.ptx.find("add.rn.f64") != std::string::npos);
}

TEST_CASE("tiles smaller than the CTA: replicated elements are stored by their owner only") {
  auto f = vector_add(64, true);
  auto c = compile_checked(*f);
  INFO(c.ptx);
  // 64 elements over 128 threads: spt 1, two threads per element; the store is
  // predicated on both the mask and ownership (tid < 64)
  CHECK(c.ptx.find("st.global.b32") != std::string::npos);
  CHECK(c.ptx.find("setp.lt.u32") != std::string::npos);
}

TEST_CASE("odd-sized and tiny tiles lower and assemble") {
  for (int64_t block : {1, 2, 16, 32, 128, 4096}) {
    CAPTURE(block);
    for (int warps : {1, 2, 8}) {
      auto f = vector_add(block, block % 2 == 0);
      Options o;
      o.num_warps = warps;
      auto c = compile_checked(*f, o);
      CHECK(c.ptx.find(".maxntid " + std::to_string(32 * warps) + ", 1, 1") != std::string::npos);
    }
  }
}

TEST_CASE("scalar loads and stores: one uniform load, one writer thread") {
  Function f("scalar_copy");
  Builder b(f);
  Value* x = f.add_param("x", ptr_t(Scalar::i64));
  Value* out = f.add_param("out", ptr_t(Scalar::i64));
  Value* v = b.value(OpKind::Load, {x});
  Value* w = b.value(OpKind::Mul, {v, b.const_int(3, scalar_t(Scalar::i64))});
  Value* p = b.value(OpKind::AddPtr, {out, b.program_id(0)});
  b.create(OpKind::Store, {p, w});
  auto c = compile_checked(f);
  INFO(c.ptx);
  CHECK(count(c.ptx, "ld.global.u64") + count(c.ptx, "ld.global.b64") == 1);
  CHECK(c.ptx.find("%tid.x") != std::string::npos);
}

TEST_CASE("bool tiles travel as bytes; loads with `other` keep it in masked-off lanes") {
  Function f("bool_copy");
  Builder b(f);
  Value* x = f.add_param("x", ptr_t(Scalar::i1), div16());
  Value* y = f.add_param("y", ptr_t(Scalar::f32), div16());
  Value* out = f.add_param("out", ptr_t(Scalar::f32), div16());
  Value* n = f.add_param("n", scalar_t(Scalar::i32), div16());
  Value* offs = block_offsets(b, 512);
  Value* mask = b.value(OpKind::CmpLt, {offs, b.splat(n, {512})});
  Value* flag = b.value(OpKind::Load, {at(b, x, offs), mask, b.splat(b.const_int(1, scalar_t(Scalar::i1)), {512})});
  Value* yv = b.value(OpKind::Load, {at(b, y, offs), mask, b.splat(b.const_float(-7.5, scalar_t(Scalar::f32)), {512})});
  Value* r = b.value(OpKind::Select, {flag, yv, b.value(OpKind::Neg, {yv})});
  b.create(OpKind::Store, {at(b, out, offs), r, mask});
  auto c = compile_checked(f);
  INFO(c.llvm_ir);
  // other = -7.5 (0xC0F00000) is tied into the predicated load's outputs
  CHECK(c.llvm_ir.find("i32 -1058013184") != std::string::npos);
  CHECK(c.ptx.find("ld.global.b32") != std::string::npos);  // 4 bools in one word
}

TEST_CASE("f16 load, convert to f32, compute, convert back, store") {
  Function f("half_scale");
  Builder b(f);
  Value* x = f.add_param("x", ptr_t(Scalar::f16), div16());
  Value* out = f.add_param("out", ptr_t(Scalar::f16), div16());
  Value* scale = f.add_param("scale", scalar_t(Scalar::f32));
  Value* offs = block_offsets(b, 2048);
  Value* v = b.cast(b.value(OpKind::Load, {at(b, x, offs)}), DType{Scalar::f32});
  Value* w = b.value(OpKind::Mul, {v, b.splat(scale, {2048})});
  b.create(OpKind::Store, {at(b, out, offs), b.cast(w, DType{Scalar::f16})});
  auto c = compile_checked(f);
  INFO(c.ptx);
  CHECK(c.ptx.find("cvt.f32.f16") != std::string::npos);
  CHECK(c.ptx.find("cvt.rn.f16.f32") != std::string::npos);
  CHECK(count(c.ptx, "ld.global.v4.b32") == 2);  // 16 halves per thread
  CHECK(count(c.ptx, "st.global.v4.b32") == 2);
}
