// Verifier: checks every op against its rule in ops.def and SSA dominance.
#pragma once
#include "tessel/ir/ir.hpp"

namespace tessel::ir {

// Throws VerifyError("verify: op 'add' (result %N, file:line): <rule>: <what is wrong>")
// at the first broken rule.
void verify(const Function& f);

}  // namespace tessel::ir
