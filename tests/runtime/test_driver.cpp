// Driver loading: availability, the reason when absent, and errors instead of crashes.
#include <doctest/doctest.h>

#include <string>

#include "kernels_ptx.hpp"
#include "tessel/runtime/runtime.hpp"

using namespace tessel::rt;

TEST_CASE("Driver::get reports availability consistently") {
  Driver& d = Driver::get();
  CHECK(&d == &Driver::get());  // one process-wide instance
  if (d.available()) {
    CHECK(d.unavailable_reason().empty());
    CHECK(d.init_result() == CUDA_SUCCESS);
    CHECK(d.version() >= 11000);
    MESSAGE("CUDA driver " << d.version() << ", entry points via "
                           << std::string(d.resolved_by_proc_address() ? "cuGetProcAddress" : "dlsym"));
    const DriverApi& api = d.api();
#define TESSEL_CU_FN(name, symbol, version) CHECK_MESSAGE((api.name != nullptr), #symbol);
#include "tessel/runtime/driver_api.def"
#undef TESSEL_CU_FN
  } else {
    const std::string& why = d.unavailable_reason();
    MESSAGE("no CUDA driver here: " << why);
    REQUIRE_FALSE(why.empty());
    // The library (libcuda.so.1, or the one TESSEL_CUDA_LIBRARY names) or cuInit's failure.
    const bool names_cause = why.find("libcuda") != std::string::npos ||
                             why.find("(TESSEL_CUDA_LIBRARY)") != std::string::npos ||
                             why.find("cuInit") != std::string::npos;
    CHECK(names_cause);
    CHECK(d.init_result() != CUDA_SUCCESS);
    CHECK(d.version() == 0);
  }
}

TEST_CASE("without a driver every driver-backed object throws CudaError with the reason") {
  Driver& d = Driver::get();
  if (d.available()) {
    MESSAGE("driver present: the no-driver error paths are not exercised on this machine");
    CHECK_NOTHROW(cu());
    return;
  }
  const std::string& why = d.unavailable_reason();
  auto expect_unavailable = [&](auto&& make, const char* what) {
    INFO(what);
    bool threw = false;
    try {
      make();
    } catch (const CudaError& e) {
      threw = true;
      CHECK(std::string(e.what()).find(why) != std::string::npos);
      CHECK(std::string(e.what()).find("CUDA driver unavailable") != std::string::npos);
      CHECK(e.code() == d.init_result());
      CHECK(e.detail() == why);
    }
    CHECK(threw);
  };
  expect_unavailable([] { Context ctx(0); }, "Context");
  expect_unavailable([] { (void)Device::count(); }, "Device::count");
  expect_unavailable([] { Device dev(0); }, "Device");
  expect_unavailable([] { DeviceBuffer buf(1024); }, "DeviceBuffer");
  expect_unavailable([] { Stream s; }, "Stream");
  expect_unavailable([] { Event e; }, "Event");
  expect_unavailable([] { (void)Module::load_ptx(test::kVaddPtx); }, "Module::load_ptx");
  expect_unavailable([] { Linker l; }, "Linker");
  expect_unavailable([] { (void)cu(); }, "cu()");
}
