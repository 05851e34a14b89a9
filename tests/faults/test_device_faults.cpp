// Driver failures through the JIT's GPU backend, on the fake driver (common/fake_driver.hpp):
// out of memory, a failed module load, a failed launch, failing frees. Each is a CudaError naming
// the CUDA error and the call, leaks nothing, terminates nothing, and leaves the disk cache and
// the tuning database as they were (nothing half-written, nothing that a later run would trust).
//
// This executable's Device is the GPU backend over the fake: the fake is installed before main,
// so Device::current() (made on first use) finds a "GPU". Its cache and tuning database are
// private to the process, so the fake's cubins never reach a cache a real GPU run reads.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "../common/child_process.hpp"
#include "../common/cuda_error_of.hpp"
#include "../common/fake_driver.hpp"
#include "../common/scoped_fs_env.hpp"
#include "tessel/tessel.hpp"
#include "tessel/runtime/error.hpp"

using namespace tessel;
using namespace tessel::lang;
using tessel_test::cuda_error_of;
using tessel_test::DriverFaults;
using tessel_test::FakeGpu;
using tessel_test::run_in_child;
using Api = tessel::rt::DriverApi;
namespace fs = std::filesystem;

namespace {

// The fake driver for the whole process, with a private cache and tuning database.
struct FakeGpuProcess {
  tessel_test::TempDir dir;
  FakeGpuProcess() {
    ::setenv("TESSEL_CACHE_DIR", (dir.path / "cache").c_str(), 1);
    ::setenv("TESSEL_TUNE_DB", (dir.path / "tuning.json").c_str(), 1);
    ::unsetenv("TESSEL_INTERPRET");  // this executable tests the GPU backend
    ::unsetenv("TESSEL_GPU_ARCH");
    // The fake driver links the cubins: these cases count and fail its link and load calls (a
    // real ptxas would assemble for the GPU the fake one only pretends to be).
    ::setenv("TESSEL_CUBIN_TOOL", "driver", 1);
    FakeGpu::reset();
    rt::Driver::get().install_for_testing(FakeGpu::table(), true);  // for good: Device::current() keeps it
  }
};
FakeGpuProcess& process() {
  static FakeGpuProcess p;
  return p;
}
[[maybe_unused]] const bool g_installed_before_main = (process(), true);

void add_kernel(Ptr<f32> x, Ptr<f32> y, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask) + load(y + offs, mask), mask);
}
using AddKernel = jit::Kernel<Ptr<f32>, Ptr<f32>, Ptr<f32>, Int, const Meta&>;
AddKernel make_add() { return AddKernel{"fault_add", &add_kernel, {"x", "y", "out", "n"}, Meta{{"BLOCK", 128}}}; }

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Every regular file under `root` with its size: what a write anywhere in it would change.
std::set<std::pair<std::string, uintmax_t>> files_under(const fs::path& root) {
  std::set<std::pair<std::string, uintmax_t>> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file()) out.insert({it->path().string(), it->file_size()});
  return out;
}

fs::path cache_dir() { return process().dir.path / "cache"; }
fs::path tune_db() { return process().dir.path / "tuning.json"; }

std::vector<float> ramp(size_t n, float a, float b) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = a * static_cast<float>(i % 97) + b;
  return v;
}

}  // namespace

TEST_CASE("the GPU backend runs over the fake driver") {
  jit::Device& d = jit::Device::current();
  REQUIRE(d.kind() == jit::BackendKind::Cuda);
  CHECK(d.name() == FakeGpu::kName);
  CHECK(d.arch() == "sm_80");
  const auto hx = ramp(1000, 0.5f, -3.0f);
  jit::Array<float> x(hx);
  CHECK(x.download() == hx);  // device memory is host memory: copies are real
  const size_t live = FakeGpu::live().allocations;
  {
    jit::Array<float> y(1000), out(1000);
    CHECK(FakeGpu::live().allocations == live + 2);
    const int launches = FakeGpu::launches();
    AddKernel k = make_add();
    k(jit::Grid{8}, {}, x, y, out, 1000);
    CHECK(FakeGpu::launches() == launches + 1);
  }
  CHECK(FakeGpu::live().allocations == live);
}

TEST_CASE("out of memory is a CudaError naming cuMemAlloc and the error; nothing leaks") {
  jit::Device& d = jit::Device::current();
  const size_t live = FakeGpu::live().allocations;
  const rt::CudaError e = cuda_error_of([&] { jit::Array<float> huge(FakeGpu::kTotalMemory / 2, d); });
  CHECK(e.code() == CUDA_ERROR_OUT_OF_MEMORY);
  CHECK(e.call() == "cuMemAlloc");
  CHECK(contains(e.what(), "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY"));
  // A count whose byte size wraps is refused before any allocation (it once became a tiny one).
  CHECK_THROWS_AS(jit::Array<double>(SIZE_MAX / 4, d), std::length_error);
  // The third of three allocations fails: the two made are freed as the error unwinds.
  {
    DriverFaults faults;
    faults.fail<&Api::MemAlloc>(CUDA_ERROR_OUT_OF_MEMORY, 2, 1);
    const int frees = FakeGpu::frees();
    const rt::CudaError third = cuda_error_of([&] {
      jit::Array<float> a(100, d);
      jit::Array<float> b(200, d);
      jit::Array<float> c(300, d);
    });
    CHECK(third.name() == "CUDA_ERROR_OUT_OF_MEMORY");
    CHECK(FakeGpu::frees() == frees + 2);
  }
  CHECK(FakeGpu::live().allocations == live);
}

// Array's destructor once called Device::free, which throws CudaError when the free fails (every
// free does after a GPU fault): a throwing destructor terminates the process.
TEST_CASE("an Array whose free fails after a GPU fault is released without terminating") {
  jit::Device::current();  // made here, before the child
  const std::string how = run_in_child([] {
    auto a = std::make_unique<jit::Array<float>>(1000);
    const uint64_t noted = rt::release_failures().count;
    {
      DriverFaults faults;
      faults.fail<&Api::MemFree>(CUDA_ERROR_ILLEGAL_ADDRESS);
      a.reset();
    }
    const rt::ReleaseFailures r = rt::release_failures();
    return r.count == noted + 1 && r.last_code == CUDA_ERROR_ILLEGAL_ADDRESS;
  });
  REQUIRE(how == "exit 0");
  // The same in this process, now that it is known not to terminate.
  auto a = std::make_unique<jit::Array<float>>(10);
  const uint64_t noted = rt::release_failures().count;
  {
    DriverFaults faults;
    faults.fail<&Api::MemFree>(CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK_NOTHROW(a.reset());
    // Device::free itself still reports the failure to a caller who can handle it.
    jit::Array<float> b(10);
    CHECK(cuda_error_of([&] { jit::Device::current().free(b.address()); }).name() == "CUDA_ERROR_ILLEGAL_ADDRESS");
  }
  CHECK(rt::release_failures().count == noted + 2);  // a, and b at its end of scope (not freed by the failed call)
}

TEST_CASE("a failed module load is a named CudaError; the cache is not written and nothing stays loaded") {
  AddKernel k = make_add();
  const Meta meta{{"BLOCK", 64}};  // a variant no other case compiles: a cache miss
  jit::Array<float> x(ramp(500, 1.0f, 0.0f)), y(ramp(500, -2.0f, 1.0f)), out(500);
  const auto cache_before = files_under(cache_dir());
  const bool db_existed = fs::exists(tune_db());
  const size_t modules = FakeGpu::live().modules;
  {
    DriverFaults faults;
    faults.fail<&Api::ModuleLoadDataEx>(CUDA_ERROR_INVALID_PTX);
    const rt::CudaError e = cuda_error_of([&] { k(jit::Grid{8}, meta, x, y, out, 500); });
    CHECK(e.call() == "cuModuleLoadDataEx");
    CHECK(e.name() == "CUDA_ERROR_INVALID_PTX");
    CHECK(contains(e.what(), "cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX"));
    CHECK(DriverFaults::failed<&Api::ModuleLoadDataEx>() == 2);  // the linked cubin, then the PTX
  }
  CHECK(FakeGpu::live().modules == modules);
  CHECK(FakeGpu::live().links == 0);
  CHECK(files_under(cache_dir()) == cache_before);
  CHECK(fs::exists(tune_db()) == db_existed);
  // Nothing was kept that a later launch trusts: it compiles (links) again, now loads, and only
  // then is the entry published.
  DriverFaults counting;
  counting.count<&Api::LinkCreate>();
  k(jit::Grid{8}, meta, x, y, out, 500);
  CHECK(DriverFaults::calls<&Api::LinkCreate>() == 1);
  CHECK(FakeGpu::live().modules == modules + 1);
  CHECK(files_under(cache_dir()) != cache_before);  // the control: this check sees a write
}

TEST_CASE("a failed launch is a named CudaError with the kernel and grid; the cache entry is whole") {
  const Meta meta{{"BLOCK", 32}};
  const bool db_existed = fs::exists(tune_db());
  jit::Array<float> x(ramp(300, 1.0f, 0.0f)), y(ramp(300, 3.0f, 1.0f)), out(300);
  {
    AddKernel k = make_add();
    DriverFaults faults;
    faults.fail<&Api::LaunchKernel>(CUDA_ERROR_LAUNCH_FAILED);
    const rt::CudaError e = cuda_error_of([&] { k(jit::Grid{10}, meta, x, y, out, 300); });
    CHECK(e.call() == "cuLaunchKernel");
    CHECK(e.name() == "CUDA_ERROR_LAUNCH_FAILED");
    CHECK(contains(e.what(), "cuLaunchKernel failed: CUDA_ERROR_LAUNCH_FAILED"));
    CHECK(contains(e.what(), "kernel fault_add"));
    CHECK(contains(e.what(), "grid (10, 1, 1)"));
  }
  // The compile before the launch was sound, and its entry is whole: a new Kernel (a second
  // process, as far as the cache is concerned) loads it without linking again.
  DriverFaults counting;
  counting.count<&Api::LinkCreate>();
  counting.count<&Api::ModuleLoadDataEx>();
  AddKernel again = make_add();
  again(jit::Grid{10}, meta, x, y, out, 300);
  CHECK(DriverFaults::calls<&Api::LinkCreate>() == 0);
  CHECK(DriverFaults::calls<&Api::ModuleLoadDataEx>() == 1);
  CHECK(fs::exists(tune_db()) == db_existed);
}

// A sticky fault (every call fails from the first failed launch on) made every config fail; saving
// that would keep those configs from ever being tuned again once the GPU is sound.
TEST_CASE("a device fault while tuning is a named error, and the tuning database is not written") {
  const int64_t n = 1000;
  jit::Array<float> x(ramp(n, 0.25f, 1.0f)), y(ramp(n, -1.0f, 2.0f)), out(n);
  const std::vector<jit::tune::Config> configs = {{Meta{{"BLOCK", 64}}, {4, 1}},
                                                  {Meta{{"BLOCK", 128}}, {4, 1}},
                                                  {Meta{{"BLOCK", 256}}, {4, 1}}};
  auto tuned_kernel = [&] {
    return AddKernel{"fault_add_tuned", &add_kernel, {"x", "y", "out", "n"}, Meta{{"BLOCK", 128}},
                     jit::tune::Autotune{configs, jit::tune::KeySpec{{{"n"}}}, {}, {}}};
  };
  auto grid = [n](const Meta& m) { return jit::Grid{static_cast<uint32_t>(jit::cdiv(n, m["BLOCK"]))}; };
  REQUIRE_FALSE(fs::exists(tune_db()));
  {
    AddKernel k = tuned_kernel();
    DriverFaults sticky;
    sticky.fail<&Api::LaunchKernel>(CUDA_ERROR_ILLEGAL_ADDRESS);
    sticky.fail<&Api::CtxSynchronize>(CUDA_ERROR_ILLEGAL_ADDRESS);
    sticky.fail<&Api::EventSynchronize>(CUDA_ERROR_ILLEGAL_ADDRESS);
    const rt::CudaError e = cuda_error_of([&] { k.launch_tuned(grid, x, y, out, n); });
    CHECK(e.name() == "CUDA_ERROR_ILLEGAL_ADDRESS");
    CHECK(contains(e.what(), "failed: CUDA_ERROR_ILLEGAL_ADDRESS"));
    CHECK(DriverFaults::failed<&Api::LaunchKernel>() >= 3);  // each config's checked run
    CHECK_FALSE(fs::exists(tune_db()));
  }
  // The control: on a sound device the same tuning is saved, every config with its result.
  AddKernel k = tuned_kernel();
  k.launch_tuned(grid, x, y, out, n);
  REQUIRE(fs::exists(tune_db()));
  const jit::tune::Database db = jit::tune::Database::load(tune_db());
  const auto results = db.results(jit::tune::current_db_key("fault_add_tuned", "n=1024;sig=f32,f32,f32"));
  CHECK(results.size() == 3);
  for (const auto& r : results) CHECK(r.status == jit::tune::Status::Ok);
}
