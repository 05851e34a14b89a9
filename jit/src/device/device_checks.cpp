// Device-side checks: the list a kernel makes, and naming them when the driver reports a failed one.
#include "device_checks.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "tessel/ir/accessors.hpp"

namespace tessel::jit::detail {

std::shared_ptr<const DeviceChecks> device_checks_of(const ir::Function& f) {
  auto out = std::make_shared<DeviceChecks>();
  out->kernel = f.name;
  ir::walk(f.body, [&](const ir::Op& op) {
    if (op.kind != ir::OpKind::For) return;
    // The lowering folds the check away for a positive constant step (literals, and Int
    // parameters specialised equal1 are constants only in the lowering: listing those too
    // is harmless, the list names candidates).
    const ir::Value* step = ir::ForOp{op}.step();
    if (step->def && step->def->kind == ir::OpKind::Constant && ir::ConstantOp{*step->def}.int_value() > 0) return;
    const std::string where = op.loc.known() ? fmt::format("{}:{}: ", op.loc.file, op.loc.line) : std::string();
    out->checks.push_back(where + "range(): the loop step must be positive");
  });
  if (out->checks.empty()) return nullptr;
  return out;
}

void LaunchLog::note(const std::shared_ptr<const DeviceChecks>& c) {
  std::lock_guard lock(mu_);
  auto it = std::find(recent_.begin(), recent_.end(), c);
  if (it != recent_.end()) recent_.erase(it);
  recent_.push_back(c);
  if (recent_.size() > kKept) recent_.erase(recent_.begin());
}

void LaunchLog::clear() {
  std::lock_guard lock(mu_);
  recent_.clear();
}

void LaunchLog::rethrow(const rt::CudaError& e) const {
  // A failed check calls __assertfail (CUDA_ERROR_ASSERT; the trap after it:
  // CUDA_ERROR_ILLEGAL_INSTRUCTION), or, in a kernel that issues wgmma, traps alone
  // (CUDA_ERROR_LAUNCH_FAILED, which other device exceptions raise too).
  const bool trapped = e.code() == CUDA_ERROR_LAUNCH_FAILED;
  if (e.code() != CUDA_ERROR_ASSERT && e.code() != CUDA_ERROR_ILLEGAL_INSTRUCTION && !trapped) throw e;
  std::vector<std::shared_ptr<const DeviceChecks>> recent;
  {
    std::lock_guard lock(mu_);
    recent = recent_;
  }
  if (recent.empty()) throw e;
  std::string detail;
  if (trapped)
    detail = recent.size() == 1 ? fmt::format("kernel '{}' stopped on the device: a failed device-side check traps "
                                              "so (other device exceptions report the same error)",
                                              recent[0]->kernel)
                                : "a kernel launched last stopped on the device: a failed device-side check traps so "
                                  "(other device exceptions report the same error)";
  else
    detail = recent.size() == 1 ? fmt::format("kernel '{}' failed a device-side check", recent[0]->kernel)
                                : "a device-side check failed in one of the kernels launched last";
  for (auto it = recent.rbegin(); it != recent.rend(); ++it)
    for (const std::string& c : (*it)->checks) detail += fmt::format("\n  kernel '{}': {}", (*it)->kernel, c);
  detail += "\n  (the CUDA context is unusable after this error: every later GPU call in this process fails)";
  if (!e.detail().empty()) detail += "\n  " + e.detail();
  throw rt::CudaError(e.code(), e.call(), detail);
}

}  // namespace tessel::jit::detail
