// Golden PTX of a precise-math kernel: libdevice's sinf linked, inlined and assembled by ptxas.
#include <doctest/doctest.h>

#include "../lowering/check_ptx.hpp"
#include "tessel/ir/parser.hpp"
#include "tessel/ir/passes.hpp"

using namespace tessel;

namespace {
// out[i] = sin(x[i]) for 128 elements, the precise form (lang::Precision::ieee).
const char* kPreciseSin = R"(kernel @precise_sin(%x: ptr<f32>, %out: ptr<f32>) {
  %0 = arange {end = 128, start = 0} : i32[128]
  %1 = splat %x : ptr<f32>[128]
  %2 = addptr %1, %0 : ptr<f32>[128]
  %3 = load %2 : f32[128]
  %4 = sin %3 {precise = 1} : f32[128]
  %5 = splat %out : ptr<f32>[128]
  %6 = addptr %5, %0 : ptr<f32>[128]
  store %6, %4
}
)";
}  // namespace

TEST_CASE("a precise sin: no sin.approx, no calls; assembles for sm_80 and sm_90") {
  auto f = ir::parse(kPreciseSin);
  lowering::Options o;
  o.num_warps = 1;
  lowering::Compiled c;
  for (const char* arch : {"sm_80", "sm_90"}) {
    o.target = lowering::Target::parse(arch);
    c = lowering::compile(*f, o);
    // libdevice's sinf reduces |x| > 105615 by Payne-Hanek into a 7-word local array: a 32-byte
    // stack frame (as CUDA's own sinf has), touched only on that path; still no spills.
    const lowering_test::PtxasReport r = lowering_test::run_ptxas(c.ptx, arch);
    if (!r.ran) continue;
    INFO("ptxas -arch=" << arch << ":\n" << r.log);
    REQUIRE(r.ok);
    CHECK(r.stack_frame == 32);
    CHECK(r.spill_stores == 0);
    CHECK(r.spill_loads == 0);
  }
  CHECK(lowering_test::count(c.ptx, "sin.approx") == 0);
  CHECK(lowering_test::count(c.ptx, "call") == 0);
  CHECK(lowering_test::count(c.ptx, "__nv_") == 0);
  // libdevice's sinf: a Cody-Waite reduction with fma for moderate |x| (its 2/pi constant
  // 0f3F22F983 = 0.63661975) and Payne-Hanek beyond, then the polynomial.
  CHECK(lowering_test::count(c.ptx, "0f3F22F983") >= 1);
  CHECK(lowering_test::count(c.ptx, "fma.rn.f32") >= 4);
  // The same kernel without the attribute is the one approximate instruction per element.
  std::string fast_text = kPreciseSin;
  fast_text.replace(fast_text.find(" {precise = 1}"), 14, "");
  const lowering::Compiled fast = lowering::compile(*ir::parse(fast_text), o);
  CHECK(lowering_test::count(fast.ptx, "sin.approx.f32") == 4);  // 128 elements / 32 threads
}
