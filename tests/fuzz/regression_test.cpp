// Regressions of what the fuzzer found, checked on the CPU: the lowering's PTX for them.
// (Their GPU behaviour is checked by tests/interp/fuzz_found_test.cpp in test_interp_gpu.)
#include <doctest/doctest.h>

#include <string>

#include "../common/ptxas_gate.hpp"
#include "tessel/ir/builder.hpp"
#include "tessel/ir/verify.hpp"
#include "tessel/jit/cubin.hpp"
#include "tessel/lowering/compile.hpp"

using namespace tessel::ir;

namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("16-bit neg, abs, min and max come out as 32-bit operations in the PTX (ptxas mistranslated them)") {
  // out[i] = i32(-x) + i32(|x|) + i32(min(x, 0)) + i32(max(x, y)) for i16 x, y and the same
  // through i8 and u16 (min/max of i1): fuzz seeds 1101, 2206, 2298, 9562, 9566 (ptxas turned
  // -(-32768) widened into +32768) and 4567 (min.s16 with 0, compared with 0, inverted).
  Function f("narrow_ops");
  Value* x = f.add_param("x", Type{DType{Scalar::i16, true}, {}});
  Value* y = f.add_param("y", Type{DType{Scalar::i8, true}, {}});
  Value* out = f.add_param("out", Type{DType{Scalar::i32, true}, {}});
  Value* flags = f.add_param("flags", Type{DType{Scalar::i1, true}, {}});
  Builder b(f);
  const Shape sh{128};
  Value* offs = b.arange(0, 128);
  auto load = [&](Value* p) { return b.value(OpKind::Load, {b.value(OpKind::AddPtr, {b.splat(p, sh), offs})}); };
  Value* v = load(x);
  Value* w = b.cast(load(y), DType{Scalar::i16});
  Value* zero = b.const_int(0, Type{DType{Scalar::i16}, sh});
  auto wide = [&](Value* t) { return b.cast(t, DType{Scalar::i32}); };
  Value* sum = b.value(OpKind::Add, {wide(b.value(OpKind::Neg, {v})), wide(b.value(OpKind::Abs, {v}))});
  sum = b.value(OpKind::Add, {sum, wide(b.value(OpKind::Min, {v, zero}))});
  sum = b.value(OpKind::Add, {sum, wide(b.value(OpKind::Max, {v, w}))});
  b.create(OpKind::Store, {b.value(OpKind::AddPtr, {b.splat(out, sh), offs}), sum});
  Value* c = load(flags);
  b.create(OpKind::Store, {b.value(OpKind::AddPtr, {b.splat(flags, sh), offs}), b.value(OpKind::Max, {c, b.value(OpKind::Not, {c})})});
  verify(f);
  const std::string ptxas = tessel_test::ptxas_or_skip("assembling the widened 16-bit operations");
  for (const char* arch : {"sm_80", "sm_90", "sm_90a"}) {
    CAPTURE(arch);
    tessel::lowering::Options o;
    o.num_warps = 1;
    o.target = tessel::lowering::Target::parse(arch);
    const std::string ptx = tessel::lowering::compile(f, o).ptx;
    for (const char* op : {"neg.s16", "abs.s16", "min.s16", "max.s16", "min.u16", "max.u16"}) {
      CAPTURE(op);
      CHECK(count(ptx, op) == 0);
    }
    CHECK(count(ptx, "neg.s32 %tessel_a") > 0);
    CHECK(count(ptx, "abs.s32 %tessel_a") > 0);
    CHECK(count(ptx, "min.s32 %tessel_a") + count(ptx, "max.s32 %tessel_a") > 0);
    if (!ptxas.empty()) CHECK_NOTHROW(tessel::jit::ptxas_cubin(ptx, arch));
  }
}

TEST_CASE("i32 abs comes out as a compare and a select in the PTX (ptxas took abs.s32 for non-negative)") {
  // out[i] = |x[i]| % y[i]: fuzz seed 27245 (rem(abs(INT_MIN), 57) came out 41, not -41).
  Function f("abs_rem");
  Value* x = f.add_param("x", Type{DType{Scalar::i32, true}, {}});
  Value* y = f.add_param("y", Type{DType{Scalar::i32, true}, {}});
  Value* out = f.add_param("out", Type{DType{Scalar::i32, true}, {}});
  Builder b(f);
  const Shape sh{64};
  Value* offs = b.arange(0, 64);
  auto load = [&](Value* p) { return b.value(OpKind::Load, {b.value(OpKind::AddPtr, {b.splat(p, sh), offs})}); };
  Value* r = b.value(OpKind::Rem, {b.value(OpKind::Abs, {load(x)}), load(y)});
  b.create(OpKind::Store, {b.value(OpKind::AddPtr, {b.splat(out, sh), offs}), r});
  verify(f);
  const std::string ptxas = tessel_test::ptxas_or_skip("assembling the rewritten i32 abs");
  for (const char* arch : {"sm_80", "sm_90", "sm_90a"}) {
    CAPTURE(arch);
    tessel::lowering::Options o;
    o.num_warps = 2;
    o.target = tessel::lowering::Target::parse(arch);
    const std::string ptx = tessel::lowering::compile(f, o).ptx;
    CHECK(count(ptx, "\tabs.s32") == 0);
    CHECK(count(ptx, "setp.lt.s32 %tessel_p") > 0);
    if (!ptxas.empty()) CHECK_NOTHROW(tessel::jit::ptxas_cubin(ptx, arch));
  }
}
