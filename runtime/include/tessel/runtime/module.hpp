// Module: PTX (JIT-compiled by the driver) or a cubin image, loaded into the context.
#pragma once
#include <cuda.h>

#include <span>
#include <string>
#include <string_view>

#include "tessel/runtime/function.hpp"

namespace tessel::rt {

// A loaded CUmodule of the current context, unloaded on destruction. Movable, not
// copyable. Functions taken from it must not outlive it.
class Module {
 public:
  // JIT-compiles PTX for the current device. A compile error throws CudaError whose
  // detail() holds the JIT's error log. verbose adds ptxas' usage lines to info_log().
  static Module load_ptx(std::string_view ptx, bool verbose = false);
  // Loads a cubin (or fatbin) image; the bytes are copied by the driver.
  static Module load_cubin(std::span<const char> image);

  ~Module();
  Module(Module&& other) noexcept;
  Module& operator=(Module&& other) noexcept;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // Throws CudaError (CUDA_ERROR_NOT_FOUND) naming the kernel when it is absent.
  Function get_function(const std::string& name) const;

  CUmodule handle() const { return module_; }
  // The JIT's informational log from loading (empty for most cubins).
  const std::string& info_log() const { return info_log_; }

 private:
  Module(CUmodule module, std::string info_log);
  static Module load_image(const void* image, const char* what);
  CUmodule module_ = nullptr;
  std::string info_log_;
};

}  // namespace tessel::rt
