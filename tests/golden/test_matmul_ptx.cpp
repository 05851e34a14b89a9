// Golden PTX checks of the matmul samples: tensor-core dot (ldmatrix + mma.sync of the right
// shape per dtype, FMA for exact fp32), 0 spills on sm_80 and sm_90, and the register report
// of the 128x128x32 f16 tile with 4 and 8 warps.
#include <doctest/doctest.h>

#include "../lowering/check_ptx.hpp"
#include "matmul_specs.hpp"
#include "tessel/samples/sample.hpp"

using namespace tessel;
using golden_test::aligned;
using golden_test::entry;

namespace {

lowering::Compiled build(const jit::KernelEntry& k, const lang::Meta& meta, int warps, bool align) {
  auto f = k.build_ir(meta, align ? aligned(k, k.defaults) : std::vector<ir::ParamSpec>{});
  lowering::Options o;
  o.num_warps = warps;
  return lowering_test::compile_checked(*f, o);
}

}  // namespace

TEST_CASE("matmul samples: ldmatrix + mma.sync of each dtype's shape, no spills") {
  struct Case {
    const char* kernel;
    const char* mma;
    bool trans_b;
    int k;  // the instruction's K
  };
  const Case cases[] = {
      {"matmul", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", true, 16},
      {"matmul_bf16", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", true, 16},
      {"matmul_f32", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", false, 8},
      {"matmul_i8", "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", false, 32},
      {"matmul_bias_relu", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", true, 16},
      {"matmul_bias_gelu", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", true, 16},
      {"matmul_bias_gelu_bf16", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", true, 16},
      {"batched_matmul", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", true, 16},
  };
  for (const Case& c : cases) {
    CAPTURE(std::string(c.kernel));
    const jit::KernelEntry& k = entry(c.kernel);
    for (int warps : {4, 8})
      for (bool align : {false, true}) {
        CAPTURE(warps);
        CAPTURE(align);
        lowering::Compiled out = build(k, k.defaults, warps, align);
        // 64x64x32 tiles: 64 * 64 * 32 / (16 * 8 * k) mmas per K iteration over all warps.
        const int per_iter = 64 * 64 * 32 / (16 * 8 * c.k) / warps;
        const int mmas = lowering_test::count(out.ptx, c.mma);
        CHECK(mmas >= per_iter);
        CHECK(mmas % per_iter == 0);
        CHECK(lowering_test::count(out.ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16") >= 1);
        CHECK((lowering_test::count(out.ptx, ".trans.shared.b16") > 0) == c.trans_b);
        CHECK(out.launch.shared_bytes >= 64 * 32 * 2);
      }
  }
}

TEST_CASE("matmul_f32 with ALLOW_TF32 = 0 is exact fp32 on FMAs") {
  const jit::KernelEntry& k = entry("matmul_f32");
  lang::Meta m = k.defaults;
  m.set("ALLOW_TF32", 0);
  lowering::Compiled out = build(k, m, 4, true);
  CHECK(out.ptx.find("mma.sync") == std::string::npos);
  CHECK(out.ptx.find("cvt.rna.tf32") == std::string::npos);
  CHECK(out.ptx.find("fma.rn.f32") != std::string::npos);
}

TEST_CASE("matmul f16 128x128x32: registers and spills with 4 and 8 warps") {
  const jit::KernelEntry& k = entry("matmul");
  lang::Meta m = k.defaults;
  m.set("BLOCK_M", 128).set("BLOCK_N", 128).set("BLOCK_K", 32);
  for (int warps : {4, 8}) {
    CAPTURE(warps);
    lowering::Compiled out = build(k, m, warps, true);
    // Per K iteration: 128x128x32 over (wm x wn) warps of (M/16wm) x (N/8wn) m16n8k16 tiles, 2 k-steps.
    const int per_iter = 128 * 128 * 32 / (16 * 8 * 16) / warps;
    const int mmas = lowering_test::count(out.ptx, "mma.sync.aligned.m16n8k16");
    CHECK(mmas >= per_iter);
    CHECK(mmas % per_iter == 0);
    const int ldm = lowering_test::count(out.ptx, "ldmatrix.sync.aligned");
    CHECK(ldm > 0);
    // Contiguous, 16-byte aligned rows: the masked tiles (other = 0) go global -> shared by
    // cp.async (zero-filled where masked off), not through registers.
    const int copies = lowering_test::count(out.ptx, "cp.async.cg.shared.global");
    CHECK(copies > 0);
    CHECK(copies % ((128 * 32 + 32 * 128) * 2 / 16 / (32 * warps)) == 0);
    // Operands reach shared memory by cp.async only; the epilogue's st.shared are the
    // accumulator's 4-byte pieces (64 per thread over 4 warps), converted in column chunks
    // through the freed stage for 16-byte stores. Shared memory stays one stage.
    CHECK(lowering_test::count(out.ptx, "st.shared.b32") + 2 * lowering_test::count(out.ptx, "st.shared.v2.b32") ==
          128 * 128 / 2 / (32 * warps));
    CHECK(lowering_test::count(out.ptx, "st.global.v4.b32") == 128 * 128 / 8 / (32 * warps));
    CHECK(out.launch.shared_bytes == (128 * 32 + 32 * 128) * 2);
    for (std::string arch : {"sm_80", "sm_90"}) {
      lowering::Options o;
      o.num_warps = warps;
      o.target = lowering::Target::parse(arch);
      auto f = k.build_ir(m, aligned(k, m));
      auto r = lowering_test::run_ptxas(lowering::compile(*f, o).ptx, arch);
      if (!r.ran) continue;
      CHECK(r.spill_stores == 0);
      CHECK(r.spill_loads == 0);
      CHECK(r.registers <= 255);
      MESSAGE("matmul f16 128x128x32 " << warps << " warps " << arch << ": " << r.registers << " registers, "
                                      << r.spill_stores << " spill bytes, " << mmas << " mma.sync, " << ldm
                                      << " ldmatrix, " << copies << " cp.async");
    }
  }
}
