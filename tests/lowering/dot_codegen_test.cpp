// dot lowers to ldmatrix + mma.sync for f16/bf16/tf32/s8 (FMA for exact fp32 and s8 with
// K = 16), keeps the accumulator, the loop-carried values and the epilogue in the mma layout,
// and assembles for sm_80 and sm_90 without spills.
#include <doctest/doctest.h>

#include <algorithm>

#include "check_ptx.hpp"
#include "dot_kernels.hpp"
#include "tessel/ir/verify.hpp"
#include "plan/layout_assignment.hpp"
#include "plan/mma_layout.hpp"

using namespace lowering_test;
using tessel::lowering::Compiled;
using tessel::lowering::Layout;
using tessel::lowering::Options;

namespace {

Compiled checked(const Function& f, int warps = 4) {
  tessel::ir::verify(f);
  Options o;
  o.num_warps = warps;
  return compile_checked(f, o);
}

bool has(const std::string& ptx, const std::string& s) { return ptx.find(s) != std::string::npos; }

int64_t mma_per_tile(int64_t m, int64_t n, int64_t k, int kk, int warps) {
  Layout acc = tessel::lowering::mma_accumulator_layout({m, n}, warps);
  int64_t wm = acc.warps_per_cta[0], wn = acc.warps_per_cta[1];
  return (m / (16 * wm)) * std::max<int64_t>(1, n / (8 * wn)) * (k / kk);
}

}  // namespace

TEST_CASE("layouts: the dot result, its accumulator, the carried value and the epilogue share the mma layout") {
  MatmulSpec s;
  s.bias_relu = true;
  s.out = Scalar::f16;
  auto f = matmul_kernel(s);
  tessel::ir::verify(*f);
  for (int warps : {4, 8}) {
    auto la = tessel::lowering::assign_layouts(*f, warps);
    const Layout mma = tessel::lowering::mma_accumulator_layout({128, 128}, warps);
    const Op* dot = find_op(*f, OpKind::Dot);
    CHECK(la.of(dot->result()) == mma);
    CHECK(la.of(dot->operand(2)) == mma);  // the loop-carried accumulator
    const Op* loop = find_op(*f, OpKind::For);
    CHECK(la.of(loop->results[0]) == mma);
    CHECK(la.of(loop->operand(3)) == mma);  // the zeros it starts from
    CHECK(*la.of_op(*find_op(*f, OpKind::Store)) == mma);
    CHECK(la.of(find_op(*f, OpKind::Cast)->result()) == mma);
    // a and b stay in the default layouts their loads give them (16-byte vectors).
    CHECK(la.of(dot->operand(0)) == la.default_for({128, 32}));
    CHECK(la.of(dot->operand(1)) == la.default_for({32, 128}));
    CHECK(la.of(dot->operand(0)).size_per_thread == std::vector<int>{1, 8});
  }
}

TEST_CASE("f16 128x128x32 matmul: ldmatrix + mma.sync, no spills, 4 and 8 warps") {
  MatmulSpec s;
  auto f = matmul_kernel(s);
  for (int warps : {4, 8}) {
    CAPTURE(warps);
    Compiled c = checked(*f, warps);
    const int mmas = count(c.ptx, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32");
    const int64_t want = mma_per_tile(128, 128, 32, 16, warps);
    CHECK(want == (warps == 4 ? 64 : 32));
    CHECK(mmas > 0);
    CHECK(mmas % want == 0);  // the K loop may be unrolled
    CHECK(count(c.ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16") > 0);
    CHECK(count(c.ptx, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16") > 0);
    // Loads used only by the dot are copied global -> shared by cp.async, 16 bytes at a time:
    // 128x32 + 32x128 halves = 1024 copies of 16 bytes per K iteration over the CTA.
    const int copies = count(c.ptx, "cp.async.cg.shared.global");
    CHECK(copies > 0);
    CHECK(copies % (1024 / (32 * warps)) == 0);
    CHECK(has(c.ptx, "cp.async.commit_group"));
    CHECK(has(c.ptx, "cp.async.wait_group 0"));
    CHECK(!has(c.ptx, "st.shared.v4"));  // the epilogue's accumulator pieces are 8 bytes at most
    CHECK(!has(c.ptx, "ld.global"));
    CHECK(c.launch.shared_bytes == 2 * 128 * 32 * 2);
    for (std::string arch : {"sm_80", "sm_90"}) {
      Options o;
      o.num_warps = warps;
      o.target = tessel::lowering::Target::parse(arch);
      auto r = run_ptxas(tessel::lowering::compile(*f, o).ptx, arch);
      if (r.ran) MESSAGE("f16 128x128x32, " << warps << " warps, " << arch << ": " << r.registers << " registers, "
                                            << r.spill_stores << " spill bytes, " << mmas << " mma.sync");
    }
  }
}

TEST_CASE("bf16, tf32 and s8 use their mma shapes") {
  struct Case {
    Scalar in, acc;
    const char* instr;
    int k;
    bool trans_b;
  };
  for (Case cs : {Case{Scalar::bf16, Scalar::f32, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 16, true},
                  Case{Scalar::f32, Scalar::f32, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 8, false},
                  Case{Scalar::i8, Scalar::i32, "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", 32, false}}) {
    CAPTURE(cs.instr);
    MatmulSpec s;
    s.m = 64;
    s.n = 64;
    s.bk = 64;
    s.in = cs.in;
    s.acc = cs.acc;
    s.out = cs.acc;
    auto f = matmul_kernel(s);
    Compiled c = checked(*f);
    const int mmas = count(c.ptx, cs.instr);
    CHECK(mmas > 0);
    CHECK(mmas % mma_per_tile(64, 64, 64, cs.k, 4) == 0);
    CHECK(has(c.ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16"));
    CHECK(has(c.ptx, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16") == cs.trans_b);
    if (cs.in == Scalar::f32) {
      // tf32 inputs are rounded on the way, so they pass through registers.
      CHECK(has(c.ptx, "cvt.rna.tf32.f32"));
      CHECK(has(c.ptx, "st.shared.v4."));
      CHECK(!has(c.ptx, "cp.async"));
    }
    if (cs.in == Scalar::i8) {
      CHECK(has(c.ptx, "cp.async.cg.shared.global"));  // a
      CHECK(has(c.ptx, "st.shared.u8"));                // b, transposed into [N][K]
    }
  }
}

TEST_CASE("exact fp32 (allow_tf32 = 0) and s8 with K = 16 take the FMA path") {
  MatmulSpec s;
  s.m = 64;
  s.n = 32;
  s.bk = 16;
  s.in = Scalar::f32;
  s.allow_tf32 = false;
  Compiled c = checked(*matmul_kernel(s));
  CHECK(!has(c.ptx, "mma.sync"));
  CHECK(has(c.ptx, "fma.rn.f32"));
  CHECK(!has(c.ptx, "cvt.rna.tf32"));
  s.in = Scalar::i8;
  s.acc = s.out = Scalar::i32;
  Compiled ci = checked(*matmul_kernel(s));
  CHECK(!has(ci.ptx, "mma.sync"));
  CHECK((has(ci.ptx, "mad.lo.s32") || has(ci.ptx, "mul.lo.s32")));
  // f16 on the FMA path would only happen for layouts that are not the accumulator's; the
  // same kernel with tf32 allowed uses tensor cores.
  s.in = Scalar::f32;
  s.acc = s.out = Scalar::f32;
  s.allow_tf32 = true;
  CHECK(has(checked(*matmul_kernel(s)).ptx, "mma.sync.aligned.m16n8k8"));
}

TEST_CASE("small and odd tiles: 16x16x16, replicated columns, one warp, no loop") {
  for (auto [m, n, k, warps] : std::vector<std::tuple<int64_t, int64_t, int64_t, int>>{
           {16, 16, 16, 4}, {16, 16, 16, 8}, {16, 16, 16, 1}, {32, 16, 64, 2}, {16, 64, 32, 4}, {256, 32, 16, 8}}) {
    CAPTURE(m);
    CAPTURE(n);
    CAPTURE(k);
    CAPTURE(warps);
    MatmulSpec s;
    s.m = m;
    s.n = n;
    s.bk = k;
    s.loop = false;
    Compiled c = checked(*matmul_kernel(s), warps);
    CHECK(count(c.ptx, "mma.sync.aligned.m16n8k16") == mma_per_tile(m, n, k, 16, warps));
  }
}

TEST_CASE("fused epilogue: bias + relu + cast to f16 stays in the accumulator layout") {
  MatmulSpec s;
  s.bias_relu = true;
  s.out = Scalar::f16;
  Compiled c = checked(*matmul_kernel(s));
  CHECK(has(c.ptx, "mma.sync.aligned.m16n8k16"));
  CHECK(has(c.ptx, "max."));
  CHECK(c.launch.shared_bytes == 2 * 128 * 32 * 2);  // only the operand staging: no layout conversion
}


TEST_CASE("the GPU sample tests' small blocks (16x32x16, 32x16x32) compile for every dtype") {
  struct Case {
    Scalar in, acc;
    bool tf32;
    const char* mma;  // nullptr: the FMA path
  };
  for (auto [m, n, k] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{{16, 32, 16}, {32, 16, 32}})
    for (Case cs : {Case{Scalar::f16, Scalar::f32, true, "m16n8k16.row.col.f32.f16"},
                    Case{Scalar::bf16, Scalar::f32, true, "m16n8k16.row.col.f32.bf16"},
                    Case{Scalar::f32, Scalar::f32, true, "m16n8k8.row.col.f32.tf32"},
                    Case{Scalar::f32, Scalar::f32, false, nullptr},
                    Case{Scalar::i8, Scalar::i32, false, k >= 32 ? "m16n8k32.row.col.s32.s8" : nullptr}})
      for (int warps : {1, 4, 8}) {
        CAPTURE(m);
        CAPTURE(n);
        CAPTURE(k);
        CAPTURE(warps);
        CAPTURE(cs.mma ? cs.mma : "fma");
        MatmulSpec s;
        s.m = m;
        s.n = n;
        s.bk = k;
        s.in = cs.in;
        s.acc = s.out = cs.acc;
        s.allow_tf32 = cs.tf32;
        Compiled c = checked(*matmul_kernel(s), warps);
        if (cs.mma) CHECK(has(c.ptx, std::string("mma.sync.aligned.") + cs.mma));
        else CHECK(!has(c.ptx, "mma.sync"));
      }
}

TEST_CASE("a load with a non-zero `other` or a second user is staged through registers") {
  MatmulSpec s;
  s.m = s.n = 64;
  s.loop = false;
  auto f = matmul_kernel(s);
  // Give a's load a mask and other = 1.0: cp.async can only zero-fill.
  Op* load = const_cast<Op*>(find_op(*f, OpKind::Load, 0));
  Builder b(*f);
  b.set_block(load->parent);
  Value* mask = b.const_int(1, Type{DType{Scalar::i1}, load->results[0]->type.shape});
  Value* one = b.const_float(1.0, Type{DType{Scalar::f16}, load->results[0]->type.shape});
  // Move the two new constants before the load.
  auto& ops = load->parent->ops;
  auto pos = std::find_if(ops.begin(), ops.end(), [&](const auto& o) { return o.get() == load; });
  std::rotate(pos, ops.end() - 2, ops.end());
  load->operands.push_back(mask);
  load->operands.push_back(one);
  Compiled c = checked(*f);
  CHECK(count(c.ptx, "cp.async.cg.shared.global") == 64 * 32 * 2 / 16 / 128);  // b only
  CHECK(has(c.ptx, "st.shared.v4."));                                            // a
}
