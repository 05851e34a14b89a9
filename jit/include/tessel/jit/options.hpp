// Options that select a compiled variant of a kernel (beyond its meta-parameters).
#pragma once
#include "tessel/options/compile_options.hpp"

namespace tessel::jit {

// The one options table (tessel/options/compile_options.def): num_warps, num_stages,
// programs_per_cta, warp_specialize, tma, precise_math. lowering::Options explains each.
using CompileOptions = tessel::CompileOptions;

}  // namespace tessel::jit
