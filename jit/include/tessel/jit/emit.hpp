// The text of one compilation stage of a kernel (for the CLI and dumps).
#pragma once
#include <string>
#include <string_view>

#include "tessel/ir/ir.hpp"
#include "tessel/jit/options.hpp"

namespace tessel::jit {

enum class Stage { TileIR, Plan, LlvmIR, Ptx };

// "tir" | "plan" | "llir" | "ptx"; std::invalid_argument otherwise.
Stage parse_stage(std::string_view s);

// Prints `f` (already through the IR passes) at `stage` for `arch` ("sm_80", "sm_90", "sm_90a").
// The plan, LLVM IR and PTX need the lowering: without it (TESSEL_WITH_LLVM=OFF) this throws
// std::runtime_error saying so.
std::string emit(const ir::Function& f, Stage stage, std::string_view arch, const CompileOptions& opts);

// Whether this build can lower to LLVM IR and PTX.
bool has_lowering();

}  // namespace tessel::jit
