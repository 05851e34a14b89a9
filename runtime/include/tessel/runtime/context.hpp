// Context: a device's primary context, retained for the object's lifetime.
#pragma once
#include <cuda.h>

#include "tessel/runtime/device.hpp"

namespace tessel::rt {

// Retains the device's primary context (the one the CUDA runtime and other libraries
// share) and, unless asked not to, makes it current on the constructing thread. Other threads
// that use it call make_current() first (or hold a ScopedContext). A Context that made itself
// current (here or by make_current) unsets it on release when it is still current on the
// releasing thread; one that never did leaves the thread's current context alone. Movable, not
// copyable.
class Context {
 public:
  explicit Context(int ordinal = 0, bool make_current = true);
  ~Context();
  Context(Context&& other) noexcept;
  Context& operator=(Context&& other) noexcept;
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  void make_current() const;
  // cuCtxSynchronize on this context; the calling thread's current context is left as it was.
  void synchronize() const;

  CUcontext handle() const { return ctx_; }
  const Device& device() const { return device_; }

 private:
  void release() noexcept;
  Device device_;
  CUcontext ctx_ = nullptr;
  mutable bool made_current_ = false;  // set by make_current: release then unsets what it set
};

// Makes `ctx` current on the calling thread for the object's lifetime and then puts back the
// context that was current before (a library call must not change its caller's CUDA state).
// Costs one cuCtxGetCurrent when `ctx` is already current. Not movable.
class ScopedContext {
 public:
  explicit ScopedContext(CUcontext ctx);
  ~ScopedContext();  // a failure to restore is noted (note_release_failure), never thrown
  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;

 private:
  CUcontext prev_ = nullptr;
  bool switched_ = false;
};

}  // namespace tessel::rt
