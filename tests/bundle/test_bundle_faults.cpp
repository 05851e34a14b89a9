// The production runtime's bundle launches on the fake driver (common/fake_driver.hpp), with
// injected failures: a failed module load and a failed launch are CudaErrors naming the call,
// the CUDA error and the kernel; nothing is half-loaded (the next launch loads again) or leaked.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "../common/cuda_error_of.hpp"
#include "../common/fake_driver.hpp"
#include "add_bundle.hpp"
#include "tessel/runtime/buffer.hpp"
#include "tessel/runtime/bundle.hpp"
#include "tessel/runtime/context.hpp"
#include "tessel/runtime/error.hpp"

using namespace tessel;
using namespace tessel::bundle_test;
using tessel_test::cuda_error_of;
using tessel_test::DriverFaults;
using tessel_test::FakeDriver;
using tessel_test::FakeGpu;
using Api = rt::DriverApi;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a bundle kernel whose module fails to load or whose launch fails says which, and recovers") {
  TempDir t;
  const fs::path dir = export_add_sm80(t.path / "b");
  FakeDriver fake;
  {
    rt::Context ctx(0);
    rt::Bundle bundle = rt::Bundle::open(dir);
    rt::BundleKernel& k = bundle.kernel("add");
    const int32_t n = 1000;
    rt::DeviceBuffer x(n * 4), y(n * 4), out(n * 4);
    const rt::Dim3 grid{static_cast<unsigned>((n + k.meta("BLOCK") - 1) / k.meta("BLOCK"))};
    auto launch = [&] { k.launch(nullptr, grid, x.ptr(), y.ptr(), out.ptr(), n); };
    const int variant = k.variant_for(x.ptr(), y.ptr(), out.ptr(), n);
    REQUIRE(variant >= 0);
    {
      DriverFaults faults;
      faults.fail<&Api::ModuleLoadDataEx>(CUDA_ERROR_OUT_OF_MEMORY, 0, 1);
      const rt::CudaError e = cuda_error_of(launch);
      CHECK(e.call() == "cuModuleLoadDataEx");
      CHECK(contains(e.what(), "cuModuleLoadDataEx failed: CUDA_ERROR_OUT_OF_MEMORY"));
      CHECK_FALSE(k.loaded(static_cast<size_t>(variant)).has_value());
      CHECK(FakeGpu::live().modules == 0);
      CHECK(FakeGpu::launches() == 0);
      // The fault was one call: the next launch loads the module and runs.
      launch();
      CHECK(FakeGpu::launches() == 1);
      CHECK(FakeGpu::live().modules == 1);
      REQUIRE(k.loaded(static_cast<size_t>(variant)).has_value());
    }
    {
      DriverFaults faults;
      faults.fail<&Api::LaunchKernel>(CUDA_ERROR_LAUNCH_FAILED);
      const rt::CudaError e = cuda_error_of(launch);
      CHECK(e.call() == "cuLaunchKernel");
      CHECK(contains(e.what(), "cuLaunchKernel failed: CUDA_ERROR_LAUNCH_FAILED"));
      CHECK(contains(e.what(), "bundle kernel 'add' variant '"));
      // The C-style entry gives the code, and the message through last_bundle_error().
      CHECK(k.try_launch(nullptr, grid, x.ptr(), y.ptr(), out.ptr(), n) == CUDA_ERROR_LAUNCH_FAILED);
      CHECK(contains(rt::last_bundle_error(), "cuLaunchKernel failed: CUDA_ERROR_LAUNCH_FAILED"));
    }
    launch();
    CHECK(FakeGpu::launches() == 2);
  }
  // The bundle, its modules, the buffers and the context are all released.
  CHECK(FakeGpu::live() == tessel_test::FakeLive{});
}
