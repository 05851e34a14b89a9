// Deterministic text form of the tile IR (parser.hpp reads it back).
#pragma once
#include <string>
#include <unordered_map>

#include "tessel/ir/ir.hpp"

namespace tessel::ir {

struct PrintOptions {
  bool locs = false;  // append loc("file":line) to ops that carry a source location
};

// Grammar (one op per line, regions indented two more spaces):
//   kernel @NAME(%p: TYPE [{div16, equal1}], ...) {
//     [%r[, %r...] =] OPNAME [%a, %b, ...] [{key = val, ...}] [: TYPE[, TYPE...]] [loc("f":N)]
//     %r, ... = for %lo, %hi, %step[, %init...] [: TYPES] {
//     ^(%iv: i32[, %c: TYPE...]):
//       ...
//       yield [%v, ...]
//     }
//     %r = reduce %x {axis = N} : TYPE {      (the generic reduce: same region syntax)
//     ^(%acc: T, %elem: T):
//       ...
//       yield %combined
//     }
//   }
// TYPE is `f32`, `ptr<f16>`, `i32[128]`, `ptr<f32>[64,64]`. Integer attributes print as
// integers; float attributes always carry '.', 'e', inf or nan so they parse back as floats.
// Parameters print by name; every other value is renumbered %0, %1, ... in print order.
std::string print(const Function& f, PrintOptions opts = {});
// Each value's name as print() writes it ("%x" for parameter x, "%12"): for other printouts
// (the kernel plan) that refer to the printed IR.
std::unordered_map<const Value*, std::string> value_names(const Function& f);
std::string format_attr_value(const std::variant<int64_t, double>& v);

}  // namespace tessel::ir
