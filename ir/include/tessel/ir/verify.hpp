// Verifier: checks every op against its rule in ops.def and SSA dominance.
#pragma once
#include "tessel/ir/ir.hpp"

namespace tessel::ir {

// Throws VerifyError at the first broken rule, e.g.
// "verify: op 'mul' (#2 in kernel @scale, result %2, k.cpp:7): rule Arith: operands must have
// the same type, got f32 and f16" (#K: the op's position in print order).
// Attributes are checked against ops.def's TESSEL_ATTR declarations before the rule, e.g.
// "...: attributes: unexpected attribute 'keep_dims': 'reduce_sum' takes only axis (ops.def)".
void verify(const Function& f);

}  // namespace tessel::ir
