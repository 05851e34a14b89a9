// Loops whose step is known only at run time fail the launch through __assertfail (naming the loop's file:line; a bare trap in kernels that issue wgmma) when the step is <= 0; pipelined copies count trips as the interpreter does.
#include <doctest/doctest.h>

#include <string>

#include "check_ptx.hpp"
#include "kernels.hpp"
#include "tessel/ir/verify.hpp"

using namespace lowering_test;
using tessel::lowering::Compiled;
using tessel::lowering::Options;

namespace {

constexpr const char* kFile = "user/strided_sum.cpp";
constexpr uint32_t kLine = 4321;
constexpr const char* kMessage = "range(): the loop step must be positive";

// A PTX .b8 initialiser of `s` as LLVM prints it: "{117, 115, ...}" (the NUL left implicit).
std::string ptx_bytes(const std::string& s) {
  std::string out = "{";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(static_cast<unsigned char>(s[i]));
  return out + "}";
}

enum class StepKind { Param, Equal1Param, Constant };

// out[0] = sum of iv over range(0, n, step): one loop at kFile:kLine (optionally inside an outer
// loop over `reps` at kLine + 1, whose step is a parameter too), the iv of type `iv_t`.
std::unique_ptr<Function> strided_sum(StepKind kind, Scalar iv_t = Scalar::i32, bool nested = false) {
  auto f = std::make_unique<Function>("strided_sum");
  Builder b(*f);
  const Type t = scalar_t(iv_t);
  Value* out = f->add_param("out", ptr_t(iv_t), div16());
  Value* n = f->add_param("n", t);
  Value* step = kind == StepKind::Constant ? nullptr
                                           : f->add_param("step", t, ParamSpec{false, kind == StepKind::Equal1Param});
  if (!step) step = b.const_int(16, t);
  Value* zero = b.const_int(0, t);
  Op* outer = nullptr;
  if (nested) {
    Value* reps = f->add_param("reps", t);
    Value* outer_step = f->add_param("outer_step", t);
    b.loc = tessel::SrcLoc{kFile, kLine + 1};
    outer = &b.for_loop(b.const_int(0, t), reps, outer_step, {zero});
    b.set_block(&outer->body());
    zero = ForOp{*outer}.carried(0);
  }
  b.loc = tessel::SrcLoc{kFile, kLine};
  Op& loop = b.for_loop(b.const_int(0, t), n, step, {zero});
  ForOp lp{loop};
  b.set_block(&loop.body());
  b.create(OpKind::Yield, {b.value(OpKind::Add, {lp.carried(0), lp.induction_var()})});
  Value* result = loop.results[0];
  if (outer) {
    b.set_block(&outer->body());
    b.create(OpKind::Yield, {result});
    result = outer->results[0];
  }
  b.set_block(&f->body);
  b.loc = {};
  b.create(OpKind::Store, {out, result});
  tessel::ir::verify(*f);
  return f;
}

}  // namespace

TEST_CASE("a runtime loop step gets one device-side check: __assertfail with the loop's file:line, then trap") {
  for (Scalar iv_t : {Scalar::i32, Scalar::i64}) {
    CAPTURE(static_cast<int>(iv_t));
    auto f = strided_sum(StepKind::Param, iv_t);
    Compiled c = compile_checked(*f);  // both targets assemble (ptxas resolves the system call)
    // nvcc's assert: the PTX system call with (message, file, line, function, char size).
    CHECK(count(c.ptx, ".extern .func __assertfail") == 1);
    CHECK(count(c.ptx, "call.uni \n\t__assertfail,") == 1);
    CHECK(c.ptx.find(ptx_bytes(kMessage)) != std::string::npos);
    CHECK(c.ptx.find(ptx_bytes(kFile)) != std::string::npos);
    CHECK(c.ptx.find(ptx_bytes("strided_sum")) != std::string::npos);
    CHECK(c.ptx.find("st.param.b32 \t[param2+0], " + std::to_string(kLine) + ";") != std::string::npos);
    CHECK(c.ptx.find("st.param.b64 \t[param4+0], 1;") != std::string::npos);
    CHECK(c.ptx.find("trap;") != std::string::npos);
    // The check runs once per loop entry, before the loop: in the unoptimised IR the branch to
    // it precedes the loop header, and it tests step <= 0 (sle against 0).
    const std::string ll = tessel::lowering::lower_to_llvm_ir(*f, Options{});
    const size_t branch = ll.find("label %assert.fail");
    const size_t header = ll.find("loop.header:");
    REQUIRE(branch != std::string::npos);
    REQUIRE(header != std::string::npos);
    CHECK(branch < header);
    CHECK(ll.find(std::string("icmp sle ") + (iv_t == Scalar::i32 ? "i32" : "i64") + " %step, 0") != std::string::npos);
    CHECK(count(ll, "call void @__assertfail(") == 1);
  }
}

TEST_CASE("a constant step, or a step parameter specialised == 1, needs no check") {
  for (StepKind k : {StepKind::Constant, StepKind::Equal1Param}) {
    CAPTURE(static_cast<int>(k));
    Compiled c = compile_checked(*strided_sum(k));
    CHECK(c.ptx.find("__assertfail") == std::string::npos);
    CHECK(c.ptx.find("trap;") == std::string::npos);
  }
}

TEST_CASE("nested loops: each loop with a runtime step checks it at its own entry, naming its own line") {
  auto f = strided_sum(StepKind::Param, Scalar::i32, /*nested=*/true);
  Compiled c = compile_checked(*f);
  CHECK(count(c.ptx, "call.uni \n\t__assertfail,") == 2);
  CHECK(c.ptx.find("st.param.b32 \t[param2+0], " + std::to_string(kLine) + ";") != std::string::npos);
  CHECK(c.ptx.find("st.param.b32 \t[param2+0], " + std::to_string(kLine + 1) + ";") != std::string::npos);
}

namespace {

// acc = sum over k in range(lo, hi, step) of a_tile @ b_tile, the pointer tiles advanced by
// `a_step` / `b_step` elements each trip and the loads masked by `k < lo + 1` (only the first
// trip reads): a loop plan_pipeline accepts, with every bound a run-time value.
std::unique_ptr<Function> runtime_bounds_k_loop() {
  constexpr int64_t M = 64, N = 64, BK = 32;
  auto f = std::make_unique<Function>("k_loop_bounds");
  Builder b(*f);
  const Type i32 = scalar_t(Scalar::i32);
  Value* pa = f->add_param("a", ptr_t(Scalar::f16), div16());
  Value* pb = f->add_param("b", ptr_t(Scalar::f16), div16());
  Value* pc = f->add_param("c", ptr_t(Scalar::f32), div16());
  Value* lo = f->add_param("lo", i32);
  Value* hi = f->add_param("hi", i32);
  Value* step = f->add_param("step", i32);
  Value* a_step = f->add_param("a_step", i32, div16());
  Value* b_step = f->add_param("b_step", i32, div16());
  auto grid = [&](Value* rows, int64_t stride, Value* cols, int64_t r, int64_t c) {
    Value* ri = b.broadcast(b.value(OpKind::Mul, {b.expand_dims(rows, 1), b.const_int(stride, Type{DType{Scalar::i32}, {r, 1}})}), {r, c});
    return b.value(OpKind::Add, {ri, b.broadcast(b.expand_dims(cols, 0), {r, c})});
  };
  Value* rm = b.arange(0, M);
  Value* rn = b.arange(0, N);
  Value* rk = b.arange(0, BK);
  Value* first = b.value(OpKind::Add, {lo, b.const_int(1, i32)});
  Value* zero = b.const_float(0.0, Type{DType{Scalar::f32}, {M, N}});
  Op& loop = b.for_loop(lo, hi, step, {zero, at(b, pa, grid(rm, BK, rk, M, BK)), at(b, pb, grid(rk, N, rn, BK, N))});
  ForOp lp{loop};
  b.set_block(&loop.body());
  Value* read_a = b.value(OpKind::CmpLt, {b.splat(lp.induction_var(), {M, BK}), b.splat(first, {M, BK})});
  Value* read_b = b.value(OpKind::CmpLt, {b.splat(lp.induction_var(), {BK, N}), b.splat(first, {BK, N})});
  Value* at_ = b.value(OpKind::Load, {lp.carried(1), read_a, b.const_float(0.0, Type{DType{Scalar::f16}, {M, BK}})});
  Value* bt_ = b.value(OpKind::Load, {lp.carried(2), read_b, b.const_float(0.0, Type{DType{Scalar::f16}, {BK, N}})});
  Value* next = b.dot(at_, bt_, lp.carried(0));
  Value* a_next = b.value(OpKind::AddPtr, {lp.carried(1), b.splat(a_step, {M, BK})});
  Value* b_next = b.value(OpKind::AddPtr, {lp.carried(2), b.splat(b_step, {BK, N})});
  b.create(OpKind::Yield, {next, a_next, b_next});
  b.set_block(&f->body);
  b.create(OpKind::Store, {at(b, pc, grid(rm, N, rn, M, N)), loop.results[0]});
  tessel::ir::verify(*f);
  return f;
}

}  // namespace

TEST_CASE("pipelined K loop: the copies of trip j run only when the loop runs trip j (exact trip count)") {
  // The prologue issues trips 1 .. S - 2 (trip 0 needs no count) and each trip the one S - 1
  // ahead. Whether that trip runs is `k * step < hi - iv` in unsigned arithmetic with the
  // product's overflow checked (not `iv + k * step < hi`, which wraps past INT_MAX to a negative
  // iv that passes the test and copies a trip the loop never runs): one umul.with.overflow per
  // such trip. The step check comes before the prologue's copies.
  auto f = runtime_bounds_k_loop();
  for (const char* arch : {"sm_80", "sm_90a"})
    for (int stages : {2, 3, 4}) {
      CAPTURE(arch);
      CAPTURE(stages);
      Options o;
      o.num_warps = 4;
      o.num_stages = stages;
      o.target = tessel::lowering::Target::parse(arch);
      const std::string ll = tessel::lowering::lower_to_llvm_ir(*f, o);
      CHECK(count(ll, "call { i32, i1 } @llvm.umul.with.overflow.i32(i32 %step, i32 ") == stages - 1);
      const size_t check = ll.find("label %assert.fail");
      const size_t first_copy = ll.find("cp.async.cg.shared.global");
      REQUIRE(check != std::string::npos);
      REQUIRE(first_copy != std::string::npos);
      CHECK(check < first_copy);
      Compiled c = tessel::lowering::compile(*f, o);
      CHECK(c.launch.shared_bytes >= stages * (64 * 32 + 32 * 64) * 2);  // pipelined: S stage buffers
      // On wgmma (sm_90a) the check traps without calling __assertfail: ptxas would serialise
      // every wgmma of a function with a call (assemble() checks its log for that).
      const bool wgmma = c.ptx.find("wgmma.mma_async") != std::string::npos;
      CHECK(wgmma == (std::string(arch) == "sm_90a"));
      CHECK(count(c.ptx, "call.uni \n\t__assertfail,") == (wgmma ? 0 : 1));
      CHECK(count(c.ptx, "trap;") == 1);
      assemble(c.ptx, arch);
    }
}
