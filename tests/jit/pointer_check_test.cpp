// PointerCheck: the names a pointer argument's launch errors give (where, fail, dtype_name), and
// the error for an Array passed to a launch on another device.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "fake_gpu_device.hpp"
#include "tessel/jit/kernel.hpp"

using namespace tessel;

namespace {
jit::PointerCheck check_of(std::string_view param, size_t index) {
  jit::PointerCheck c;
  c.kernel = "softmax";
  c.param = param;
  c.index = index;
  c.scalar = ir::Scalar::bf16;
  c.elem_bytes = 2;
  return c;
}
}  // namespace

TEST_CASE("PointerCheck names the kernel, the parameter and the argument counted from 1") {
  CHECK(check_of("x", 0).where() == "kernel 'softmax', parameter 'x' (argument 1)");
  CHECK(check_of("out", 2).where() == "kernel 'softmax', parameter 'out' (argument 3)");
  CHECK(check_of("", 4).where() == "kernel 'softmax', argument 5");  // a kernel given no names
  CHECK(check_of("x", 0).dtype_name() == "bf16");
  jit::PointerCheck f32 = check_of("x", 0);
  f32.scalar = ir::Scalar::f32;
  CHECK(f32.dtype_name() == "f32");
  CHECK_THROWS_WITH_AS(check_of("y", 1).fail("expected this, got that"),
                       "kernel 'softmax', parameter 'y' (argument 2): expected this, got that", std::invalid_argument);
}

TEST_CASE("an Array of one device passed to a launch on another names both devices") {
  tessel_test::FakeGpuDevice gpu0(0), gpu1(1);
  jit::PointerCheck c = check_of("x", 0);
  c.device = &gpu0;
  CHECK_THROWS_WITH_AS(jit::detail::throw_array_on_other_device(c, gpu1),
                       "kernel 'softmax', parameter 'x' (argument 1): the Array is on device 1 (GPU: Fake GPU 1 "
                       "(sm_90)), but the launch runs on device 0 (GPU: Fake GPU 0 (sm_90)) (copy the data there, "
                       "or launch with LaunchOptions naming the Array's device)",
                       std::invalid_argument);
}
