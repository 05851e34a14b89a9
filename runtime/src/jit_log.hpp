// JitLog (internal): the option arrays that capture the driver JIT/linker logs.
#pragma once
#include <cuda.h>

#include <array>
#include <string>
#include <vector>

namespace tessel::rt::detail {

// Option/value arrays for cuModuleLoadDataEx and cuLinkCreate asking for the info and
// error logs. The driver writes into the buffers (and back into the size slots), so a
// JitLog must not move while a call or a CUlinkState uses it.
class JitLog {
 public:
  explicit JitLog(bool verbose);
  JitLog(const JitLog&) = delete;
  JitLog& operator=(const JitLog&) = delete;

  unsigned count() const { return count_; }
  CUjit_option* options() { return options_.data(); }
  void** values() { return values_.data(); }

  std::string info() const { return text(info_); }
  std::string error() const { return text(error_); }
  // "JIT log: <error log>" (or a note that it is empty), for CudaError's detail.
  std::string error_detail(const char* label) const;

 private:
  static std::string text(const std::vector<char>& buf);
  static constexpr size_t kLogBytes = 64 * 1024;
  std::vector<char> info_, error_;
  std::array<CUjit_option, 5> options_{};
  std::array<void*, 5> values_{};
  unsigned count_ = 0;
};

}  // namespace tessel::rt::detail
