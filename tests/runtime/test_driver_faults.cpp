// Driver failures through the runtime, without a GPU: the fake driver and injected faults
// (common/fake_driver.hpp). Each failure is a CudaError naming the call and the CUDA error, leaks
// nothing, and no destructor throws, not even after the driver went away under it.
#include <doctest/doctest.h>

#include <string>
#include <type_traits>
#include <vector>

#include "../common/child_process.hpp"
#include "../common/cuda_error_of.hpp"
#include "../common/fake_driver.hpp"
#include "../common/gpu_gate.hpp"
#include "kernels_ptx.hpp"
#include "tessel/runtime/runtime.hpp"

using namespace tessel::rt;
using tessel_test::cuda_error_of;
using tessel_test::DriverFaults;
using tessel_test::FakeDriver;
using tessel_test::FakeGpu;
using tessel_test::FakeLive;
using tessel_test::run_in_child;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("every RAII driver handle has a non-throwing destructor") {
  static_assert(std::is_nothrow_destructible_v<DeviceBuffer>);
  static_assert(std::is_nothrow_destructible_v<Module>);
  static_assert(std::is_nothrow_destructible_v<Stream>);
  static_assert(std::is_nothrow_destructible_v<Event>);
  static_assert(std::is_nothrow_destructible_v<Linker>);
  static_assert(std::is_nothrow_destructible_v<Context>);
  static_assert(std::is_nothrow_move_assignable_v<DeviceBuffer> && std::is_nothrow_move_assignable_v<Module>);
}

TEST_CASE("the fake driver runs the runtime without a GPU, and its counters see every handle") {
  FakeDriver fake;
  REQUIRE(Driver::get().available());
  Context ctx(0);
  CHECK(ctx.device().name() == FakeGpu::kName);
  CHECK(ctx.device().sm_arch() == 80);
  {
    // Copies really copy (device memory is host memory), so a round trip checks the plumbing.
    std::vector<float> in(1001), out(1001, -1.0f);
    for (size_t i = 0; i < in.size(); ++i) in[i] = 0.5f * static_cast<float>(i) - 17.0f;
    DeviceBuffer buf(in.size() * sizeof(float));
    buf.upload(in);
    buf.download(out);
    CHECK(out == in);
    Module m = Module::load_ptx(test::kVaddPtx);
    Function f = m.get_function("vadd");
    CHECK(cuda_error_of([&] { (void)m.get_function("nope"); }).name() == "CUDA_ERROR_NOT_FOUND");
    Stream s;
    Event e;
    CUdeviceptr p = buf.ptr();
    unsigned n = 1001;
    void* params[] = {&p, &p, &p, &n};
    launch(f, Dim3{4}, Dim3{256}, 0, s, params);
    CHECK(FakeGpu::launches() == 1);
    const FakeLive during = FakeGpu::live();
    CHECK(during.allocations == 1);
    CHECK(during.modules == 1);
    CHECK(during.streams == 1);
    CHECK(during.events == 1);
  }
  const FakeLive after = FakeGpu::live();
  CHECK(after.allocations == 0);
  CHECK(after.modules == 0);
  CHECK(after.streams == 0);
  CHECK(after.events == 0);
  CHECK(after.contexts == 1);  // ctx is still alive
}

TEST_CASE("out of memory on allocation is a CudaError naming cuMemAlloc, the error and the size") {
  FakeDriver fake;
  Context ctx(0);
  SUBCASE("the device is full") {
    DeviceBuffer most(FakeGpu::kTotalMemory - 4096);
    const CudaError e = cuda_error_of([] { DeviceBuffer more(8192); });
    CHECK(e.code() == CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(e.call() == "cuMemAlloc");
    CHECK(e.name() == "CUDA_ERROR_OUT_OF_MEMORY");
    CHECK(contains(e.what(), "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY"));
    CHECK(contains(e.what(), "8192 bytes"));
    CHECK(FakeGpu::live().allocations == 1);
  }
  SUBCASE("an injected failure of the third allocation") {
    DriverFaults faults;
    faults.fail<&DriverApi::MemAlloc>(CUDA_ERROR_OUT_OF_MEMORY, 2, 1);
    std::vector<DeviceBuffer> bufs;
    bufs.emplace_back(64);
    bufs.emplace_back(64);
    CHECK(cuda_error_of([&] { bufs.emplace_back(64); }).code() == CUDA_ERROR_OUT_OF_MEMORY);
    bufs.emplace_back(64);  // the fault was one call only
    CHECK(DriverFaults::failed<&DriverApi::MemAlloc>() == 1);
    CHECK(FakeGpu::live().allocations == 3);
  }
  CHECK(FakeGpu::live().allocations == 0);
}

TEST_CASE("a failed module load is a CudaError naming cuModuleLoadDataEx; nothing stays loaded") {
  FakeDriver fake;
  Context ctx(0);
  DriverFaults faults;
  faults.fail<&DriverApi::ModuleLoadDataEx>(CUDA_ERROR_INVALID_PTX);
  const CudaError e = cuda_error_of([] { (void)Module::load_ptx(test::kVaddPtx); });
  CHECK(e.code() == CUDA_ERROR_INVALID_PTX);
  CHECK(e.call() == "cuModuleLoadDataEx");
  CHECK(contains(e.what(), "cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX"));
  CHECK(contains(e.detail(), "JIT log"));
  // A cubin the driver refuses: the same.
  std::vector<char> elf(64, '\0');
  elf[0] = '\x7f', elf[1] = 'E', elf[2] = 'L', elf[3] = 'F', elf[4] = 2;
  faults.fail<&DriverApi::ModuleLoadDataEx>(CUDA_ERROR_NO_BINARY_FOR_GPU);
  CHECK(cuda_error_of([&] { (void)Module::load_cubin(elf); }).name() == "CUDA_ERROR_NO_BINARY_FOR_GPU");
  CHECK(FakeGpu::live().modules == 0);
  CHECK(FakeGpu::module_loads() == 0);
}

TEST_CASE("a failed launch is a CudaError naming cuLaunchKernel, the kernel and the launch shape") {
  FakeDriver fake;
  Context ctx(0);
  Module m = Module::load_ptx(test::kVaddPtx);
  Function f = m.get_function("vadd");
  DriverFaults faults;
  faults.fail<&DriverApi::LaunchKernel>(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
  CUdeviceptr p = 0;
  unsigned n = 0;
  void* params[] = {&p, &p, &p, &n};
  const CudaError e = cuda_error_of([&] { launch(f, Dim3{7, 2}, Dim3{96}, 512, nullptr, params); });
  CHECK(e.code() == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
  CHECK(e.call() == "cuLaunchKernel");
  CHECK(contains(e.what(), "cuLaunchKernel failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"));
  CHECK(contains(e.what(), "kernel vadd grid (7, 2, 1) block (96, 1, 1) dynamic shared 512 bytes"));
  CHECK(FakeGpu::launches() == 0);
}

TEST_CASE("a failing link or stream or event creation is named, and leaves nothing behind") {
  FakeDriver fake;
  Context ctx(0);
  DriverFaults faults;
  faults.fail<&DriverApi::LinkComplete>(CUDA_ERROR_INVALID_PTX);
  faults.fail<&DriverApi::StreamCreate>(CUDA_ERROR_OUT_OF_MEMORY);
  faults.fail<&DriverApi::EventCreate>(CUDA_ERROR_OUT_OF_MEMORY);
  {
    Linker l;
    l.add_ptx(test::kVaddPtx);
    CHECK(contains(cuda_error_of([&] { (void)l.complete(); }).what(), "cuLinkComplete failed: CUDA_ERROR_INVALID_PTX"));
  }
  CHECK(contains(cuda_error_of([] { Stream s; }).what(), "cuStreamCreate failed: CUDA_ERROR_OUT_OF_MEMORY"));
  CHECK(contains(cuda_error_of([] { Event e; }).what(), "cuEventCreate failed: CUDA_ERROR_OUT_OF_MEMORY"));
  const FakeLive live = FakeGpu::live();
  CHECK(live.links == 0);
  CHECK(live.streams == 0);
  CHECK(live.events == 0);
}

TEST_CASE("releases that fail after a GPU fault are noted, not thrown") {
  FakeDriver fake;
  Context ctx(0);
  auto buf = std::make_unique<DeviceBuffer>(256);
  auto mod = std::make_unique<Module>(Module::load_ptx(test::kVaddPtx));
  auto stream = std::make_unique<Stream>();
  auto event = std::make_unique<Event>();
  auto linker = std::make_unique<Linker>();
  DeviceBuffer moved_onto(128);
  const ReleaseFailures before = release_failures();
  {
    // A sticky fault: from now on every release fails as it does on a real GPU.
    DriverFaults faults;
    faults.fail<&DriverApi::MemFree>(CUDA_ERROR_ILLEGAL_ADDRESS);
    faults.fail<&DriverApi::ModuleUnload>(CUDA_ERROR_ILLEGAL_ADDRESS);
    faults.fail<&DriverApi::StreamDestroy>(CUDA_ERROR_ILLEGAL_ADDRESS);
    faults.fail<&DriverApi::EventDestroy>(CUDA_ERROR_ILLEGAL_ADDRESS);
    faults.fail<&DriverApi::LinkDestroy>(CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK_NOTHROW(buf.reset());
    CHECK_NOTHROW(mod.reset());
    CHECK_NOTHROW(stream.reset());
    CHECK_NOTHROW(event.reset());
    CHECK_NOTHROW(linker.reset());
    CHECK_NOTHROW(moved_onto = DeviceBuffer(64));  // frees the old 128 bytes
    CHECK(DriverFaults::failed<&DriverApi::MemFree>() == 2);
  }
  const ReleaseFailures after = release_failures();
  CHECK(after.count == before.count + 6);
  CHECK(after.last_code == CUDA_ERROR_ILLEGAL_ADDRESS);
  REQUIRE(after.last_call != nullptr);
  CHECK(std::string(after.last_call) == "cuMemFree");
}

// Before release_call, destructors called cu(), which throws when the driver is unusable: a
// handle released after the driver went away terminated the process.
TEST_CASE("destructors do not throw when the driver is gone by the time they run") {
  const std::string how = run_in_child([] {
    FakeDriver fake;
    auto ctx = std::make_unique<Context>(0);
    auto buf = std::make_unique<DeviceBuffer>(256);
    auto mod = std::make_unique<Module>(Module::load_ptx(test::kVaddPtx));
    auto stream = std::make_unique<Stream>();
    auto event = std::make_unique<Event>();
    auto linker = std::make_unique<Linker>();
    const uint64_t noted = release_failures().count;
    {
      // The same table, but no longer a usable driver.
      tessel_test::ScopedDriverTable gone(Driver::get().table_for_testing(), false);
      buf.reset();
      mod.reset();
      stream.reset();
      event.reset();
      linker.reset();
      ctx.reset();
    }
    const ReleaseFailures r = release_failures();
    return r.count == noted + 7 && r.last_code == CUDA_ERROR_NOT_INITIALIZED;  // the context: 2 calls
  });
  CHECK(how == "exit 0");
}

TEST_CASE("the fault injector also wraps the real driver: a GPU's allocation fails on request" *
          doctest::test_suite("gpu")) {
  if (!Driver::get().available()) {
    tessel_test::skip_gpu_case("no CUDA driver: " + Driver::get().unavailable_reason());
    return;
  }
  Context ctx(0);
  DriverFaults faults;
  faults.fail<&DriverApi::MemAlloc>(CUDA_ERROR_OUT_OF_MEMORY, 1, 1);
  DeviceBuffer first(1 << 20);
  const CudaError e = cuda_error_of([] { DeviceBuffer second(1 << 20); });
  CHECK(e.name() == "CUDA_ERROR_OUT_OF_MEMORY");
  CHECK(e.call() == "cuMemAlloc");
  DeviceBuffer third(1 << 20);  // the real driver again
  std::vector<uint32_t> in(1 << 18), out(1 << 18, 0);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint32_t>(i * 2654435761u);
  third.upload(in);
  third.download(out);
  CHECK(out == in);
}
