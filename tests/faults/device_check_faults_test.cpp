// A failed device-side check (the driver's CUDA_ERROR_ASSERT after a loop step <= 0) as the JIT's GPU backend reports it, on the fake driver: the error names the kernels with checks launched since the last good synchronisation and their loops' file:line.
//
// This executable's Device is the GPU backend over the fake driver (test_device_faults.cpp
// installs it before main). The fake runs no kernel; DriverFaults makes the synchronising call
// return what the real driver returns after __assertfail.
#include <doctest/doctest.h>

#include <string>

#include "../common/fake_driver.hpp"
#include "tessel/runtime/error.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;
using namespace tessel::lang;
using tessel_test::DriverFaults;
using Api = tessel::rt::DriverApi;

namespace {

int g_loop_line = 0;

void step_sum_kernel(Ptr<i32> out, Int n, Int step, const Meta&) {
  Var acc(0);
  g_loop_line = __LINE__; for (auto i : range(0, n, step)) acc += i;
  store(out, acc);
}

void no_check_kernel(Ptr<i32> out, Int n, Int step, const Meta&) {
  Var acc(0);
  for (auto i : range(0, n, 2)) acc += i;  // a constant step: no device-side check
  store(out, acc + step);
}

using StepKernel = jit::Kernel<Ptr<i32>, Int, Int, const Meta&>;

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// What `fn` throws as a CudaError ("" and a failure when it throws nothing, or something else).
template <class Fn>
std::string cuda_error_text(Fn&& fn, CUresult want) {
  try {
    fn();
  } catch (const rt::CudaError& e) {
    CHECK(e.code() == want);
    return e.what();
  } catch (const std::exception& e) {
    FAIL("expected a CudaError, got: " << e.what());
  }
  FAIL("expected a CudaError, nothing was thrown");
  return "";
}

}  // namespace

TEST_CASE("fake GPU: a failed device-side check names the kernel and its loop's file:line at the next synchronising call") {
  REQUIRE(jit::Device::current().kind() == jit::BackendKind::Cuda);  // the fake, installed before main
  StepKernel k_step{"checked_step_sum", &step_sum_kernel, {"out", "n", "step"}};
  StepKernel k_plain{"unchecked_sum", &no_check_kernel, {"out", "n", "step"}};
  jit::Array<int32_t> out(1);
  jit::Device::current().synchronize();  // nothing launched yet: a clean start
  k_step(jit::Grid{2}, {}, out, 1000, 0);  // the real GPU would fail its check here (step 0)
  REQUIRE(g_loop_line > 0);
  const std::string check = "device_check_faults_test.cpp:" + std::to_string(g_loop_line) +
                            ": range(): the loop step must be positive";
  {
    DriverFaults faults;
    faults.fail<&Api::CtxSynchronize>(CUDA_ERROR_ASSERT);
    const std::string text = cuda_error_text([] { jit::Device::current().synchronize(); }, CUDA_ERROR_ASSERT);
    INFO(text);
    CHECK(has(text, "cuCtxSynchronize failed: CUDA_ERROR_ASSERT"));
    CHECK(has(text, "kernel 'checked_step_sum' failed a device-side check"));
    CHECK(has(text, check));
    CHECK(has(text, "the CUDA context is unusable after this error"));
  }
  {
    // The error is sticky on a real GPU: a download after it names the same kernel.
    DriverFaults faults;
    faults.fail<&Api::MemcpyDtoH>(CUDA_ERROR_ASSERT);
    const std::string text = cuda_error_text([&] { out.download(); }, CUDA_ERROR_ASSERT);
    INFO(text);
    CHECK(has(text, "cuMemcpyDtoH failed: CUDA_ERROR_ASSERT"));
    CHECK(has(text, check));
  }
  {
    // So does the next launch (cuLaunchKernel returns the sticky error), and the trap that
    // follows __assertfail (CUDA_ERROR_ILLEGAL_INSTRUCTION) is named the same way.
    DriverFaults faults;
    faults.fail<&Api::LaunchKernel>(CUDA_ERROR_ILLEGAL_INSTRUCTION);
    const std::string text =
        cuda_error_text([&] { k_plain(jit::Grid{1}, {}, out, 10, 3); }, CUDA_ERROR_ILLEGAL_INSTRUCTION);
    INFO(text);
    CHECK(has(text, "cuLaunchKernel failed: CUDA_ERROR_ILLEGAL_INSTRUCTION"));
    CHECK(has(text, check));
    CHECK_FALSE(has(text, "kernel 'unchecked_sum'"));  // it makes no check: not a candidate
  }
  {
    // Faults that are not a failed check are reported as they are.
    DriverFaults faults;
    faults.fail<&Api::CtxSynchronize>(CUDA_ERROR_ILLEGAL_ADDRESS);
    const std::string text = cuda_error_text([] { jit::Device::current().synchronize(); }, CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK_FALSE(has(text, "device-side check"));
  }
  // A synchronisation that succeeds shows those launches were fine: a later failure, after a
  // launch of a kernel without checks only, names nobody.
  jit::Device::current().synchronize();
  k_plain(jit::Grid{1}, {}, out, 10, 3);
  {
    DriverFaults faults;
    faults.fail<&Api::CtxSynchronize>(CUDA_ERROR_ASSERT);
    const std::string text = cuda_error_text([] { jit::Device::current().synchronize(); }, CUDA_ERROR_ASSERT);
    INFO(text);
    CHECK_FALSE(has(text, "device-side check"));
  }
  // A successful download clears them too.
  k_step(jit::Grid{1}, {}, out, 1000, 5);
  (void)out.download();
  {
    DriverFaults faults;
    faults.fail<&Api::CtxSynchronize>(CUDA_ERROR_ASSERT);
    const std::string text = cuda_error_text([] { jit::Device::current().synchronize(); }, CUDA_ERROR_ASSERT);
    CHECK_FALSE(has(text, "checked_step_sum"));
  }
  jit::Device::current().synchronize();
}
