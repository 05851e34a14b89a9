// The GPU architectures this build compiles for, for tools that take an --arch (the lowering's
// one table, lowering::known_targets(), seen from outside the lowering).
#pragma once
#include <string>
#include <vector>

namespace tessel::jit {

// "sm_80", ..., "sm_90a", oldest first; empty in a build without the LLVM lowering.
std::vector<std::string> known_archs();
// "sm_80, sm_86, sm_87, sm_89, sm_90 or sm_90a", for messages ("none" without the lowering).
std::string known_archs_text();

}  // namespace tessel::jit
