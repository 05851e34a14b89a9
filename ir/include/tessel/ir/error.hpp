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

// A broken compiler invariant (a tessel bug, not the user's). Thrown, never abort()ed.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void internal_error(const char* file, int line, const std::string& what);

}  // namespace tessel

#define TESSEL_ASSERT(cond, msg)                                                   \
  do {                                                                             \
    if (!(cond)) ::tessel::internal_error(__FILE__, __LINE__, std::string(#cond ": ") + (msg)); \
  } while (0)
