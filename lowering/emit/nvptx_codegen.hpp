// LLVM's NVPTX backend: target machines, the O-level pipeline and PTX emission.
#pragma once
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <memory>
#include <string>

#include "tessel/lowering/compile.hpp"

namespace tessel::lowering {

// Initialises the NVPTX target once per process (thread-safe).
void init_nvptx();
std::unique_ptr<llvm::TargetMachine> make_target_machine(const Options& o);
// Sets the module's data layout and triple for `tm`, then runs LLVM's default pipeline at
// o.opt_level (new pass manager, with NVPTX's own passes registered).
void optimize(llvm::Module& m, llvm::TargetMachine& tm, int opt_level);
std::string emit_ptx(llvm::Module& m, llvm::TargetMachine& tm);

}  // namespace tessel::lowering
