// f64 math is computed in f64 on the GPU, never silently in f32 (the interpreter computes f64
// exactly): every math op of f64 lowers without an f32 step, erf through libdevice's __nv_erf,
// and f64 erf without libdevice is a CompileError at the user's line.
#include <doctest/doctest.h>

#include "../common/scoped_fs_env.hpp"
#include "check_ptx.hpp"
#include "kernels.hpp"
#include "tessel/ir/accessors.hpp"
#include "tessel/ir/error.hpp"

using namespace lowering_test;
using tessel::lowering::compile;
using tessel::lowering::Options;

namespace {

const std::vector<OpKind> kF64MathOps{OpKind::Exp,  OpKind::Exp2, OpKind::Log,     OpKind::Log2, OpKind::Sqrt,
                                      OpKind::Rsqrt, OpKind::Sin,  OpKind::Cos,     OpKind::Tanh, OpKind::Sigmoid,
                                      OpKind::Erf,  OpKind::Floor, OpKind::Ceil};

// What an f32 detour would leave in the PTX: a conversion to f32 or an f32 approximation.
void check_no_f32(const std::string& ptx) {
  CHECK(ptx.find("cvt.rn.f32.f64") == std::string::npos);
  CHECK(ptx.find("approx.f32") == std::string::npos);
  CHECK(ptx.find("approx.ftz.f32") == std::string::npos);
}

// libdevice's __nv_erf: an f64 polynomial (its exp(-x^2) takes 2^n from an exact f32 ex2 of an
// integer n, so an f32 conversion is part of it); the old f32 detour was fast_math.hpp's erf,
// an f32 polynomial (fma.rn.f32) between a cvt to f32 and back.
void check_libdevice_erf(const std::string& ptx) {
  CHECK(count(ptx, "fma.rn.f64") >= 10);
  CHECK(ptx.find("fma.rn.f32") == std::string::npos);
  CHECK(ptx.find("call") == std::string::npos);  // linked and inlined
}

// unary_chain with the math op at a known source line (file "my_kernel.cpp", line 42).
std::unique_ptr<Function> one_op_at_line(OpKind k, Scalar t, bool precise = false) {
  auto f = std::make_unique<Function>("f64_kernel");
  Builder b(*f);
  Value* x = f->add_param("x", ptr_t(t), div16());
  Value* out = f->add_param("out", ptr_t(t), div16());
  Value* offs = block_offsets(b, 128);
  Value* v = b.value(OpKind::Load, {at(b, x, offs)});
  b.loc = tessel::SrcLoc{f->intern("my_kernel.cpp"), 42};
  Value* r = b.value(k, {v});
  if (precise) r->def->set_attr(tessel::ir::kPreciseAttr, int64_t{1});
  b.loc = {};
  b.create(OpKind::Store, {at(b, out, offs), r});
  return f;
}

}  // namespace

TEST_CASE("f64: each math op lowers in f64, with no f32 step") {
  for (OpKind k : kF64MathOps) {
    CAPTURE(tessel::ir::name_of(k));
    auto c = compile_checked(*unary_chain({k}, Scalar::f64));
    INFO(c.ptx);
    if (k == OpKind::Erf) check_libdevice_erf(c.ptx);
    else check_no_f32(c.ptx);
    CHECK(c.ptx.find(".f64") != std::string::npos);
  }
}

TEST_CASE("f64 erf is libdevice's __nv_erf (linked and inlined), precise or not") {
  for (bool precise : {false, true}) {
    CAPTURE(precise);
    auto c = compile_checked(*one_op_at_line(OpKind::Erf, Scalar::f64, precise));
    INFO(c.ptx);
    check_libdevice_erf(c.ptx);
  }
  // The check tells the two apart: f32 erf is the fast_math.hpp polynomial.
  auto f32 = compile_checked(*one_op_at_line(OpKind::Erf, Scalar::f32));
  CHECK(f32.ptx.find("fma.rn.f32") != std::string::npos);
}

TEST_CASE("f64 erf without libdevice: a CompileError at the op's line naming the op, the dtype and the way out") {
  tessel_test::EnvVar env("TESSEL_LIBDEVICE", std::string("/nonexistent/libdevice.10.bc"));
  auto f = one_op_at_line(OpKind::Erf, Scalar::f64);
  try {
    compile(*f, Options{});
    FAIL("f64 erf compiled without libdevice");
  } catch (const tessel::CompileError& e) {
    CHECK(e.file() == "my_kernel.cpp");
    CHECK(e.line() == 42);
    CHECK(e.message() ==
          "kernel 'f64_kernel': erf of f64 needs NVIDIA's libdevice on the GPU (tessel has no f64 erf of its own), "
          "not found at /nonexistent/libdevice.10.bc (set TESSEL_LIBDEVICE to libdevice.10.bc, or CUDA_HOME); "
          "or cast to f32 first");
    CHECK(std::string(e.what()).rfind("my_kernel.cpp:42: error: kernel 'f64_kernel': erf of f64", 0) == 0);
  }
}

TEST_CASE("without libdevice, the other f64 ops and f32 erf still lower (they do not need it)") {
  tessel_test::EnvVar env("TESSEL_LIBDEVICE", std::string("/nonexistent/libdevice.10.bc"));
  for (OpKind k : kF64MathOps) {
    if (k == OpKind::Erf) continue;
    CAPTURE(tessel::ir::name_of(k));
    // precise = 1 on an f64 op keeps tessel's own f64 algorithm: no libdevice either.
    const bool precise = tessel::ir::has_precise_form(k);
    auto c = compile(*one_op_at_line(k, Scalar::f64, precise), Options{});
    check_no_f32(c.ptx);
  }
  for (Scalar t : {Scalar::f32, Scalar::f16, Scalar::bf16}) {
    auto c = compile(*one_op_at_line(OpKind::Erf, t), Options{});
    CHECK(c.ptx.find("ex2.approx") != std::string::npos);  // fast_math.hpp's erf
  }
}
