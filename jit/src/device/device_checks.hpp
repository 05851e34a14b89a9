// Device-side checks (a loop step <= 0 fails the launch): which a kernel makes, and the error the host reports.
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tessel/ir/ir.hpp"
#include "tessel/runtime/error.hpp"

namespace tessel::jit::detail {

// The checks a kernel's code makes (lowering/src/lower_control.cpp's device_assert): one per
// range() loop whose step is not a positive constant, as
// "k.cpp:12: range(): the loop step must be positive".
struct DeviceChecks {
  std::string kernel;
  std::vector<std::string> checks;
};
// Null when the kernel makes none (its launches then cost nothing more).
std::shared_ptr<const DeviceChecks> device_checks_of(const ir::Function& f);

// The kernels with checks launched since the device last finished its work without an error,
// so the host can name them when the driver reports a failed check. The driver only says that
// some launch failed (at the next synchronising call), not which; a short list of candidates
// is what the host can give.
class LaunchLog {
 public:
  void note(const std::shared_ptr<const DeviceChecks>& c);
  void clear();
  // Throws `e` again, unless it may be a failed device-side check (CUDA_ERROR_ASSERT from
  // __assertfail; CUDA_ERROR_ILLEGAL_INSTRUCTION from the trap after it; CUDA_ERROR_LAUNCH_FAILED
  // from the bare trap of a kernel that issues wgmma) while kernels with checks ran: then a
  // CudaError with the same code and call whose detail names those kernels and their checks,
  // and says that the context is unusable from now on.
  [[noreturn]] void rethrow(const rt::CudaError& e) const;

 private:
  static constexpr size_t kKept = 4;
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<const DeviceChecks>> recent_;  // oldest first, no two alike
};

}  // namespace tessel::jit::detail
