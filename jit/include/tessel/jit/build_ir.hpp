// The front half of compilation: verify traced IR and run the generic passes on it.
#pragma once
#include <memory>

#include "tessel/ir/ir.hpp"

namespace tessel::jit {

// Verifies `f` as traced, runs ir::default_passes() (dumping after each when
// TESSEL_DUMP_IR=1) and returns it. A VerifyError here is a tessel bug: the DSL
// should have rejected the program with a CompileError.
std::unique_ptr<ir::Function> finish_ir(std::unique_ptr<ir::Function> f);

}  // namespace tessel::jit
