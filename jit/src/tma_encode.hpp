// Tensor maps at launch: a kernel's ir::TmaMap recipes evaluated on its arguments and
// encoded by the driver (cuTensorMapEncodeTiled).
#pragma once
#include <cuda.h>

#include <span>
#include <string_view>

#include "tessel/jit/executable.hpp"
#include "tessel/ir/tma_map.hpp"

namespace tessel::jit {

// Fills `out` for `map` with the launch's arguments; throws std::invalid_argument naming the
// kernel and the argument when they break TMA's rules (base address or row stride not a
// multiple of 16 bytes, an extent outside 1 .. 2^32) and rt::CudaError when the driver refuses.
void encode_tma_map(CUtensorMap& out, const ir::TmaMap& map, std::span<const RawArg> args,
                    std::string_view kernel);

}  // namespace tessel::jit
