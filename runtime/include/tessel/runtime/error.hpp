// CudaError and check(): every driver failure carries its CUresult, name and call.
#pragma once
#include <cuda.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace tessel::rt {

// A failed driver call. what() reads
//   "<call> failed: <CUDA_ERROR_NAME> (<driver's description>)[ — <detail>]"
// e.g. "cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (a PTX JIT compilation
// failed) — JIT log: ptxas application ptx input, line 9; error ...".
// A missing driver reads "CUDA driver unavailable: <reason>".
class CudaError : public std::runtime_error {
 public:
  CudaError(CUresult code, std::string call, std::string detail = {});

  // The error every driver-backed object throws when libcuda is absent or cuInit failed.
  static CudaError unavailable(CUresult code, const std::string& reason);

  CUresult code() const { return code_; }
  const std::string& call() const { return call_; }      // e.g. "cuMemAlloc"
  const std::string& name() const { return name_; }      // e.g. "CUDA_ERROR_OUT_OF_MEMORY"
  const std::string& detail() const { return detail_; }  // JIT log, sizes, ...; may be empty

 private:
  CudaError(CUresult code, std::string call, std::string detail, std::string message);
  CUresult code_;
  std::string call_;
  std::string name_;
  std::string detail_;
};

// The CUresult's enumerator name from tessel's own table ("CUDA_ERROR_NO_DEVICE"), or
// nullptr for a code the table does not know. Pure: needs no driver.
const char* builtin_result_name(CUresult code);

// The best name for a code: the driver's cuGetErrorName when a driver is loaded,
// else builtin_result_name, else "CUresult(<number>)".
std::string error_name(CUresult code);

// The driver's one-line description (cuGetErrorString), or "" without a driver.
std::string error_description(CUresult code);

// A driver call that failed while releasing a resource (cuMemFree, cuModuleUnload, ... in a
// destructor), which must not throw: the failure is counted, and the first one of each call is
// said once on stderr ("tessel: cuMemFree failed while releasing a resource: ..."). A driver that
// is shutting down (CUDA_ERROR_DEINITIALIZED, at process exit) is counted but not said.
// Never throws.
void note_release_failure(CUresult code, const char* call) noexcept;

// The release failures noted so far in this process, and the last one (diagnostics, tests).
struct ReleaseFailures {
  uint64_t count = 0;
  CUresult last_code = CUDA_SUCCESS;
  const char* last_call = nullptr;  // a string literal (the call's name), or nullptr
};
ReleaseFailures release_failures() noexcept;

// Cold path of check(): builds the message and throws.
[[noreturn]] void throw_cuda_error(CUresult code, const char* call);

// Every driver call goes through check(); success costs one compare.
inline void check(CUresult code, const char* call) {
  if (code != CUDA_SUCCESS) [[unlikely]]
    throw_cuda_error(code, call);
}

}  // namespace tessel::rt
