// One opened bundle launched in several CUDA contexts (issue 28), on the fake driver
// (common/fake_driver.hpp) with two or more fake devices: each context binds its own state on its
// first launch there, loads each module once, and launches only the functions loaded in it; a
// device no image runs on is refused by its own sm; a 17th context and a thread without a
// context are refused by message.
#include <doctest/doctest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "../common/fake_driver.hpp"
#include "add_bundle.hpp"
#include "tessel/runtime/buffer.hpp"
#include "tessel/runtime/bundle.hpp"
#include "tessel/runtime/context.hpp"
#include "tessel/runtime/error.hpp"

using namespace tessel;
using namespace tessel::bundle_test;
using tessel_test::FakeDriver;
using tessel_test::FakeGpu;
using tessel_test::FakeLaunch;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The BundleError a call throws (its code and message); fails the test on anything else.
template <class Fn>
rt::BundleError bundle_error_of(Fn&& fn) {
  try {
    fn();
  } catch (const rt::BundleError& e) {
    return e;
  } catch (const std::exception& e) {
    FAIL("expected BundleError, got: " << e.what());
  }
  FAIL("expected BundleError, nothing was thrown");
  return rt::BundleError(CUDA_SUCCESS, "");
}

// Buffers for add over n elements (the fake's memory is the host's: any context may use them).
struct AddArgs {
  static constexpr int32_t n = 4096;  // a multiple of 16: the div16 variant
  rt::DeviceBuffer x{n * 4}, y{n * 4}, out{n * 4};
  rt::Dim3 grid(const rt::BundleKernel& k) const {
    return rt::Dim3{static_cast<unsigned>((n + k.meta("BLOCK") - 1) / k.meta("BLOCK"))};
  }
  void launch(rt::BundleKernel& k) const { k.launch(nullptr, grid(k), x.ptr(), y.ptr(), out.ptr(), n); }
  CUresult try_launch(rt::BundleKernel& k) const { return k.try_launch(nullptr, grid(k), x.ptr(), y.ptr(), out.ptr(), n); }
  int variant(const rt::BundleKernel& k) const { return k.variant_for(x.ptr(), y.ptr(), out.ptr(), n); }
};

int variant_named(const rt::BundleKernel& k, const std::string& name) {
  for (size_t v = 0; v < k.info().variants.size(); ++v)
    if (k.info().variants[v].name == name) return static_cast<int>(v);
  FAIL("no variant " << name);
  return -1;
}

}  // namespace

TEST_CASE("one bundle kernel launched in context A, then B, then A loads once per context and runs each one's own "
          "functions") {
  TempDir t;
  const fs::path dir = export_add_sm80(t.path / "b");
  FakeDriver fake;
  FakeGpu::set_devices(2);
  {
    rt::Context a(0, /*make_current=*/false), b(1, /*make_current=*/false);
    REQUIRE(a.handle() != b.handle());
    rt::Bundle bundle = rt::Bundle::open(dir);
    rt::BundleKernel& k = bundle.kernel("add");
    AddArgs args;
    const int div16 = variant_named(k, "div16"), generic = variant_named(k, "generic");
    // No context current: variant_for needs none (chooses among all variants); loaded() has none.
    CHECK(args.variant(k) == div16);
    CHECK_FALSE(k.loaded(static_cast<size_t>(div16)).has_value());

    a.make_current();
    args.launch(k);
    CHECK(FakeGpu::module_loads_in(a.handle()) == 1);
    CHECK(FakeGpu::module_loads_in(b.handle()) == 0);
    REQUIRE(k.loaded(static_cast<size_t>(div16)).has_value());

    // B is not bound yet: nothing is loaded there, and its first launch loads its own module.
    b.make_current();
    CHECK_FALSE(k.loaded(static_cast<size_t>(div16)).has_value());
    CHECK(args.variant(k) == div16);
    args.launch(k);
    CHECK(FakeGpu::module_loads_in(b.handle()) == 1);
    REQUIRE(k.loaded(static_cast<size_t>(div16)).has_value());

    // Back in A: nothing loads again.
    a.make_current();
    args.launch(k);
    CHECK(FakeGpu::module_loads() == 2);
    CHECK(FakeGpu::module_loads_in(a.handle()) == 1);
    CHECK(FakeGpu::live().modules == 2);

    // Each launch ran in the context current at the call, with a function loaded in that context
    // (the fake refuses any other), the same one in A both times.
    const std::vector<FakeLaunch> log = FakeGpu::launch_log();
    REQUIRE(log.size() == 3);
    CHECK(log[0].ctx == a.handle());
    CHECK(log[1].ctx == b.handle());
    CHECK(log[2].ctx == a.handle());
    for (const FakeLaunch& l : log) CHECK(l.module_ctx == l.ctx);
    CHECK(log[0].fn == log[2].fn);
    CHECK(log[0].fn != log[1].fn);

    // load_all() loads into the current context only.
    b.make_current();
    k.load_all();
    CHECK(FakeGpu::module_loads_in(b.handle()) == static_cast<int>(k.info().variants.size()));
    CHECK(k.loaded(static_cast<size_t>(generic)).has_value());
    a.make_current();
    CHECK(FakeGpu::module_loads_in(a.handle()) == 1);
    CHECK_FALSE(k.loaded(static_cast<size_t>(generic)).has_value());
  }
  // The bundle's modules are unloaded, each in its own context (A was current), and the buffers
  // and contexts released.
  CHECK(FakeGpu::unloads_outside_their_context() == 0);
  CHECK(FakeGpu::live() == tessel_test::FakeLive{});
}

TEST_CASE("threads launching one bundle kernel in two contexts at once bind and load each context once") {
  TempDir t;
  const fs::path dir = export_add_sm80(t.path / "b");
  FakeDriver fake;
  FakeGpu::set_devices(2);
  {
    rt::Context a(0, false), b(1, false);
    rt::Bundle bundle = rt::Bundle::open(dir);
    rt::BundleKernel& k = bundle.kernel("add");
    AddArgs args;
    constexpr int kThreads = 4, kLaunches = 200;  // two threads per context, racing to bind and load
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i)
      threads.emplace_back([&, i] {
        (i % 2 == 0 ? a : b).make_current();
        for (int j = 0; j < kLaunches; ++j)
          if (args.try_launch(k) != CUDA_SUCCESS) ++failures;
      });
    for (auto& th : threads) th.join();
    CHECK(failures == 0);
    CHECK(FakeGpu::launches() == kThreads * kLaunches);
    CHECK(FakeGpu::module_loads_in(a.handle()) == 1);
    CHECK(FakeGpu::module_loads_in(b.handle()) == 1);
    int in_a = 0;
    for (const FakeLaunch& l : FakeGpu::launch_log()) {
      in_a += l.ctx == a.handle() ? 1 : 0;
      if (l.module_ctx != l.ctx) FAIL_CHECK("a function of another context was launched");
    }
    CHECK(in_a == kThreads / 2 * kLaunches);
  }
  CHECK(FakeGpu::live() == tessel_test::FakeLive{});
}

TEST_CASE("each context chooses by its own device: one no image runs on is refused naming its sm, the other runs") {
  TempDir t;
  const fs::path dir = export_add_sm80(t.path / "b");
  FakeDriver fake;
  FakeGpu::set_devices(2);
  FakeGpu::set_compute_capability(1, 7, 5);  // older than the bundle's sm_80 PTX
  {
    rt::Context a(0, false), b(1, false);
    rt::Bundle bundle = rt::Bundle::open(dir);
    rt::BundleKernel& k = bundle.kernel("add");
    AddArgs args;
    const int div16 = variant_named(k, "div16");
    b.make_current();
    CHECK(args.variant(k) == div16);  // not bound: among all
    const rt::BundleError e = bundle_error_of([&] { args.launch(k); });
    CHECK(e.code() == CUDA_ERROR_NO_BINARY_FOR_GPU);
    CHECK(contains(e.what(), "bundle kernel 'add': no variant runs on this GPU (sm_75) for these arguments; the "
                             "bundle has: div16 (ptx sm_80)"));
    CHECK(args.variant(k) == -1);  // bound to sm_75: none runs
    a.make_current();
    CHECK(args.variant(k) == div16);
    args.launch(k);
    CHECK(FakeGpu::launches() == 1);
    CHECK(FakeGpu::module_loads_in(b.handle()) == 0);
    b.make_current();
    CHECK(args.try_launch(k) == CUDA_ERROR_NO_BINARY_FOR_GPU);
    CHECK(contains(rt::last_bundle_error(), "(sm_75)"));
  }
  CHECK(FakeGpu::live() == tessel_test::FakeLive{});
}

TEST_CASE("a bundle kernel serves 16 contexts: a 17th is refused by message, the 16 keep running") {
  static_assert(rt::BundleKernel::kMaxContexts == 16);
  TempDir t;
  const fs::path dir = export_add_sm80(t.path / "b");
  FakeDriver fake;
  FakeGpu::set_devices(17);
  {
    std::vector<rt::Context> contexts;
    for (int d = 0; d < 17; ++d) contexts.emplace_back(d, false);
    rt::Bundle bundle = rt::Bundle::open(dir);
    rt::BundleKernel& k = bundle.kernel("add");
    AddArgs args;
    for (int d = 0; d < 16; ++d) {
      contexts[static_cast<size_t>(d)].make_current();
      args.launch(k);
    }
    CHECK(FakeGpu::module_loads() == 16);
    contexts[16].make_current();
    const rt::BundleError e = bundle_error_of([&] { args.launch(k); });
    CHECK(e.code() == CUDA_ERROR_NOT_SUPPORTED);
    CHECK(std::string(e.what()) ==
          "bundle kernel 'add': launched in a 17th CUDA context, but one bundle kernel serves at most 16 contexts "
          "(open the bundle again for more)");
    CHECK(args.try_launch(k) == CUDA_ERROR_NOT_SUPPORTED);  // still refused, and nothing loaded there
    CHECK(FakeGpu::module_loads_in(contexts[16].handle()) == 0);
    CHECK_FALSE(k.loaded(0).has_value());
    // Another bundle serves it.
    rt::Bundle again = rt::Bundle::open(dir);
    args.launch(again.kernel("add"));
    CHECK(FakeGpu::module_loads_in(contexts[16].handle()) == 1);
    for (int d : {0, 15}) {
      contexts[static_cast<size_t>(d)].make_current();
      args.launch(k);
    }
    CHECK(FakeGpu::launches() == 16 + 1 + 2);
    CHECK(FakeGpu::module_loads() == 17);
  }
  CHECK(FakeGpu::unloads_outside_their_context() == 0);
  CHECK(FakeGpu::live() == tessel_test::FakeLive{});
}

TEST_CASE("a launch on a thread with no current context is refused by message, before and after other contexts bound") {
  TempDir t;
  const fs::path dir = export_add_sm80(t.path / "b");
  FakeDriver fake;
  {
    rt::Bundle bundle = rt::Bundle::open(dir);
    rt::BundleKernel& k = bundle.kernel("add");
    AddArgs args;
    const std::string no_context =
        "bundle kernel 'add': no current CUDA context (create a tessel::rt::Context, or make one current with "
        "cuCtxSetCurrent, before launching)";
    rt::BundleError e = bundle_error_of([&] { args.launch(k); });
    CHECK(e.code() == CUDA_ERROR_INVALID_CONTEXT);
    CHECK(std::string(e.what()) == no_context);
    {
      rt::Context a(0);
      args.launch(k);
    }  // releasing A unsets it on this thread
    CHECK(args.try_launch(k) == CUDA_ERROR_INVALID_CONTEXT);
    CHECK(std::string(rt::last_bundle_error()) == no_context);
    CHECK(FakeGpu::launches() == 1);
  }
  CHECK(FakeGpu::live() == tessel_test::FakeLive{});
}
