// A cubin's SASS (the GPU's own instructions), by the CUDA toolkit's disassembler.
#pragma once
#include <string>
#include <vector>

namespace tessel::jit {

// nvdisasm, else cuobjdump -sass, found as ptxas is (tessel::rt::find_cuda_tool); "" for neither.
std::string find_disassembler();

// find_disassembler(), or UserError (the environment, not tessel) naming both tools and where
// they were looked for when neither is found.
std::string require_disassembler();

// The SASS of `cubin` as the disassembler prints it. Throws require_disassembler()'s UserError,
// and a UserError with the tool's output when it fails or runs past a minute.
std::string disassemble(const std::vector<char>& cubin);

}  // namespace tessel::jit
