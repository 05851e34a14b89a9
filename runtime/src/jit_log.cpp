// JitLog: log buffers and option arrays for the driver's JIT and linker.
#include "jit_log.hpp"

#include <cstdint>
#include <cstring>

namespace tessel::rt::detail {

JitLog::JitLog(bool verbose) : info_(kLogBytes, '\0'), error_(kLogBytes, '\0') {
  // Option values are passed by value in the void* slot, as the driver API specifies.
  auto add = [&](CUjit_option opt, void* value) {
    options_[count_] = opt;
    values_[count_] = value;
    ++count_;
  };
  add(CU_JIT_INFO_LOG_BUFFER, info_.data());
  add(CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, reinterpret_cast<void*>(static_cast<uintptr_t>(kLogBytes)));
  add(CU_JIT_ERROR_LOG_BUFFER, error_.data());
  add(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, reinterpret_cast<void*>(static_cast<uintptr_t>(kLogBytes)));
  add(CU_JIT_LOG_VERBOSE, reinterpret_cast<void*>(static_cast<uintptr_t>(verbose ? 1 : 0)));
}

// The size slots are rewritten by the driver; strnlen is the bound we trust.
std::string JitLog::text(const std::vector<char>& buf) {
  std::string s(buf.data(), strnlen(buf.data(), buf.size()));
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string JitLog::error_detail(const char* label) const {
  std::string log = error();
  return std::string(label) + (log.empty() ? std::string(" (empty)") : ": " + log);
}

}  // namespace tessel::rt::detail
