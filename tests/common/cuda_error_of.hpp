// The CudaError a call throws, for fault tests: fails the test when it throws something else or
// nothing.
#pragma once
#include <doctest/doctest.h>

#include <exception>

#include "tessel/runtime/error.hpp"

namespace tessel_test {

template <class Fn>
tessel::rt::CudaError cuda_error_of(Fn&& fn) {
  try {
    fn();
  } catch (const tessel::rt::CudaError& e) {
    return e;
  } catch (const std::exception& e) {
    FAIL("expected CudaError, got: " << e.what());
  }
  FAIL("expected CudaError, nothing was thrown");
  return tessel::rt::CudaError(CUDA_SUCCESS, "");
}

}  // namespace tessel_test
