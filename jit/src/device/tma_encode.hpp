// Tensor maps at launch: a kernel's recipes (its launch record's, options/launch_spec.hpp)
// encoded on a launch's arguments (rt::encode_tensor_map).
#pragma once
#include <cuda.h>

#include <span>
#include <string_view>

#include "tessel/jit/executable.hpp"
#include "tessel/runtime/tensor_map.hpp"

namespace tessel::jit {

// Fills `out` for `recipe` with the launch's arguments; throws std::invalid_argument naming the
// kernel and the argument when they break TMA's rules (base address or row stride not a
// multiple of 16 bytes) and rt::CudaError when the driver refuses.
void encode_tma_map(CUtensorMap& out, const rt::TensorMapRecipe& recipe, std::span<const RawArg> args,
                    std::string_view kernel);

}  // namespace tessel::jit
