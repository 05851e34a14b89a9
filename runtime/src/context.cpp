// Context: primary-context retain/release and making it current.
#include "tessel/runtime/context.hpp"

#include <utility>

#include "release.hpp"
#include "tessel/runtime/driver.hpp"
#include "tessel/runtime/error.hpp"

namespace tessel::rt {

Context::Context(int ordinal, bool make_current_now) : device_(ordinal) {
  check(cu().DevicePrimaryCtxRetain(&ctx_, device_.handle()), "cuDevicePrimaryCtxRetain");
  try {
    if (make_current_now) make_current();
  } catch (...) {
    release();
    throw;
  }
}

Context::~Context() { release(); }

Context::Context(Context&& other) noexcept
    : device_(other.device_), ctx_(std::exchange(other.ctx_, nullptr)),
      made_current_(std::exchange(other.made_current_, false)) {}

Context& Context::operator=(Context&& other) noexcept {
  if (this != &other) {
    release();
    device_ = other.device_;
    ctx_ = std::exchange(other.ctx_, nullptr);
    made_current_ = std::exchange(other.made_current_, false);
  }
  return *this;
}

void Context::make_current() const {
  check(cu().CtxSetCurrent(ctx_), "cuCtxSetCurrent");
  made_current_ = true;
}

void Context::synchronize() const {
  ScopedContext scope(ctx_);
  check(cu().CtxSynchronize(), "cuCtxSynchronize");
}

ScopedContext::ScopedContext(CUcontext ctx) {
  const DriverApi& api = cu();
  if (api.CtxGetCurrent(&prev_) == CUDA_SUCCESS && prev_ == ctx) return;
  check(api.CtxSetCurrent(ctx), "cuCtxSetCurrent");
  switched_ = true;
}

ScopedContext::~ScopedContext() {
  if (!switched_) return;
  const CUcontext prev = prev_;
  detail::release_call("cuCtxSetCurrent", [&](const DriverApi& api) { return api.CtxSetCurrent(prev); });
}

// Errors are noted, never thrown: a destructor cannot throw, and a failing release means the
// context is already gone.
void Context::release() noexcept {
  if (ctx_ == nullptr) return;
  const CUcontext ctx = std::exchange(ctx_, nullptr);
  const CUdevice dev = device_.handle();
  // Don't leave this thread pointing at a context the release may destroy, when this object
  // made it current; a context the caller made current (a library's, the runtime's) stays.
  if (std::exchange(made_current_, false)) detail::release_call("cuCtxSetCurrent", [&](const DriverApi& api) {
    CUcontext current = nullptr;
    if (api.CtxGetCurrent(&current) != CUDA_SUCCESS || current != ctx) return CUDA_SUCCESS;  // not ours to unset
    return api.CtxSetCurrent(nullptr);
  });
  detail::release_call("cuDevicePrimaryCtxRelease", [&](const DriverApi& api) { return api.DevicePrimaryCtxRelease(dev); });
}

}  // namespace tessel::rt
