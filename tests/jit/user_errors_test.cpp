// Errors that are the user's or the machine's, not tessel's (issue 23 #12): their types and messages.
#include <doctest/doctest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessel/ir/error.hpp"
#include "tessel/jit/device.hpp"
#include "tessel/lang/trace.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;
using namespace tessel::lang;

namespace {
// What the kernel's own code does under MODE: 1 throws its own std::runtime_error, 2 reads past
// its own std::vector (std::out_of_range, a std::logic_error as tessel's InternalError is), 3
// makes a DSL mistake (a CompileError, which must pass through unchanged).
void own_code_kernel(Ptr<f32> out, const Meta& m) {
  const int64_t mode = m["MODE"];
  if (mode == 1) throw std::runtime_error("the kernel's own check failed");
  const std::vector<float> scales{0.5f, 2.0f};
  const float s = scales.at(mode == 2 ? 9 : 0);
  if (mode == 3) store(out + arange(0, 100), s);  // 100 is not a power of two
  store(out, s);
}

std::string message_of(int mode) {
  TraceOptions opts{"own_code", {"out"}, {}};
  try {
    (void)trace(&own_code_kernel, Meta{{"MODE", mode}}, opts);
  } catch (const KernelError& e) {
    CHECK(e.kernel() == "own_code");
    return std::string("KernelError: ") + e.what();
  } catch (const CompileError& e) {
    return std::string("CompileError: ") + e.what();
  }
  return "no exception";
}
}  // namespace

TEST_CASE("an exception of the kernel's own code while tracing is a KernelError naming the kernel") {
  CHECK(message_of(0) == "no exception");
  CHECK(message_of(1) == "KernelError: error in kernel own_code: the kernel's own check failed");
  const std::string range = message_of(2);
  CHECK_MESSAGE(range.starts_with("KernelError: error in kernel own_code: "), range);
  // tessel's own errors keep their type: a DSL mistake stays a CompileError at the user's line.
  const std::string dsl = message_of(3);
  CHECK_MESSAGE(dsl.starts_with("CompileError: "), dsl);
  CHECK_MESSAGE(dsl.find("power of two") != std::string::npos, dsl);
  // A KernelError is a UserError (the CLI exits 1), never mistaken for tessel's InternalError.
  CHECK(is_tessel_error(KernelError("k", "m")));
  CHECK_FALSE(is_tessel_error(std::out_of_range("vector::at")));
}

TEST_CASE("an interpreter allocation that cannot be made is a UserError naming its size") {
  jit::Device& dev = jit::Device::current();
  if (dev.kind() != jit::BackendKind::Interpreter) {
    MESSAGE("skipped: the device is a GPU (its out of memory is a CudaError, tests/faults)");
    return;
  }
  // SIZE_MAX bytes: refused before any allocator is asked (as the machine would refuse it anyway).
  try {
    jit::Array<char> huge(SIZE_MAX, dev);
    FAIL("an allocation of SIZE_MAX bytes succeeded");
  } catch (const UserError& e) {
    CHECK(std::string(e.what()) ==
          "cannot allocate 18446744073709551615 bytes for an interpreter array: out of host memory (expected a problem "
          "size that fits this machine's memory)");
  }
  jit::Array<float> fine(1000, dev);  // and the device still allocates
  CHECK(fine.size() == 1000);
}
