// Loads libcuda.so.1 (or TESSEL_CUDA_LIBRARY) with dlopen, runs cuInit, resolves driver_api.def.
#include "tessel/runtime/driver.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <type_traits>

#include "tessel/runtime/error.hpp"
#include "tessel/runtime/log.hpp"

namespace tessel::rt {

// Each row's PFN type must be the type cuda.h declares for its symbol; a wrong
// version number in the table fails here instead of corrupting calls at run time.
#define TESSEL_CU_FN(name, symbol, version)                                       \
  static_assert(std::is_same_v<PFN_cu##name##_v##version, decltype(&::symbol)>, \
                "driver_api.def: cu" #name " v" #version " does not match " #symbol);
#include "tessel/runtime/driver_api.def"
#undef TESSEL_CU_FN

namespace {

constexpr const char* kLibName = "libcuda.so.1";

// The library to load: TESSEL_CUDA_LIBRARY when set (a path or a soname; a path that does not
// exist hides the driver, so a GPU host can test its no-GPU paths), else libcuda.so.1.
const char* library_path() {
  const char* v = std::getenv("TESSEL_CUDA_LIBRARY");
  return v != nullptr && *v != '\0' ? v : kLibName;
}

// The library as reasons name it: which file, and the knob when that chose it.
std::string library_label() {
  const char* path = library_path();
  return path == kLibName ? std::string(kLibName) : fmt::format("{} (TESSEL_CUDA_LIBRARY)", path);
}

// cuGetProcAddress_v2 (CUDA 12.0+). Older drivers lack it; we then fall back to dlsym.
using GetProcAddressFn = PFN_cuGetProcAddress_v12000;

template <class Fn>
Fn sym(void* lib, const char* name) {
  return reinterpret_cast<Fn>(dlsym(lib, name));
}

// Name a CUresult while the Driver is still being built (Driver::get() would recurse).
std::string describe(CUresult r, PFN_cuGetErrorName_v6000 name_fn,
                     PFN_cuGetErrorString_v6000 string_fn) {
  const char* name = nullptr;
  if (name_fn == nullptr || name_fn(r, &name) != CUDA_SUCCESS || name == nullptr)
    name = builtin_result_name(r);
  std::string out = name ? name : fmt::format("CUresult({})", static_cast<int>(r));
  const char* text = nullptr;
  if (string_fn != nullptr && string_fn(r, &text) == CUDA_SUCCESS && text != nullptr)
    out += fmt::format(" ({})", text);
  return out;
}

}  // namespace

Driver& Driver::get() {
  // A function-local static: C++ guarantees one thread runs the constructor while
  // the others wait, so loading is race-free without our own locks.
  static Driver driver;
  return driver;
}

Driver::Driver() {
  load();
  // Info, not warn: the driver is looked for by code that merely asks (a compile for a target, a
  // program run with TESSEL_INTERPRET=1), which a missing driver does not concern. What it does
  // concern (kernels falling back to the CPU interpreter unasked) is warned about where that
  // fallback is decided (jit's Device::current); everything else throws CudaError with the reason.
  if (!available_)
    log(LogLevel::Info, fmt::format("CUDA driver unavailable, GPU features disabled: {}", reason_));
  else if (log_enabled(LogLevel::Debug))
    log(LogLevel::Debug, fmt::format("CUDA driver {}.{} loaded from {}", version_ / 1000, version_ % 1000 / 10,
                                     library_label()));
}

void Driver::load() {
  void* lib = dlopen(library_path(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* err = dlerror();
    reason_ = fmt::format("{} not found: {}", library_label(), err ? err : "unknown dlopen error");
    return;
  }
  // Deliberately never dlclose'd: see the class comment.

  // The error-name functions work before cuInit, so a failing cuInit can be named.
  api_.GetErrorName = sym<PFN_cuGetErrorName_v6000>(lib, "cuGetErrorName");
  api_.GetErrorString = sym<PFN_cuGetErrorString_v6000>(lib, "cuGetErrorString");

  auto init = sym<PFN_cuInit_v2000>(lib, "cuInit");
  if (init == nullptr) {
    reason_ = fmt::format("{} has no cuInit (not a CUDA driver?)", library_label());
    return;
  }
  CUresult r = init(0);
  if (r != CUDA_SUCCESS) {
    init_result_ = r;
    reason_ = "cuInit failed: " + describe(r, api_.GetErrorName, api_.GetErrorString);
    return;
  }
  if (!resolve_all(lib)) {
    init_result_ = CUDA_ERROR_NOT_FOUND;
    return;  // reason_ set by resolve_all
  }
  r = api_.DriverGetVersion(&version_);
  if (r != CUDA_SUCCESS) {
    init_result_ = r;
    reason_ = "cuDriverGetVersion failed: " + describe(r, api_.GetErrorName, api_.GetErrorString);
    return;
  }
  init_result_ = CUDA_SUCCESS;
  available_ = true;
}

// cuGetProcAddress picks the entry point matching the ABI version we were written
// against (a plain dlsym of an unversioned name can return an older ABI); dlsym of the
// row's explicit versioned symbol is the fallback for drivers before CUDA 12.
bool Driver::resolve_all(void* lib) {
  auto proc = sym<GetProcAddressFn>(lib, "cuGetProcAddress_v2");
  bool any_by_proc = false;
  auto resolve = [&](const char* base, const char* symbol, int version) -> void* {
    if (proc != nullptr) {
      CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
      void* fn = nullptr;
      if (proc(base, &fn, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status) == CUDA_SUCCESS &&
          status == CU_GET_PROC_ADDRESS_SUCCESS && fn != nullptr) {
        any_by_proc = true;
        return fn;
      }
    }
    return dlsym(lib, symbol);
  };
#define TESSEL_CU_FN(name, symbol, version)                                               \
  if (void* fn = resolve("cu" #name, #symbol, version)) {                                 \
    api_.name = reinterpret_cast<decltype(api_.name)>(fn);                                \
  } else {                                                                                \
    reason_ = fmt::format("{} lacks {} (driver older than CUDA {}.{}?)", library_label(), \
                          #symbol, (version) / 1000, (version) % 1000 / 10);              \
    return false;                                                                         \
  }
#include "tessel/runtime/driver_api.def"
#undef TESSEL_CU_FN
  by_proc_address_ = any_by_proc;
  return true;
}

Driver::TestingTable Driver::install_for_testing(const DriverApi& api, bool available) noexcept {
  TestingTable before{api_, available_};
  api_ = api;
  available_ = available;
  return before;
}

void Driver::throw_unavailable() const { throw CudaError::unavailable(init_result_, reason_); }

}  // namespace tessel::rt
