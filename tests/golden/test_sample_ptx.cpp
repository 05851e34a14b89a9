// Golden PTX checks of every registered sample kernel: assembles with ptxas for sm_90 and sm_80
// with no spills or stack, and the aligned vector add moves 16 bytes per access.
#include <doctest/doctest.h>

#include "../lowering/check_ptx.hpp"
#include "tessel/samples/elementwise_kernels.hpp"
#include "tessel/samples/sample.hpp"

using namespace tessel;

namespace {
// Specialisation of an aligned launch: every pointer and integer divisible by 16.
std::vector<ir::ParamSpec> aligned(size_t n) { return std::vector<ir::ParamSpec>(n, ir::ParamSpec{true, false}); }
}  // namespace

TEST_CASE("every sample kernel assembles for sm_80 and sm_90 with 0 spills") {
  samples::register_sample_kernels();
  auto kernels = jit::Registry::global().list();
  CHECK(kernels.size() >= 11);
  for (const jit::KernelEntry* k : kernels) {
    CAPTURE(k->name);
    for (int warps : {4, 8}) {
      auto f = k->build_ir({}, {});
      lowering::Options o;
      o.num_warps = warps;
      lowering_test::compile_checked(*f, o);
    }
  }
}

TEST_CASE("the aligned vector add uses ld.global.v4 and st.global.v4") {
  auto f = samples::k_add.build_ir({}, aligned(4));
  auto c = lowering_test::compile_checked(*f);
  CHECK(lowering_test::count(c.ptx, "ld.global.v4") == 4);  // 1024 elements / 128 threads = 8 per thread: 2 x v4 per input
  CHECK(lowering_test::count(c.ptx, "st.global.v4") == 2);
  CHECK(c.ptx.find("ld.global.f32") == std::string::npos);
}

TEST_CASE("fused kernels with aligned arguments vectorise their streams") {
  for (auto* name : {"chain5", "scale_bias_relu", "bias_gelu_dropout"}) {
    CAPTURE(name);
    const jit::KernelEntry* k = (samples::register_sample_kernels(), jit::Registry::global().find(name));
    REQUIRE(k != nullptr);
  }
  auto f = samples::k_chain5.build_ir({}, aligned(4));
  auto c = lowering_test::compile_checked(*f);
  CHECK(lowering_test::count(c.ptx, "ld.global.v4") == 4);
  CHECK(lowering_test::count(c.ptx, "st.global.v4") == 2);
  auto g = samples::k_bias_gelu_dropout.build_ir({}, aligned(7));
  auto cg = lowering_test::compile_checked(*g);
  CHECK(lowering_test::count(cg.ptx, "st.global.v4") == 2);
  CHECK(cg.ptx.find("mul.hi.u32") != std::string::npos);  // Philox rounds
}
