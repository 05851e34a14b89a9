// CudaError's message formatting; error names from the driver or tessel's table.
#include "tessel/runtime/error.hpp"

#include <fmt/format.h>

#include <mutex>
#include <set>
#include <string_view>

#include "tessel/runtime/driver.hpp"
#include "tessel/runtime/log.hpp"

namespace tessel::rt {

std::string error_name(CUresult code) {
  const char* name = nullptr;
  auto fn = Driver::get().error_name_fn();
  if (fn == nullptr || fn(code, &name) != CUDA_SUCCESS || name == nullptr)
    name = builtin_result_name(code);
  return name ? std::string(name) : fmt::format("CUresult({})", static_cast<int>(code));
}

std::string error_description(CUresult code) {
  const char* text = nullptr;
  auto fn = Driver::get().error_string_fn();
  if (fn == nullptr || fn(code, &text) != CUDA_SUCCESS || text == nullptr) return {};
  return text;
}

static std::string format_message(const std::string& call, const std::string& name,
                                  const std::string& description, const std::string& detail) {
  std::string msg = fmt::format("{} failed: {}", call, name);
  if (!description.empty()) msg += fmt::format(" ({})", description);
  if (!detail.empty()) msg += " — " + detail;
  return msg;
}

CudaError::CudaError(CUresult code, std::string call, std::string detail)
    : CudaError(code, call, detail,
                format_message(call, error_name(code), error_description(code), detail)) {}

CudaError::CudaError(CUresult code, std::string call, std::string detail, std::string message)
    : std::runtime_error(message),
      code_(code),
      call_(std::move(call)),
      name_(error_name(code)),
      detail_(std::move(detail)) {}

CudaError CudaError::unavailable(CUresult code, const std::string& reason) {
  return CudaError(code, "cuInit", reason, "CUDA driver unavailable: " + reason);
}

void throw_cuda_error(CUresult code, const char* call) { throw CudaError(code, call); }

namespace {
// Never destroyed: buffers and modules held in static objects are released during static
// destruction, possibly after this file's objects would have been destroyed.
struct ReleaseLog {
  std::mutex mu;
  ReleaseFailures failures;
  std::set<std::string_view> said;  // calls already reported through the log (string literals)
};
ReleaseLog& release_log() {
  static ReleaseLog* log = new ReleaseLog;
  return *log;
}
}  // namespace

void note_release_failure(CUresult code, const char* call) noexcept {
  try {
    ReleaseLog& log = release_log();
    {
      std::lock_guard lock(log.mu);
      ++log.failures.count;
      log.failures.last_code = code;
      log.failures.last_call = call;
      if (code == CUDA_ERROR_DEINITIALIZED || !log.said.insert(call).second) return;
    }
    // Outside the lock: a sink may ask for release_failures().
    rt::log(LogLevel::Warn, fmt::format("{} failed while releasing a resource: {} (ignored; later {} failures not shown)",
                                        call, error_name(code), call));
  } catch (...) {
    // Out of memory while reporting: the count above is kept, the message is best effort.
  }
}

ReleaseFailures release_failures() noexcept {
  try {
    ReleaseLog& log = release_log();
    std::lock_guard lock(log.mu);
    return log.failures;
  } catch (...) {
    return {};
  }
}

}  // namespace tessel::rt
