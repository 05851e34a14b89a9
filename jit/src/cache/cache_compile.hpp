// Lowering a kernel into a cache entry (only in builds with the LLVM lowering).
#pragma once
#ifdef TESSEL_HAS_LOWERING
#include "tessel/jit/cache.hpp"
#include "tessel/lowering/compile.hpp"

namespace tessel::jit::cache {

// The key inputs the GPU path uses for `target`.
KeyInputs gpu_key_inputs(const ir::Function& f, const CompileOptions& opts, const lowering::Target& target);

// Runs the lowering and fills tir, LLVM IR, PTX and the metadata (no cubin, no registers yet).
Entry lower_to_entry(const ir::Function& f, const CompileOptions& opts, const lowering::Target& target);

}  // namespace tessel::jit::cache
#endif
