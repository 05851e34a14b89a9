// Golden kernel plans (lowering/plan/kernel_plan.hpp): representative kernels planned for a fixed
// target and options, compared line by line with tests/data/plans/<case>.plan. A schedule change
// (a layout, a loop's stages, a ring, a tensor map, the launch record) shows up here as a plan
// diff. After an intended change, regenerate with
//   TESSEL_UPDATE_GOLDEN=1 build/tests/test_golden -tc='golden plan*'
// and review the diff of tests/data/plans/ like code.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "matmul_specs.hpp"
#include "tessel/lowering/compile.hpp"

using namespace tessel;

namespace {

struct PlanCase {
  const char* file;    // tests/data/plans/<file>.plan
  const char* kernel;  // a registered sample
  const char* arch;
  int warps, stages, programs;
  bool warp_specialize, tma;
  int block_m, block_n, block_k;  // 0: the kernel's defaults
  bool trans_b = false;            // matmul: B column-major (stride_bk is 1)
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string plan_of(const PlanCase& c) {
  const jit::KernelEntry& k = golden_test::entry(c.kernel);
  lang::Meta m = k.defaults;
  if (c.block_m) m.set("BLOCK_M", c.block_m).set("BLOCK_N", c.block_n).set("BLOCK_K", c.block_k);
  auto f = k.build_ir(m, golden_test::aligned(k, m, c.trans_b));
  lowering::Options o;
  o.target = lowering::Target::parse(c.arch);
  o.num_warps = c.warps;
  o.num_stages = c.stages;
  o.programs_per_cta = c.programs;
  o.warp_specialize = c.warp_specialize;
  o.tma = c.tma;
  return lowering::plan_text(*f, o);
}

// The first differing line, for a readable failure.
std::string first_difference(const std::string& want, const std::string& got) {
  std::istringstream a(want), b(got);
  std::string la, lb;
  for (int n = 1;; ++n) {
    const bool ea = !std::getline(a, la), eb = !std::getline(b, lb);
    if (ea && eb) return "";
    if (ea || eb || la != lb)
      return "line " + std::to_string(n) + ":\n  golden: " + (ea ? "<end>" : la) + "\n  plan:   " + (eb ? "<end>" : lb);
  }
}

void check_golden(const PlanCase& c) {
  CAPTURE(c.file);
  const std::string path = std::string(TESSEL_TEST_DATA_DIR) + "/plans/" + c.file + ".plan";
  const std::string got = plan_of(c);
  if (const char* u = std::getenv("TESSEL_UPDATE_GOLDEN"); u && std::string(u) == "1") {
    std::ofstream(path) << got;
    MESSAGE("rewrote " << path);
    return;
  }
  const std::string want = read_file(path);
  REQUIRE_MESSAGE(!want.empty(), "no golden plan at " << path << " (TESSEL_UPDATE_GOLDEN=1 writes it)");
  const std::string diff = first_difference(want, got);
  CHECK_MESSAGE(diff.empty(), "plan differs from " << path << " at " << diff);
}

}  // namespace

TEST_CASE("golden plan: elementwise add, vectorised 16-byte accesses (sm_90a)") {
  check_golden({"add_sm90a", "add", "sm_90a", 4, 3, 1, false, false, 0, 0, 0});
}

TEST_CASE("golden plan: softmax, one row per program with reductions (sm_90a)") {
  check_golden({"softmax_sm90a", "softmax", "sm_90a", 4, 3, 1, false, false, 0, 0, 0});
}

TEST_CASE("golden plan: LayerNorm f16 (sm_90a)") {
  check_golden({"layernorm_f16_sm90a", "layernorm_f16", "sm_90a", 8, 3, 1, false, false, 0, 0, 0});
}

TEST_CASE("golden plan: matmul pipelined through cp.async stages onto mma.sync (sm_80)") {
  check_golden({"matmul_sm80_w4_s3", "matmul", "sm_80", 4, 3, 1, false, false, 128, 128, 32});
}

TEST_CASE("golden plan: matmul left sequential with one stage, and why (sm_80)") {
  check_golden({"matmul_sm80_w4_s1", "matmul", "sm_80", 4, 1, 1, false, false, 64, 64, 32});
}

TEST_CASE("golden plan: wgmma with TMA producers multicasting in a 2-CTA cluster (sm_90a)") {
  check_golden({"matmul_paired_sm90a_w8_s4_ws_tma", "matmul_paired", "sm_90a", 8, 4, 1, true, true, 128, 256, 64});
}

TEST_CASE("golden plan: ping-pong, two programs per CTA taking turns at wgmma (sm_90a)") {
  check_golden({"matmul_sm90a_w4_s3_p2", "matmul", "sm_90a", 4, 3, 2, false, false, 128, 128, 64});
}

TEST_CASE("golden plan: persistent matmul with cp.async producer warps filling a shared ring (sm_90a)") {
  check_golden({"matmul_persistent_sm90a_w4_s3_p2_ws", "matmul_persistent", "sm_90a", 4, 3, 2, true, false, 128, 128,
                64});
}

TEST_CASE("golden plan: matmul with B column-major (NT): dim-0 loads copied into a [N][K] staging (sm_90a)") {
  check_golden({"matmul_nt_sm90a_w8_s3", "matmul", "sm_90a", 8, 3, 1, false, false, 128, 128, 64, true});
}

TEST_CASE("golden plan: attention forward, two dots pipelined, Q resident, K^T loaded along dim 0 (sm_90a)") {
  check_golden({"attention_fwd_sm90a_w4_s3", "attention_fwd", "sm_90a", 4, 3, 1, false, false, 0, 0, 0});
}

TEST_CASE("golden plan: attention forward on mma.sync (sm_80)") {
  check_golden({"attention_fwd_sm80_w4_s2", "attention_fwd", "sm_80", 4, 2, 1, false, false, 0, 0, 0});
}
