// Context: a device's primary context, retained for the object's lifetime.
#pragma once
#include <cuda.h>

#include "tessel/runtime/device.hpp"

namespace tessel::rt {

// Retains the device's primary context (the one the CUDA runtime and other libraries
// share) and makes it current on the constructing thread. Other threads that use it
// call make_current() first. Movable, not copyable.
class Context {
 public:
  explicit Context(int ordinal = 0);
  ~Context();
  Context(Context&& other) noexcept;
  Context& operator=(Context&& other) noexcept;
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  void make_current() const;
  void synchronize() const;  // cuCtxSynchronize on this context

  CUcontext handle() const { return ctx_; }
  const Device& device() const { return device_; }

 private:
  void release() noexcept;
  Device device_;
  CUcontext ctx_ = nullptr;
};

}  // namespace tessel::rt
