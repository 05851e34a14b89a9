// The verifier's attribute check: each op's attributes against its TESSEL_ATTR lines in ops.def.
#pragma once
#include <string>

#include "tessel/ir/ir.hpp"

namespace tessel::ir {

// Why op's attributes break its declaration, or "": one it does not declare, a declared one of
// the wrong type, or a required one missing. Value ranges are left to the op's rule.
std::string attr_problem(const Op& op);

}  // namespace tessel::ir
