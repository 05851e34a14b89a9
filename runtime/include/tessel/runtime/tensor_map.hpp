// Tensor maps at launch: recipes over a kernel's own arguments, encoded by the driver
// (cuTensorMapEncodeTiled) and passed after those arguments. Kernels whose producer warps copy
// by TMA (warp_specialize with tma, sm_90a) take one per TMA-copied operand; the JIT and the
// bundle runtime both build them with the functions here.
#pragma once
#include <cuda.h>

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "tessel/options/launch_spec.hpp"
#include "tessel/runtime/tensor_map_cache.hpp"

namespace tessel::rt {

// The recipe types live with the launch record (options/launch_spec.hpp), one type from the
// lowering's plan to the driver call; the runtime names them here as before.
using TensorMapTerm = tessel::TensorMapTerm;
using TensorMapPoly = tessel::TensorMapPoly;
using TensorMapViewDim = tessel::TensorMapViewDim;
using TensorMapRecipe = tessel::TensorMapRecipe;
using tessel::evaluate;

// `ints`: every kernel argument as an integer (0 for pointers and floats); `base`: the address
// argument base_param holds. Throws std::invalid_argument naming `kernel` when the arguments
// break TMA's rules (base address or row stride not a multiple of 16 bytes).
TensorMapShape tensor_map_shape(const TensorMapRecipe& r, std::span<const int64_t> ints, uint64_t base,
                                std::string_view kernel);
// tensor_map_shape, then the driver (or this thread's TensorMapCache, when the same map was
// encoded before); rt::CudaError when the driver refuses.
void encode_tensor_map(CUtensorMap& out, const TensorMapRecipe& r, std::span<const int64_t> ints, uint64_t base,
                       std::string_view kernel);

}  // namespace tessel::rt
