// Context: primary-context retain/release and making it current.
#include "tessel/runtime/context.hpp"

#include <utility>

#include "tessel/runtime/driver.hpp"
#include "tessel/runtime/error.hpp"

namespace tessel::rt {

Context::Context(int ordinal) : device_(ordinal) {
  check(cu().DevicePrimaryCtxRetain(&ctx_, device_.handle()), "cuDevicePrimaryCtxRetain");
  try {
    make_current();
  } catch (...) {
    release();
    throw;
  }
}

Context::~Context() { release(); }

Context::Context(Context&& other) noexcept
    : device_(other.device_), ctx_(std::exchange(other.ctx_, nullptr)) {}

Context& Context::operator=(Context&& other) noexcept {
  if (this != &other) {
    release();
    device_ = other.device_;
    ctx_ = std::exchange(other.ctx_, nullptr);
  }
  return *this;
}

void Context::make_current() const { check(cu().CtxSetCurrent(ctx_), "cuCtxSetCurrent"); }

void Context::synchronize() const {
  make_current();
  check(cu().CtxSynchronize(), "cuCtxSynchronize");
}

// Errors are ignored here: a destructor cannot throw, and a failing release means the
// context is already gone. ctx_ is only non-null if the driver was available.
void Context::release() noexcept {
  if (ctx_ == nullptr) return;
  const DriverApi& api = Driver::get().api();
  // Don't leave this thread pointing at a context the release may destroy.
  CUcontext current = nullptr;
  if (api.CtxGetCurrent(&current) == CUDA_SUCCESS && current == ctx_) api.CtxSetCurrent(nullptr);
  api.DevicePrimaryCtxRelease(device_.handle());
  ctx_ = nullptr;
}

}  // namespace tessel::rt
