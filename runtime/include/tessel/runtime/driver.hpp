// The CUDA driver loaded with dlopen: a lazy process-wide table of entry points.
#pragma once
#include <cuda.h>
#include <cudaTypedefs.h>

#include <string>

namespace tessel::rt {

// One function pointer per row of driver_api.def, typed by cudaTypedefs.h.
// Members drop the "cu" prefix (see driver_api.def for why): cu().MemAlloc(&p, n).
struct DriverApi {
#define TESSEL_CU_FN(name, symbol, version) PFN_cu##name##_v##version name = nullptr;
#include "tessel/runtime/driver_api.def"
#undef TESSEL_CU_FN
};

// libcuda.so.1 (or the library TESSEL_CUDA_LIBRARY names), opened on first use. Never
// unloaded: objects destroyed during static destruction may still call into it.
class Driver {
 public:
  // The process-wide driver; the first call loads libcuda.so.1 and runs cuInit(0).
  // Thread-safe and never throws: a missing driver is recorded, reported once on
  // stderr, and turned into CudaError by api().
  static Driver& get();

  bool available() const { return available_; }
  // Empty when available; otherwise e.g. "libcuda.so.1 not found: <dlerror>" or
  // "cuInit failed: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)".
  const std::string& unavailable_reason() const { return reason_; }
  // The CUresult behind unavailable_reason (CUDA_ERROR_NOT_INITIALIZED when the
  // library itself is missing), CUDA_SUCCESS when available.
  CUresult init_result() const { return init_result_; }
  // cuDriverGetVersion, e.g. 13000; 0 when unavailable.
  int version() const { return version_; }
  // True when entry points came from cuGetProcAddress rather than dlsym.
  bool resolved_by_proc_address() const { return by_proc_address_; }

  // The entry points; throws CudaError::unavailable when there is no usable driver.
  const DriverApi& api() const {
    if (!available_) [[unlikely]]
      throw_unavailable();
    return api_;
  }

  // The entry points when the driver is usable, else nullptr; never throws. For code that must
  // not throw (destructors releasing driver handles).
  const DriverApi* api_if_available() const noexcept { return available_ ? &api_ : nullptr; }

  // The driver's error name/description functions when libcuda loaded (even if
  // cuInit failed), else nullptr. Used by error formatting, which must not throw.
  PFN_cuGetErrorName_v6000 error_name_fn() const { return api_.GetErrorName; }
  PFN_cuGetErrorString_v6000 error_string_fn() const { return api_.GetErrorString; }

  // ---- Test hooks: fault injection and a fake driver (tests/common/fake_driver.hpp) ----
  // The table installed now, whether or not it is usable (entries are null where nothing loaded).
  const DriverApi& table_for_testing() const noexcept { return api_; }
  // Makes every later call go through `api`, a usable driver when `available` (a fake one on a
  // machine without a GPU), and returns what was installed before, to pass back when the test
  // ends. The table is replaced in place, so pointers to it (rt::Function's) stay valid. Not
  // synchronised with calls in flight: install while no other thread calls the driver, and
  // release what was made under a table before reinstalling the previous one.
  struct TestingTable {
    DriverApi api;
    bool available;
  };
  TestingTable install_for_testing(const DriverApi& api, bool available) noexcept;

  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

 private:
  Driver();
  void load();
  bool resolve_all(void* lib);
  [[noreturn]] void throw_unavailable() const;

  DriverApi api_;
  bool available_ = false;
  bool by_proc_address_ = false;
  CUresult init_result_ = CUDA_ERROR_NOT_INITIALIZED;
  int version_ = 0;
  std::string reason_;
};

// Shorthand for Driver::get().api(): cu().MemAlloc(&ptr, bytes).
inline const DriverApi& cu() { return Driver::get().api(); }

}  // namespace tessel::rt
