// NVIDIA's libdevice (CUDA's math library as LLVM bitcode): calls to it while lowering, and
// linking it into a module that makes them.
#pragma once
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <string>
#include <vector>

namespace tessel::lowering {

// A call of libdevice function `name` (float(float) or double(double), as x's type), declared in
// `m` on first use.
llvm::Value* call_libdevice(llvm::Module& m, llvm::IRBuilder<>& b, const char* name, llvm::Value* x);

// Where libdevice.10.bc is looked for: $TESSEL_LIBDEVICE (the file itself) alone when set, else
// $CUDA_HOME/nvvm/libdevice/libdevice.10.bc, then /usr/local/cuda/nvvm/libdevice/libdevice.10.bc.
std::vector<std::string> libdevice_candidates();

// The first candidate that is a file; a CompileError naming every path searched when none is.
std::string find_libdevice();

// When `m` calls libdevice functions: links in just those (and what they call) from libdevice
// and makes them internal, so the optimiser inlines them and drops the rest. A module without
// such calls is left alone and never reads the file (other kernels compile as fast as before).
void link_libdevice(llvm::Module& m);

}  // namespace tessel::lowering
