// The JIT's GPU backend leaves the calling thread's CUDA context as it found it, on the fake
// driver (installed before main by test_device_faults.cpp): after allocating, copying,
// compiling, launching (on the legacy stream and on a stream), synchronising and making and
// destroying a stream, the thread's current context is the one it had, none or another.
#include <doctest/doctest.h>

#include <thread>

#include "../common/fake_driver.hpp"
#include "tessel/runtime/context.hpp"
#include "tessel/runtime/driver.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;
using namespace tessel::lang;

namespace {

void scale_kernel(Ptr<f32> x, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask) * 2.0f, mask);
}

CUcontext current_context() {
  CUcontext c = nullptr;
  REQUIRE(rt::cu().CtxGetCurrent(&c) == CUDA_SUCCESS);
  return c;
}

// Every kind of call the JIT makes on the device, each followed by a look at the current context.
void every_call(CUcontext expected) {
  jit::Kernel k{"restore_scale", &scale_kernel, {"x", "out", "n"}, Meta{{"BLOCK", 128}}};
  jit::Device& dev = jit::Device::current();
  jit::Array<float> x(std::vector<float>(1000, 1.0f)), out(1000);
  CHECK(current_context() == expected);
  out.poison();
  CHECK(current_context() == expected);
  k(jit::Grid{8}, {}, x, out, 1000);  // compiles, loads, launches
  CHECK(current_context() == expected);
  jit::Stream s(dev, /*non_blocking=*/true);
  CHECK(current_context() == expected);
  k(jit::Grid{8}, {}, s, x, out, 1000);
  CHECK(current_context() == expected);
  s.synchronize();
  dev.synchronize();
  CHECK(current_context() == expected);
  (void)out.download();
  CHECK(current_context() == expected);
}

}  // namespace

TEST_CASE("fake GPU: no JIT call changes the calling thread's current context") {
  REQUIRE(jit::Device::current().kind() == jit::BackendKind::Cuda);  // the fake, installed before main
  std::thread([] {
    REQUIRE(current_context() == nullptr);
    every_call(nullptr);  // a fresh thread: none before, none after
  }).join();
  // Another context of the caller's (any handle the driver gave it): put back after each call.
  CUcontext theirs = reinterpret_cast<CUcontext>(uintptr_t{0xC0FFEE});
  std::thread([theirs] {
    REQUIRE(rt::cu().CtxSetCurrent(theirs) == CUDA_SUCCESS);
    every_call(theirs);
  }).join();
}

TEST_CASE("fake GPU: an rt::Context unsets on release only the context it made current itself") {
  std::thread([] {
    CUcontext primary = nullptr;
    REQUIRE(rt::cu().DevicePrimaryCtxRetain(&primary, 0) == CUDA_SUCCESS);
    // The caller's own: a Context that only retains leaves it current when released.
    REQUIRE(rt::cu().CtxSetCurrent(primary) == CUDA_SUCCESS);
    { rt::Context retained(0, /*make_current=*/false); }
    CHECK(current_context() == primary);
    // Made current by the Context: unset again when it goes.
    REQUIRE(rt::cu().CtxSetCurrent(nullptr) == CUDA_SUCCESS);
    { rt::Context made(0); CHECK(current_context() == primary); }
    CHECK(current_context() == nullptr);
    { rt::Context later(0, /*make_current=*/false); later.make_current(); }
    CHECK(current_context() == nullptr);
    REQUIRE(rt::cu().DevicePrimaryCtxRelease(0) == CUDA_SUCCESS);
  }).join();
}
