// Module: loading PTX through the driver JIT (with its logs) or a cubin image.
#include "tessel/runtime/module.hpp"

#include <fmt/format.h>

#include <utility>

#include "image_check.hpp"
#include "jit_log.hpp"
#include "release.hpp"
#include "tessel/runtime/driver.hpp"
#include "tessel/runtime/error.hpp"

namespace tessel::rt {

Module::Module(CUmodule module, std::string info_log)
    : module_(module), info_log_(std::move(info_log)) {}

// Unload errors are noted, never thrown: destructors cannot throw.
static void unload(CUmodule m) noexcept {
  if (m != nullptr) detail::release_call("cuModuleUnload", [&](const DriverApi& api) { return api.ModuleUnload(m); });
}

// Both kinds of input go through cuModuleLoadDataEx so a failure always has a log.
static std::pair<CUmodule, std::string> load_with_log(const void* image, bool verbose) {
  const DriverApi& api = cu();
  detail::JitLog log(verbose);
  CUmodule module = nullptr;
  CUresult r = api.ModuleLoadDataEx(&module, image, log.count(), log.options(), log.values());
  if (r != CUDA_SUCCESS) throw CudaError(r, "cuModuleLoadDataEx", log.error_detail("JIT log"));
  try {
    return {module, log.info()};
  } catch (...) {  // out of memory copying the log: the module must not leak
    unload(module);
    throw;
  }
}

Module Module::load_ptx(std::string_view ptx, bool verbose) {
  std::string text(ptx);  // the driver reads PTX up to a NUL
  auto [module, info] = load_with_log(text.c_str(), verbose);
  return Module(module, std::move(info));
}

Module Module::load_cubin(std::span<const char> image) {
  detail::check_image(image, "Module::load_cubin");
  auto [module, info] = load_with_log(image.data(), false);
  return Module(module, std::move(info));
}

Module::~Module() { unload(module_); }

Module::Module(Module&& other) noexcept
    : module_(std::exchange(other.module_, nullptr)), info_log_(std::move(other.info_log_)) {}

Module& Module::operator=(Module&& other) noexcept {
  if (this != &other) {
    unload(module_);
    module_ = std::exchange(other.module_, nullptr);
    info_log_ = std::move(other.info_log_);
  }
  return *this;
}

Function Module::get_function(const std::string& name) const {
  CUfunction fn = nullptr;
  CUresult r = cu().ModuleGetFunction(&fn, module_, name.c_str());
  if (r != CUDA_SUCCESS) throw CudaError(r, "cuModuleGetFunction", fmt::format("kernel '{}'", name));
  return Function(fn, name);
}

}  // namespace tessel::rt
