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

KernelError::KernelError(const std::string& kernel, const std::string& message)
    : UserError(fmt::format("error in kernel {}: {}", kernel, message)), kernel_(kernel) {}

bool is_tessel_error(const std::exception& e) noexcept {
  return dynamic_cast<const CompileError*>(&e) || dynamic_cast<const ParseError*>(&e) ||
         dynamic_cast<const VerifyError*>(&e) || dynamic_cast<const UserError*>(&e) ||
         dynamic_cast<const InternalError*>(&e);
}

void internal_error(const char* file, int line, const std::string& what) {
  throw InternalError(fmt::format("tessel internal error at {}:{}: {}", file, line, what));
}

}  // namespace tessel
