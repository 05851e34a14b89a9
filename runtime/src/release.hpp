// release_call: a driver call that frees a handle, made from code that must not throw (destructors).
#pragma once
#include <cuda.h>

#include "tessel/runtime/driver.hpp"
#include "tessel/runtime/error.hpp"

namespace tessel::rt::detail {

// Runs call(api) on the installed driver table and notes a failure (note_release_failure) instead
// of throwing: after a sticky GPU fault every free fails, and a throwing destructor would
// terminate the process. Without a usable driver the handle cannot be released; that is noted too.
template <class Call>
void release_call(const char* name, Call&& call) noexcept {
  const DriverApi* api = Driver::get().api_if_available();
  const CUresult r = api != nullptr ? call(*api) : CUDA_ERROR_NOT_INITIALIZED;
  if (r != CUDA_SUCCESS) note_release_failure(r, name);
}

}  // namespace tessel::rt::detail
