// The cold path of launch(): a CudaError naming the kernel and its launch shape.
#include "tessel/runtime/launch.hpp"

#include <fmt/format.h>

#include "tessel/runtime/error.hpp"

namespace tessel::rt {

void throw_launch_error(CUresult code, const Function& fn, Dim3 grid, Dim3 block,
                        unsigned shared_bytes) {
  throw CudaError(code, "cuLaunchKernel",
                  fmt::format("kernel {} grid ({}, {}, {}) block ({}, {}, {}) dynamic shared {} bytes",
                              fn.name(), grid.x, grid.y, grid.z, block.x, block.y, block.z,
                              shared_bytes));
}

}  // namespace tessel::rt
