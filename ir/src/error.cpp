// Error types shared across the compiler.
#include "tessel/ir/error.hpp"

#include <fmt/format.h>

namespace tessel {

static std::string format_compile_error(SrcLoc loc, const std::string& message) {
  if (!loc.known()) return "error: " + message;
  return fmt::format("{}:{}: error: {}", loc.file, loc.line, message);
}

CompileError::CompileError(SrcLoc loc, const std::string& message)
    : std::runtime_error(format_compile_error(loc, message)),
      file_(loc.file ? loc.file : ""),
      line_(loc.line),
      message_(message) {}

void internal_error(const char* file, int line, const std::string& what) {
  throw InternalError(fmt::format("tessel internal error at {}:{}: {}", file, line, what));
}

}  // namespace tessel
