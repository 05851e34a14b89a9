// Errors shared by every compiler layer: user mistakes and malformed IR.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>

namespace tessel {

// A source position in the user's program (captured with std::source_location).
struct SrcLoc {
  const char* file = "";  // static storage (source_location) or interned by the IR function
  uint32_t line = 0;
  bool known() const { return line != 0; }
};

// A mistake in the user's kernel: what() reads "file:line: error: message".
class CompileError : public std::runtime_error {
 public:
  CompileError(SrcLoc loc, const std::string& message);
  const std::string& file() const { return file_; }
  uint32_t line() const { return line_; }
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  uint32_t line_;
  std::string message_;
};

// A well-formed kernel too large for what the target has (a tile whose share per thread is far
// past a thread's registers): a CompileError at the offending line. The tuner counts a config
// that meets it as pruned, not failed.
class ResourceLimitError : public CompileError {
 public:
  using CompileError::CompileError;
};

// Text IR that does not parse; names the line and column of the text.
class ParseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// IR that breaks an op's rule; names the op and the rule.
class VerifyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The user's input or environment is wrong outside a kernel's source (where CompileError
// applies): a size that does not fit a kernel's i32 offsets, memory that cannot be allocated, a
// file that cannot be written, a malformed tuning database. Not a tessel bug: the CLI prints
// "tessel: error: <what()>" and exits 1. what() names what was wrong and what was expected.
class UserError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A std::exception that is not one of tessel's, thrown by the user's own kernel function while it
// was traced (its own std::runtime_error, a std::out_of_range from its own container): the
// user's code, so a UserError. what() reads "error in kernel <name>: <the exception's what()>".
class KernelError : public UserError {
 public:
  KernelError(const std::string& kernel, const std::string& message);
  const std::string& kernel() const { return kernel_; }

 private:
  std::string kernel_;
};

// A broken compiler invariant (a tessel bug, not the user's). Thrown, never abort()ed.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void internal_error(const char* file, int line, const std::string& what);

// True for tessel's own error types above (CompileError, ParseError, VerifyError, UserError,
// InternalError): what tracing lets through unchanged, where any other exception from the user's
// kernel function becomes a KernelError.
bool is_tessel_error(const std::exception& e) noexcept;

}  // namespace tessel

#define TESSEL_ASSERT(cond, msg)                                                   \
  do {                                                                             \
    if (!(cond)) ::tessel::internal_error(__FILE__, __LINE__, std::string(#cond ": ") + (msg)); \
  } while (0)
