// Parser for the printer's text form (printer.hpp has the grammar).
#pragma once
#include <memory>
#include <string_view>

#include "tessel/ir/ir.hpp"

namespace tessel::ir {

// Parses one kernel. Throws ParseError("line L, column C: expected ..., got ...").
// The result is not verified; call verify() on it.
std::unique_ptr<Function> parse(std::string_view text);

}  // namespace tessel::ir
