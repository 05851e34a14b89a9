// launch(): the hot path, one checked cuLaunchKernel through the cached table.
#pragma once
#include <cuda.h>

#include "tessel/runtime/driver.hpp"
#include "tessel/runtime/function.hpp"

namespace tessel::rt {

// Grid or block extents; unnamed dimensions are 1, so Dim3{n} is a 1-D shape.
struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

// Cold path: names the kernel and the launch shape in the CudaError it throws.
[[noreturn]] void throw_launch_error(CUresult code, const Function& fn, Dim3 grid, Dim3 block,
                                     unsigned shared_bytes);

// Launches fn. params points at one pointer per kernel parameter, each pointing at the
// argument's value (cuLaunchKernel's convention). Allocates nothing and builds no
// strings unless the launch fails.
inline void launch(const Function& fn, Dim3 grid, Dim3 block, unsigned shared_bytes,
                   CUstream stream, void** params) {
  CUresult r = fn.api().LaunchKernel(fn.handle(), grid.x, grid.y, grid.z, block.x, block.y,
                                     block.z, shared_bytes, stream, params, nullptr);
  if (r != CUDA_SUCCESS) [[unlikely]]
    throw_launch_error(r, fn, grid, block, shared_bytes);
}

}  // namespace tessel::rt
