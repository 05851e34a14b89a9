// num_stages software pipelining of the K loop: S stage buffers, cp.async groups issued S - 1
// trips ahead with wait_group S - 2, and single-stage fallback for loops that do not match.
#include <doctest/doctest.h>

#include <optional>

#include <fmt/format.h>

#include "check_ptx.hpp"
#include "kernels.hpp"
#include "tessel/ir/error.hpp"
#include "tessel/ir/verify.hpp"

using namespace lowering_test;
using tessel::lowering::Compiled;
using tessel::lowering::Options;

namespace {

enum class Step { Invariant, DependsOnIv, DependsOnCarried };

struct PipeSpec {
  int64_t m = 128, n = 128, bk = 32;
  Scalar in = Scalar::f16;
  Step b_step = Step::Invariant;
  bool store_in_loop = false;  // a store inside the body: loads may not move across trips
  bool masked = true;          // K-edge masks from k_left = K - k, as the matmul sample
  bool outer_loop = false;     // the K loop inside a loop over `reps` (the accumulator carried through both)
  bool step_from_atomic = false;  // b's step adds the result of an atomic_add made before the loop
  bool b_kmajor = false;  // b column-major: b[k, n] at k + n * ldb (K^T read from row-major K)
  std::optional<Scalar> in_b;  // b's element type when it differs from a's (e4m3 x e5m2)
  bool ptrs_from_iv = false;   // the loads' pointers computed from the induction variable (k + rk)
  bool lda_unaligned = false;  // lda not known divisible by 16 (a launch with an odd row stride)
  bool k_unaligned = false;    // K not known divisible by 16: the K-edge masks vary within 16 bytes
};

// acc = sum over k in range(0, K, BK) of a[:, k:k+BK] @ b[k:k+BK, :], the pointer tiles
// loop-carried and advanced by BK columns of a / BK rows of b, loads masked at the K edge.
std::unique_ptr<Function> k_loop_kernel(const PipeSpec& s) {
  auto f = std::make_unique<Function>("k_loop");
  Builder b(*f);
  const Type i32 = scalar_t(Scalar::i32);
  Value* pa = f->add_param("a", ptr_t(s.in), div16());
  const Scalar in_b = s.in_b.value_or(s.in);
  Value* pb = f->add_param("b", ptr_t(in_b), div16());
  Value* pc = f->add_param("c", ptr_t(Scalar::f32), div16());
  // Divisible by 16 as the aligned matmul launch's: K-edge masks constant over 16.
  Value* K = f->add_param("K", i32, s.k_unaligned ? tessel::ir::ParamSpec{} : div16());
  Value* lda = f->add_param("lda", i32, s.lda_unaligned ? tessel::ir::ParamSpec{} : div16());
  Value* ldb = f->add_param("ldb", i32, div16());
  Value* ldc = f->add_param("ldc", i32, div16());
  auto grid = [&](Value* rows, Value* stride, Value* cols, int64_t r, int64_t c) {
    Value* ri = b.broadcast(b.value(OpKind::Mul, {b.expand_dims(rows, 1), b.splat(stride, {r, 1})}), {r, c});
    return b.value(OpKind::Add, {ri, b.broadcast(b.expand_dims(cols, 0), {r, c})});
  };
  Value* rm = b.arange(0, s.m);
  Value* rn = b.arange(0, s.n);
  Value* rk = b.arange(0, s.bk);
  Value* zero = b.const_float(0.0, Type{DType{Scalar::f32}, {s.m, s.n}});
  Value* bump = nullptr;
  if (s.step_from_atomic)
    bump = b.value(OpKind::AtomicAdd, {f->add_param("ctr", ptr_t(Scalar::i32), div16()), b.const_int(1, i32)});
  Op* outer = nullptr;
  if (s.outer_loop) {
    Value* reps = f->add_param("reps", i32);
    outer = &b.for_loop(b.const_int(0, i32), reps, b.const_int(1, i32), {zero});
    b.set_block(&outer->body());
    zero = ForOp{*outer}.carried(0);
  }
  Value* b_tile = s.b_kmajor ? b.value(OpKind::Add, {b.broadcast(b.expand_dims(rk, 1), {s.bk, s.n}),
                                                     b.value(OpKind::Mul, {b.broadcast(b.expand_dims(rn, 0), {s.bk, s.n}),
                                                                           b.splat(ldb, {s.bk, s.n})})})
                             : grid(rk, ldb, rn, s.bk, s.n);
  Op& loop = b.for_loop(b.const_int(0, i32), K, b.const_int(s.bk, i32),
                        {zero, at(b, pa, grid(rm, lda, rk, s.m, s.bk)), at(b, pb, b_tile)});
  ForOp lp{loop};
  b.set_block(&loop.body());
  Value* at_ = nullptr;
  Value* bt_ = nullptr;
  if (s.masked) {
    Value* k_left = b.value(OpKind::Sub, {K, lp.induction_var()});
    Value* col_ok = b.value(OpKind::CmpLt, {b.broadcast(b.expand_dims(rk, 0), {s.m, s.bk}), b.splat(k_left, {s.m, s.bk})});
    Value* row_ok = b.value(OpKind::CmpLt, {b.broadcast(b.expand_dims(rk, 1), {s.bk, s.n}), b.splat(k_left, {s.bk, s.n})});
    at_ = b.value(OpKind::Load, {lp.carried(1), col_ok, b.const_float(0.0, Type{DType{s.in}, {s.m, s.bk}})});
    bt_ = b.value(OpKind::Load, {lp.carried(2), row_ok, b.const_float(0.0, Type{DType{in_b}, {s.bk, s.n}})});
  } else {
    at_ = b.value(OpKind::Load, {lp.carried(1)});
    bt_ = b.value(OpKind::Load, {lp.carried(2)});
  }
  if (s.ptrs_from_iv) {  // the same tiles, addressed from k instead of the carried pointers
    Value* kk = b.value(OpKind::Add, {b.splat(lp.induction_var(), {s.bk}), rk});
    Value* a_at = at(b, pa, grid(rm, lda, kk, s.m, s.bk));
    Value* b_at = at(b, pb, grid(kk, ldb, rn, s.bk, s.n));
    Value* k_left = b.value(OpKind::Sub, {K, lp.induction_var()});
    Value* col_ok = b.value(OpKind::CmpLt, {b.broadcast(b.expand_dims(rk, 0), {s.m, s.bk}), b.splat(k_left, {s.m, s.bk})});
    Value* row_ok = b.value(OpKind::CmpLt, {b.broadcast(b.expand_dims(rk, 1), {s.bk, s.n}), b.splat(k_left, {s.bk, s.n})});
    at_ = b.value(OpKind::Load, {a_at, col_ok, b.const_float(0.0, Type{DType{s.in}, {s.m, s.bk}})});
    bt_ = b.value(OpKind::Load, {b_at, row_ok, b.const_float(0.0, Type{DType{in_b}, {s.bk, s.n}})});
  }
  Value* next = b.dot(at_, bt_, lp.carried(0));
  if (s.store_in_loop) b.create(OpKind::Store, {at(b, pc, grid(rm, ldc, rn, s.m, s.n)), next});
  Value* a_next = b.value(OpKind::AddPtr, {lp.carried(1), b.splat(b.const_int(s.bk, i32), {s.m, s.bk})});
  Value* b_off = s.b_kmajor ? b.const_int(s.bk, i32) : b.value(OpKind::Mul, {ldb, b.const_int(s.bk, i32)});
  if (s.b_step == Step::DependsOnIv) b_off = b.value(OpKind::Add, {b_off, lp.induction_var()});
  if (bump) b_off = b.value(OpKind::Add, {b_off, b.value(OpKind::Mul, {bump, b.const_int(16, i32)})});  // keeps 16-byte steps
  Value* b_step = b.splat(b_off, {s.bk, s.n});
  if (s.b_step == Step::DependsOnCarried)  // the step reads the pointer's own tile: not `carried + invariant`
    b_step = b.value(OpKind::Add, {b_step, b.cast(b.value(OpKind::Load, {lp.carried(2)}), DType{Scalar::i32})});
  Value* b_next = b.value(OpKind::AddPtr, {lp.carried(2), b_step});
  b.create(OpKind::Yield, {next, a_next, b_next});
  Value* result = loop.results[0];
  if (outer) {
    b.set_block(&outer->body());
    b.create(OpKind::Yield, {result});
    result = outer->results[0];
  }
  b.set_block(&f->body);
  b.create(OpKind::Store, {at(b, pc, grid(rm, ldc, rn, s.m, s.n)), result});
  tessel::ir::verify(*f);
  return f;
}

Options opts(int warps, int stages, const char* arch = "sm_90") {
  Options o;
  o.num_warps = warps;
  o.num_stages = stages;
  o.target = tessel::lowering::Target::parse(arch);
  return o;
}

bool has(const std::string& ptx, const std::string& s) { return ptx.find(s) != std::string::npos; }

}  // namespace

TEST_CASE("num_stages 2..4: S stage buffers, wait_group S - 2, copies issued ahead, no spills") {
  for (bool masked : {true, false})
    for (int warps : {4, 8})
      for (int stages : {2, 3, 4}) {
        CAPTURE(masked);
        CAPTURE(warps);
        CAPTURE(stages);
        PipeSpec s;
        s.masked = masked;
        auto f = k_loop_kernel(s);
        Options o = opts(warps, stages);
        Compiled c = compile_checked(*f, o);
        const int stage_bytes = (128 * 32 + 32 * 128) * 2;
        CHECK(c.launch.shared_bytes == stages * stage_bytes);
        // a + rm * lda + rk and b + rk * ldb + rn are affine: one pointer per thread each, the
        // other copies' addresses one mad.wide per runtime stride (lda, ldb) away.
        CHECK(count(c.plan, "(one pointer per thread)") == 2);
        CHECK(has(c.ptx, "mad.wide.s32"));
        CHECK(has(c.ptx, "cp.async.wait_group " + std::to_string(stages - 2) + ";"));
        // The exit waits for every group; with S > 2 that is the only wait_group 0.
        CHECK(has(c.ptx, "cp.async.wait_group 0;"));
        if (stages > 2) CHECK(count(c.ptx, "cp.async.wait_group 0;") == 1);
        // One stage of copies: 128x32 + 32x128 halves in 16-byte copies over the CTA; the
        // prologue issues S - 1 stages, the body one (more if LLVM unrolls it).
        const int per_stage = stage_bytes / 16 / (32 * warps);
        const int copies = count(c.ptx, "cp.async.cg.shared.global");
        CHECK(copies % per_stage == 0);
        CHECK(copies >= stages * per_stage);
        CHECK(count(c.ptx, "cp.async.commit_group") >= stages);
        // Operands reach shared memory by cp.async only (the epilogue's accumulator pieces
        // are 8-byte st.shared at most).
        CHECK(!has(c.ptx, "st.shared.v4"));
        CHECK(!has(c.ptx, "ld.global"));
        // Single-stage has two barriers per trip; pipelined only the one after the wait.
        Compiled one = tessel::lowering::compile(*f, opts(warps, 1));
        CHECK(count(c.ptx, "bar.sync") < count(one.ptx, "bar.sync"));
      }
}

TEST_CASE("num_stages 1 and loops that do not match stay single-stage") {
  auto single = [](const Function& f, int warps) { return tessel::lowering::compile(f, opts(warps, 1)); };
  PipeSpec plain;
  auto f = k_loop_kernel(plain);
  // num_stages = 1 is the default path.
  CHECK(tessel::lowering::compile(*f, opts(4, 1)).ptx == tessel::lowering::compile(*f, Options{}).ptx);
  Compiled one = tessel::lowering::compile(*f, opts(4, 1));
  CHECK(one.launch.shared_bytes == (128 * 32 + 32 * 128) * 2);
  CHECK(has(one.ptx, "cp.async.wait_group 0;"));
  CHECK(!has(one.ptx, "cp.async.wait_group 1;"));

  PipeSpec iv_step;
  iv_step.b_step = Step::DependsOnIv;
  PipeSpec carried_step;
  carried_step.b_step = Step::DependsOnCarried;
  PipeSpec store;
  store.store_in_loop = true;
  PipeSpec tf32;  // f32 operands are rounded to tf32 through registers: no cp.async to pipeline
  tf32.in = Scalar::f32;
  for (const PipeSpec* s : {&iv_step, &store, &tf32}) {
    auto g = k_loop_kernel(*s);
    const std::string which = s == &iv_step ? "iv_step" : s == &store ? "store" : "tf32";
    CAPTURE(which);
    INFO(tessel::lowering::plan_text(*g, opts(4, 3)));
    for (int warps : {4, 8}) {
      CAPTURE(warps);
      const Compiled base = single(*g, warps);
      for (int stages : {2, 3}) {
        Compiled c = tessel::lowering::compile(*g, opts(warps, stages));
        // The same code; only the entry's name tells the stages apart (lowering::entry_symbol).
        CHECK(renamed(c.ptx, c.launch.symbol, base.launch.symbol) == base.ptx);
        CHECK(!has(c.ptx, "cp.async.wait_group 1;"));
      }
    }
  }
  // The fallback kernels still assemble.
  compile_checked(*k_loop_kernel(iv_step), opts(4, 3));
  // b's step reads b's own pointers: b cannot be issued ahead, a can. The loop pipelines a's
  // copies and loads b in its trip, staged from registers (the dot's own barrier covers it).
  auto g = k_loop_kernel(carried_step);
  const std::string plan = tessel::lowering::plan_text(*g, opts(4, 3));
  INFO(plan);
  CHECK(has(plan, "pipelined, 3 stages of 8192 B"));
  CHECK(has(plan, "operand b: %43 staged from registers every trip"));
  Compiled c = tessel::lowering::compile(*g, opts(4, 3));  // (spills a few bytes: not a tuned shape)
  CHECK(has(c.ptx, "cp.async.wait_group 1;"));
  CHECK(has(c.ptx, "ld.global"));  // b, in its trip
}

TEST_CASE("pointers computed from the induction variable pipeline like carried ones (implicit GEMM addressing)") {
  for (const char* arch : {"sm_90", "sm_90a"})
    for (int stages : {2, 3}) {
      CAPTURE(arch);
      CAPTURE(stages);
      PipeSpec s;
      s.ptrs_from_iv = true;
      auto f = k_loop_kernel(s);
      const std::string plan = tessel::lowering::plan_text(*f, opts(4, stages, arch));
      INFO(plan);
      CHECK(has(plan, fmt::format("pipelined, {} stages", stages)));
      CHECK(count(plan, "from pointers computed from the induction variable") == 2);
      CHECK(count(plan, "(one pointer per thread)") == 0);
      Compiled c = tessel::lowering::compile(*f, opts(4, stages, arch));
      CHECK(has(c.ptx, "cp.async.wait_group " + std::to_string(stages - 2) + ";"));
      CHECK(has(c.ptx, "cp.async.cg.shared.global"));
      CHECK(!has(c.ptx, "ld.global"));  // every tile copied global -> shared
      assemble(c.ptx, arch);
    }
  // Under warp specialisation the producer warps compute the pointers from their trip's index
  // (the body ops they come from are theirs) and copy by cp.async into the ring.
  PipeSpec s;
  s.ptrs_from_iv = true;
  Options o = opts(4, 3, "sm_90a");
  o.warp_specialize = true;
  auto f = k_loop_kernel(s);
  const std::string plan = tessel::lowering::plan_text(*f, o);
  INFO(plan);
  CHECK(has(plan, "ring of 3 stages"));
  CHECK(has(plan, "producers copy by cp.async"));
  CHECK(count(plan, "from pointers computed from the induction variable") == 2);
  Compiled c = tessel::lowering::compile(*f, o);
  CHECK(has(c.ptx, "cp.async.mbarrier.arrive.noinc.shared"));
  CHECK(has(c.ptx, "cp.async.cg.shared.global"));
  CHECK(!has(c.ptx, "ld.global"));
  assemble(c.ptx, "sm_90a");
  // With TMA asked for, such operands still go by cp.async (a tensor map needs a carried tile).
  o.tma = true;
  CHECK(has(tessel::lowering::plan_text(*f, o), "producers copy by cp.async"));
  // Programs sharing a CTA (one shared ring) take carried pointer tiles only: it says so.
  o.tma = false;
  o.programs_per_cta = 2;
  CHECK_THROWS_WITH_AS(tessel::lowering::compile(*f, o), doctest::Contains("use programs_per_cta 1"),
                       tessel::CompileError);
}

TEST_CASE("num_stages out of range is a CompileError; too many stages for shared memory too") {
  auto f = k_loop_kernel(PipeSpec{});
  CHECK_THROWS_AS(tessel::lowering::compile(*f, opts(4, 0)), tessel::CompileError);
  CHECK_THROWS_AS(tessel::lowering::compile(*f, opts(4, 9)), tessel::CompileError);
  // 8 stages of 16 KiB fit sm_90's 227 KiB; 128x128x64 stages (32 KiB) x 8 do not.
  CHECK(tessel::lowering::compile(*f, opts(4, 8)).launch.shared_bytes == 8 * 16384);
  PipeSpec big;
  big.bk = 64;
  CHECK_THROWS_AS(tessel::lowering::compile(*k_loop_kernel(big), opts(4, 8)), tessel::CompileError);
}

TEST_CASE("a pipelined K loop inside another loop: a barrier before the next outer trip's prologue") {
  PipeSpec s;
  s.outer_loop = true;
  auto f = k_loop_kernel(s);
  for (int stages : {2, 3}) {
    CAPTURE(stages);
    Compiled c = compile_checked(*f, opts(4, stages));
    CHECK(c.launch.shared_bytes == stages * (128 * 32 + 32 * 128) * 2);
    CHECK(has(c.ptx, "cp.async.wait_group " + std::to_string(stages - 2) + ";"));
    // The inner body's barrier (after its wait) and one at the outer latch: the next outer
    // trip's prologue overwrites stage buffers the last inner trips read. The f32 epilogue
    // then converts for 16-byte stores through the freed stages in column chunks (32 columns
    // of 128 + 16 bytes a row at 2 stages, 64 at 3): a barrier after each chunk's writes and
    // one between chunks.
    CHECK(count(c.ptx, "bar.sync") >= 2);
    const std::string ll = tessel::lowering::lower_to_llvm_ir(*f, opts(4, stages));
    const int chunks = stages == 2 ? 4 : 2;
    CHECK(count(ll, "call void @llvm.nvvm.barrier0()") == 2 + 2 * chunks - 1);
  }
}

TEST_CASE("sm_90a: f16/bf16 K loops run on wgmma from the swizzled stagings, single-stage and pipelined") {
  for (Scalar in : {Scalar::f16, Scalar::bf16})
    for (int64_t bk : {32, 64})
      for (int warps : {4, 8})
        for (int stages : {1, 3, 4}) {
          CAPTURE(bk);
          CAPTURE(warps);
          CAPTURE(stages);
          PipeSpec s;
          s.in = in;
          s.bk = bk;
          auto f = k_loop_kernel(s);
          Compiled c = tessel::lowering::compile(*f, opts(warps, stages, "sm_90a"));
          CHECK(has(c.ptx, ".target sm_90a"));
          const std::string t = in == Scalar::bf16 ? "bf16" : "f16";
          const int per_trip = static_cast<int>(bk / 16) * (128 / (64 * (warps / 4)));
          const int wg = count(c.ptx, "wgmma.mma_async.sync.aligned.m64n128k16.f32." + t + "." + t);
          CHECK(wg >= per_trip);
          CHECK(wg % per_trip == 0);
          CHECK(!has(c.ptx, "ldmatrix"));
          CHECK(!has(c.ptx, "mma.sync"));
          CHECK(has(c.ptx, "fence.proxy.async.shared::cta;"));
          // Descriptors are packed from 32-bit words, one per wgmma operand (no 64-bit adds),
          // and shared-memory addresses are 32-bit registers (cp.async's destination too).
          CHECK(count(c.ptx, "mov.b64 da, {") == wg);
          CHECK(count(c.ptx, "mov.b64 db, {") == wg / (128 / (64 * (warps / 4))));
          CHECK(!has(c.ptx, "cp.async.cg.shared.global [%rd"));
          if (stages > 1) CHECK(has(c.ptx, "cp.async.cg.shared.global [%r"));
          if (stages == 1) {
            CHECK(count(c.ptx, "wgmma.commit_group.sync.aligned;") == count(c.ptx, "wgmma.wait_group.sync.aligned 0;"));
          } else {
            // The group stays in flight into the next trip; the exit waits for the last one. The
            // copies still run S - 1 trips ahead (S - 2 groups pending at the wait): they follow
            // the trip's wait_group 1 and, with two warpgroups, a barrier past both waits.
            CHECK(has(c.ptx, "wgmma.wait_group.sync.aligned 1;"));
            CHECK(count(c.ptx, "wgmma.wait_group.sync.aligned 0;") == 1);
            CHECK(has(c.ptx, "cp.async.wait_group " + std::to_string(stages - 2) + ";"));
            const size_t wait = c.ptx.find("wgmma.wait_group.sync.aligned 1;");
            const size_t copy = c.ptx.find("cp.async.cg.shared.global", wait);
            const size_t bar = c.ptx.find("bar.sync", wait);
            REQUIRE(copy != std::string::npos);
            CHECK((bar < copy) == (warps == 8));
          }
          CHECK(has(c.ptx, ".extern .shared .align 1024"));
          if (stages > 1) CHECK(c.launch.shared_bytes == stages * (128 * bk + bk * 128) * 2);
          assemble(c.ptx, "sm_90a");
          // The same kernel for sm_90 stays on mma.sync.
          CHECK(has(tessel::lowering::compile(*f, opts(warps, stages, "sm_90")).ptx, "mma.sync"));
        }
}

TEST_CASE("programs_per_cta = 2: two programs per CTA with their own barriers and shared memory; wgmma K loops take turns") {
  PipeSpec s;
  s.outer_loop = true;  // as a persistent kernel: the K loop runs once per outer trip
  auto f = k_loop_kernel(s);
  const int64_t stage = (128 * 32 + 32 * 128) * 2;
  for (int stages : {2, 3}) {
    CAPTURE(stages);
    Options o = opts(4, stages, "sm_90a");
    o.programs_per_cta = 2;
    Compiled c = tessel::lowering::compile(*f, o);
    CHECK(c.launch.programs_per_cta == 2);
    CHECK(has(c.ptx, ".maxntid 256, 1, 1"));
    // Each program's stages, then per program an 8-byte turn barrier and an 8-byte retired one.
    CHECK(c.launch.shared_bytes == 2 * stages * stage + 32);
    // The programs' barriers are named ones of 128 threads, never the CTA-wide bar.sync 0
    // (which only the set-up of the turn barriers uses).
    CHECK(count(c.ptx, "bar.sync \t0;") == 1);
    CHECK(count(c.ptx, ", 128;") >= 2);
    CHECK(count(c.ptx, "mbarrier.init.shared.b64") == 2);  // each program's thread 0 sets up its own
    CHECK(count(c.ptx, "mbarrier.try_wait.parity.shared::cta.b64") == 1);
    CHECK(count(c.ptx, "mbarrier.arrive.shared.b64") == 1);
    // A program that has finished arrives on its retired barrier, which the other's waits also
    // test (mbarriers, not a release/acquire flag, which racecheck reports as a hazard); these
    // turns are a schedule only, so a wait also gives up after 2^20 polls.
    CHECK(count(c.ptx, "mbarrier.arrive.release.cta.shared::cta.b64") == 1);
    CHECK(count(c.ptx, "mbarrier.test_wait.parity.acquire.cta.shared::cta.b64") == 1);
    CHECK(!has(c.ptx, "st.release"));
    CHECK(!has(c.ptx, "ld.acquire"));
    CHECK(has(c.ptx, "1048576"));
    CHECK(has(c.ptx, "wgmma.mma_async"));
    // The wait comes after the prologue's copies and before the loop's first wgmma; the
    // hand-over comes once the last trip's group is issued, before the exit waits for it (the
    // next program's first group queues behind it).
    const size_t wait = c.ptx.find("mbarrier.try_wait"), arrive = c.ptx.find("mbarrier.arrive.shared");
    CHECK(c.ptx.find("cp.async.commit_group") < wait);
    CHECK(arrive < c.ptx.find("wgmma.wait_group.sync.aligned 0;"));
    assemble(c.ptx, "sm_90a");
    // Without wgmma (sm_90: mma.sync) the programs still share the CTA, without turns.
    Options o90 = opts(4, stages, "sm_90");
    o90.programs_per_cta = 2;
    Compiled c90 = tessel::lowering::compile(*f, o90);
    CHECK(!has(c90.ptx, "mbarrier"));
    CHECK(!has(c90.ptx, "bar.sync \t0;"));
    CHECK(c90.launch.shared_bytes == 2 * tessel::lowering::compile(*f, opts(4, stages, "sm_90")).launch.shared_bytes);
  }
  // One program per CTA: nothing of the above.
  Compiled one = tessel::lowering::compile(*f, opts(4, 3, "sm_90a"));
  CHECK(!has(one.ptx, "mbarrier"));
  CHECK(has(one.ptx, ".maxntid 128, 1, 1"));
}

TEST_CASE("programs_per_cta: 1 or 2, and at most 32 warps per CTA, else a CompileError") {
  auto f = k_loop_kernel(PipeSpec{});
  for (auto [per_cta, warps] : {std::pair{3, 4}, std::pair{0, 4}, std::pair{2, 32}}) {
    CAPTURE(per_cta);
    Options o = opts(warps, 2, "sm_90a");
    o.programs_per_cta = per_cta;
    CHECK_THROWS_AS(tessel::lowering::compile(*f, o), tessel::CompileError);
  }
  // Two programs of 3 stages of 128x128x128 f16 need 2 x 3 x 64 KiB: over the 227 KiB limit.
  PipeSpec big;
  big.bk = 128;
  Options o = opts(4, 3, "sm_90a");
  o.programs_per_cta = 2;
  try {
    tessel::lowering::compile(*k_loop_kernel(big), o);
    FAIL("expected a CompileError");
  } catch (const tessel::CompileError& e) {
    CHECK(std::string(e.what()).find("of 2 programs") != std::string::npos);
  }
}

TEST_CASE("warp_specialize: producer warps fill a ring of stages; the programs wait, compute and release") {
  PipeSpec s;
  s.outer_loop = true;  // as a persistent kernel: the ring's trips continue across outer trips
  auto f = k_loop_kernel(s);
  const int64_t stage = (128 * 32 + 32 * 128) * 2;
  for (int per_cta : {1, 2}) {
    for (int stages : {2, 3}) {
      CAPTURE(per_cta);
      CAPTURE(stages);
      Options o = opts(4, stages, "sm_90a");
      o.programs_per_cta = per_cta;
      o.warp_specialize = true;
      Compiled c = tessel::lowering::compile(*f, o);
      CHECK(c.launch.producer_warps);
      // The programs' warps, then one producer warpgroup (4 / per_cta warps per program).
      CHECK(c.launch.threads == 128 * per_cta + 128);
      CHECK(has(c.ptx, per_cta == 1 ? ".maxntid 256, 1, 1" : ".maxntid 384, 1, 1"));
      // One ring of S stages per program, then full[.] and empty[.] for each stage; two
      // programs share one ring of 2 S stages, followed by the two roles' trip counts and then
      // the turn words (turn barrier and retired barrier per role and program).
      const int S = per_cta * stages;
      const int64_t ring = S * stage + 16 * S;
      CHECK(c.launch.shared_bytes == (per_cta == 1 ? ring : ring + 16 + 2 * 32));
      CHECK(count(c.ptx, "mbarrier.init.shared.b64") == 2 * S + (per_cta == 2 ? 4 : 0));
      // The only CTA-wide barrier is the one after the mbarriers' set-up; the consumers
      // never wait for cp.async groups, the producer never commits one.
      CHECK(count(c.ptx, "bar.sync \t0;") == 1);
      CHECK(!has(c.ptx, "cp.async.wait_group"));
      CHECK(!has(c.ptx, "cp.async.commit_group"));
      CHECK(count(c.ptx, "cp.async.mbarrier.arrive.noinc.shared.b64") == 1);
      // The consumer: wait full[s], fence, wgmma, release the previous trip's stage (in the
      // loop) and the last one (after the exit's wait for every group).
      const size_t wait = c.ptx.find("mbarrier.try_wait.parity"), fence = c.ptx.find("fence.proxy.async", wait);
      CHECK(wait < fence);
      CHECK(fence < c.ptx.find("wgmma.mma_async", fence));
      // Each consumer warp releases a stage once (an elected lane), in the loop and after it.
      CHECK(count(c.ptx, "elect.sync") == 2);
      CHECK(count(c.ptx, "@p mbarrier.arrive.shared::cta.b64") == 2);
      CHECK(count(c.ptx, "mbarrier.arrive.shared.b64") == (per_cta == 2 ? 2 : 0));  // the turns
      if (per_cta == 2) {
        // Both roles take turns at the shared ring (waits that never give up: the order of the
        // runs is what keeps the ring's phases apart) and hand the next run's first trip over
        // between two barriers of the role's own threads (128 consumers, 64 producers).
        CHECK(count(c.ptx, "mbarrier.test_wait.parity.acquire.cta.shared::cta.b64") == 2);
        CHECK(count(c.ptx, "mbarrier.arrive.release.cta.shared::cta.b64") == 2);
        CHECK(!has(c.ptx, "ld.acquire"));
        CHECK(!has(c.ptx, "1048576"));
        CHECK(count(c.ptx, "barrier.sync \t%r") >= 4);
        CHECK(has(c.ptx, ", 64;"));
        CHECK(count(c.ptx, ", 128;") >= 2);
      }
      assemble(c.ptx, "sm_90a");
    }
  }
  // With tma, loads whose mask leaves a dimension unbounded (here: the rows) keep cp.async:
  // a tensor map needs the tensor's extent.
  Options t = opts(4, 3, "sm_90a");
  t.warp_specialize = true;
  t.tma = true;
  PipeSpec masked;
  masked.masked = true;
  Compiled cp = tessel::lowering::compile(*k_loop_kernel(masked), t);
  CHECK(cp.launch.tensor_maps.empty());
  CHECK(count(cp.ptx, "cp.async.bulk.tensor") == 0);
  CHECK(count(cp.ptx, "cp.async.mbarrier.arrive.noinc.shared.b64") == 1);
  // Eight warps per program (two consumer warpgroups and the producers: 384 threads).
  Options o = opts(8, 4, "sm_90a");
  o.warp_specialize = true;
  Compiled c = tessel::lowering::compile(*k_loop_kernel(PipeSpec{}), o);
  CHECK(has(c.ptx, ".maxntid 384, 1, 1"));
  CHECK(has(c.ptx, "wgmma.mma_async"));
  assemble(c.ptx, "sm_90a");
}

TEST_CASE("warp_specialize: a CompileError without a wgmma K loop to feed, or with options it cannot serve") {
  auto f = k_loop_kernel(PipeSpec{});
  auto fails = [](const tessel::ir::Function& fn, const Options& o, const char* what) {
    try {
      tessel::lowering::compile(fn, o);
      FAIL("expected a CompileError");
    } catch (const tessel::CompileError& e) {
      CHECK_MESSAGE(std::string(e.what()).find(what) != std::string::npos, std::string(e.what()));
    }
  };
  Options o = opts(4, 3, "sm_90a");
  o.warp_specialize = true;
  Options sm90 = o, one_stage = o, two_warps = o, too_many = o;
  sm90.target = tessel::lowering::Target::parse("sm_90");
  fails(*f, sm90, "sm_90a");
  one_stage.num_stages = 1;
  fails(*f, one_stage, "num_stages >= 2");
  two_warps.num_warps = 2;
  fails(*f, two_warps, "num_warps 4 or 8");
  too_many.num_warps = 8;
  too_many.programs_per_cta = 2;
  fails(*f, too_many, "num_warps * programs_per_cta <= 8");
  // A loop that does not pipeline (a store in its body) leaves the producer nothing to do.
  PipeSpec stores;
  stores.store_in_loop = true;
  fails(*k_loop_kernel(stores), o, "needs a K loop that pipelines onto wgmma");
  fails(*k_loop_kernel(stores), o, "(the loop here: the body has a store (loads cannot be issued trips ahead");
  // A row stride the launch did not find divisible by 16: A's copies would be narrower than 16
  // bytes, and the error names the load, its operand and the argument; B is copied.
  PipeSpec odd_lda;
  odd_lda.lda_unaligned = true;
  fails(*k_loop_kernel(odd_lda), o, "needs a K loop that pipelines onto wgmma");
  fails(*k_loop_kernel(odd_lda), o,
        "(A of the dot at line 0): its pointers are proven aligned to 2 bytes only, not the 16 a copy needs: at "
        "this launch lda is not divisible by 16");
  try {
    tessel::lowering::compile(*k_loop_kernel(odd_lda), o);
  } catch (const tessel::CompileError& e) {
    CHECK(std::string(e.what()).find("(B of the dot") == std::string::npos);
  }
  PipeSpec odd_k;  // the pointers are aligned, the K-edge masks are not uniform over 16 bytes
  odd_k.k_unaligned = true;
  fails(*k_loop_kernel(odd_k), o, "(A of the dot at line 0): its mask is not proven uniform over the 16-byte runs");
  // The producer would have to repeat an atomic to know its pointers: refused, naming the op.
  PipeSpec atomic;
  atomic.step_from_atomic = true;
  auto fa = k_loop_kernel(atomic);
  tessel::lowering::compile(*fa, opts(4, 3, "sm_90a"));  // fine without producers
  fails(*fa, o, "depend on the result of this atomic_add");
}

TEST_CASE("a column-major b (K^T idiom): dim-0 layout, 16-byte copies into a [N][K] staging read K-major") {
  for (const char* arch : {"sm_80", "sm_90a"})
    for (int stages : {1, 3}) {
      CAPTURE(arch);
      CAPTURE(stages);
      PipeSpec s;
      s.b_kmajor = true;
      auto f = k_loop_kernel(s);
      Options o = opts(4, stages, arch);
      const std::string plan = tessel::lowering::plan_text(*f, o);
      INFO(plan);
      CHECK(has(plan, "(b staged [N][K])"));
      CHECK(has(plan, "order=[0,1]}, copied into a dot's staging"));
      Compiled c = tessel::lowering::compile(*f, o);
      // Every operand byte moves by cp.async: no element-by-element global loads of b.
      CHECK(!has(c.ptx, "ld.global"));
      const int per_stage = (128 * 32 + 32 * 128) * 2 / 16 / (32 * 4);
      CHECK(count(c.ptx, "cp.async.cg.shared.global") == per_stage * stages);
      if (std::string(arch) == "sm_90a") {
        CHECK(count(c.ptx, ", da, db, p, 1, 1, 0, 0;") == 2 * 2);  // K-major b: 2 k-steps x 2 m64 blocks
        CHECK(count(c.ptx, ", da, db, p, 1, 1, 0, 1;") == 0);
      } else {
        CHECK(has(c.ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16"));
        CHECK(!has(c.ptx, "ldmatrix.sync.aligned.m8n8.x4.trans"));  // [N][K]: no .trans for b
      }
      assemble(c.ptx, arch);
    }
}

TEST_CASE("fp8 dot: wgmma k32 on sm_90a with both operands copied K-major, mma.sync on sm_89 with PTX 8.4") {
  for (bool mixed : {false, true})
    for (int warps : {4, 8})
      for (int stages : {1, 3}) {
        CAPTURE(mixed);
        CAPTURE(warps);
        CAPTURE(stages);
        PipeSpec s;
        s.in = Scalar::f8e4m3;
        if (mixed) s.in_b = Scalar::f8e5m2;
        s.bk = 128;
        s.b_kmajor = true;  // B^T rows (torch's [N, K] weight): 16-byte runs along K
        auto f = k_loop_kernel(s);
        Compiled c = tessel::lowering::compile(*f, opts(warps, stages, "sm_90a"));
        const std::string instr =
            std::string("wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.") + (mixed ? "e5m2" : "e4m3");
        const int per_trip = 4 * (128 / (64 * (warps / 4)));  // k32 steps x m64 blocks per warpgroup
        const int wg = count(c.ptx, instr);
        CHECK(wg >= per_trip);
        CHECK(wg % per_trip == 0);
        // 8-bit wgmma reads both operands K-major and takes no transpose arguments.
        CHECK(has(c.ptx, "da, db, p, 1, 1;"));
        CHECK(!has(c.ptx, "mma.sync"));
        CHECK(!has(c.ptx, "st.shared.u8"));  // both tiles copied global -> shared, no byte stores
        CHECK(has(c.ptx, "cp.async.cg.shared.global"));
        if (stages > 1) CHECK(c.launch.shared_bytes == stages * (128 * 128 + 128 * 128));
        assemble(c.ptx, "sm_90a");
      }
  PipeSpec s;
  s.in = Scalar::f8e4m3;
  s.bk = 64;
  s.b_kmajor = true;
  auto f = k_loop_kernel(s);
  Options o = opts(4, 3, "sm_89");
  o.target.ptx_version = 84;
  Compiled c = tessel::lowering::compile(*f, o);
  CHECK(has(c.ptx, "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32"));
  CHECK(has(c.ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16"));
  CHECK(!has(c.ptx, "ldmatrix.sync.aligned.m8n8.x4.trans"));  // B staged [N][K]
  assemble(c.ptx, "sm_89");
}

TEST_CASE("fp8 dot without fp8 tensor cores: FMA on converted values (cvt pairs, or integer decoding before sm_89)") {
  PipeSpec s;
  s.in = Scalar::f8e5m2;
  s.m = 64;
  s.n = 64;
  s.bk = 32;
  auto f = k_loop_kernel(s);
  // sm_90 with PTX 8.0: the conversions but no fp8 mma.sync (PTX 8.4) and no wgmma (sm_90a).
  Compiled c = tessel::lowering::compile(*f, opts(4, 1, "sm_90"));
  CHECK(!has(c.ptx, "mma"));
  CHECK(has(c.ptx, "cvt.rn.f16x2.e5m2x2"));
  CHECK(has(c.ptx, "fma.rn.f32"));
  assemble(c.ptx, "sm_90");
  // sm_80 has neither: the bytes are decoded with integer operations.
  Compiled c80 = tessel::lowering::compile(*f, opts(4, 1, "sm_80"));
  CHECK(!has(c80.ptx, "mma"));
  CHECK(!has(c80.ptx, "e5m2"));
  CHECK(has(c80.ptx, "fma.rn.f32"));
  assemble(c80.ptx, "sm_80");
}
