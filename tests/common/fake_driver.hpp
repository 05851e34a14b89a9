// A fake CUDA driver over host memory, and scoped fault injection into the driver table.
//
// tessel reaches the driver only through rt::Driver's table (runtime/include/tessel/runtime/
// driver_api.def), and rt::Driver::install_for_testing swaps that table. Two tools build on it:
// - FakeDriver installs FakeGpu, a driver that answers every entry without a GPU: one device
//   (sm_80, 1 GiB; set_devices() makes more, each with its own primary context and compute
//   capability), device memory that is host memory (copies really copy; an allocation past the
//   1 GiB is CUDA_ERROR_OUT_OF_MEMORY), modules, links, streams and events as counted handles,
//   launches that are counted but run nothing. Its counters say what is still allocated or
//   loaded, so a test can show that an error path leaks nothing. Modules belong to the context
//   current when they were loaded: launching a function in another context fails as the real
//   driver does (CUDA_ERROR_INVALID_HANDLE), and loads and launches are counted per context.
// - DriverFaults makes chosen entries of whatever table is installed (the fake, or the real
//   driver on a GPU) fail with a chosen CUresult, after letting some calls through.
// Both restore the previous table at scope exit. Install them while no other thread calls the
// driver, and destroy what was made under a table before it goes.
#pragma once
#include <cuda.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tessel/runtime/driver.hpp"
#include "tessel/runtime/error.hpp"

namespace tessel_test {

namespace rt = tessel::rt;

// ---- the fake driver ----

// What the fake holds now: the handles a test expects to see released again.
struct FakeLive {
  size_t allocations = 0, bytes = 0, modules = 0, links = 0, streams = 0, events = 0, contexts = 0;
  friend bool operator==(const FakeLive&, const FakeLive&) = default;
};

// One launch the fake accepted: the function, the context current at the launch, and the
// context the function's module was loaded in.
struct FakeLaunch {
  CUfunction fn = nullptr;
  CUcontext ctx = nullptr, module_ctx = nullptr;
};

class FakeGpu {
 public:
  static constexpr size_t kTotalMemory = size_t{1} << 30;
  static constexpr int kMajor = 8, kMinor = 0;
  static constexpr const char* kName = "tessel fake GPU";
  static constexpr int kMaxDevices = 32;

  // Shows `n` devices (1 after reset()), all sm_80 until set_compute_capability says otherwise.
  static void set_devices(int n) {
    std::lock_guard lock(state().mu);
    state().devices = std::clamp(n, 1, kMaxDevices);
  }
  static void set_compute_capability(int device, int major, int minor) {
    std::lock_guard lock(state().mu);
    state().cc.at(static_cast<size_t>(device)) = {major, minor};
  }
  // Device `device`'s primary context (what cuDevicePrimaryCtxRetain gives).
  static CUcontext context(int device = 0) {
    static char c[kMaxDevices];
    return reinterpret_cast<CUcontext>(&c[device]);
  }

  // The counters: live handles, and calls made since reset().
  static FakeLive live() {
    std::lock_guard lock(state().mu);
    FakeLive l;
    l.allocations = state().memory.size();
    for (const auto& [p, n] : state().memory) l.bytes += n;
    l.modules = state().modules.size();
    l.links = state().links.size();
    l.streams = state().streams;
    l.events = state().events;
    l.contexts = state().contexts;
    return l;
  }
  static int launches() { return state().launches; }
  static int module_loads() { return state().module_loads; }
  static int frees() { return state().frees; }
  // Per context: modules loaded (since reset()), and the launches accepted in order.
  static int module_loads_in(CUcontext ctx) {
    std::lock_guard lock(state().mu);
    auto it = state().loads_in.find(ctx);
    return it == state().loads_in.end() ? 0 : it->second;
  }
  static std::vector<FakeLaunch> launch_log() {
    std::lock_guard lock(state().mu);
    return state().launch_log;
  }
  // Modules unloaded while a context other than theirs was current (the real driver unloads
  // from the current context).
  static int unloads_outside_their_context() { return state().unloads_outside; }
  // The context the function's module was loaded in; null for an unknown function.
  static CUcontext context_of(CUfunction f) {
    std::lock_guard lock(state().mu);
    auto it = state().function_ctx.find(f);
    return it == state().function_ctx.end() ? nullptr : it->second;
  }

  // Forgets every handle (memory freed) and zeroes the counters.
  static void reset() {
    std::lock_guard lock(state().mu);
    for (const auto& [p, n] : state().memory) std::free(reinterpret_cast<void*>(static_cast<uintptr_t>(p)));
    state().memory.clear();
    state().modules.clear();
    state().links.clear();
    state().streams = state().events = state().contexts = 0;
    state().launches = state().module_loads = state().frees = 0;
    state().devices = 1;
    state().unloads_outside = 0;
    state().cc.fill({kMajor, kMinor});
    state().loads_in.clear();
    state().launch_log.clear();
    state().function_ctx.clear();
    current() = nullptr;
  }

  // Every entry of the table.
  static rt::DriverApi table() {
    rt::DriverApi t;
    t.Init = [](unsigned) { return CUDA_SUCCESS; };
    t.DriverGetVersion = [](int* v) { return *v = 12040, CUDA_SUCCESS; };
    t.GetErrorName = [](CUresult r, const char** s) {
      *s = rt::builtin_result_name(r);
      return *s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    };
    t.GetErrorString = [](CUresult, const char** s) { return *s = "reported by the fake driver", CUDA_SUCCESS; };

    t.DeviceGetCount = [](int* n) { return *n = devices(), CUDA_SUCCESS; };
    t.DeviceGet = [](CUdevice* d, int ordinal) {
      return ordinal >= 0 && ordinal < devices() ? (*d = ordinal, CUDA_SUCCESS) : CUDA_ERROR_INVALID_DEVICE;
    };
    t.DeviceGetName = [](char* name, int len, CUdevice) {
      std::strncpy(name, kName, static_cast<size_t>(len));
      return CUDA_SUCCESS;
    };
    t.DeviceGetAttribute = [](int* v, CUdevice_attribute a, CUdevice d) {
      if (d < 0 || d >= devices()) return CUDA_ERROR_INVALID_DEVICE;
      switch (a) {
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = state().cc[static_cast<size_t>(d)].first; break;
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = state().cc[static_cast<size_t>(d)].second; break;
        case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 4; break;
        case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 1 << 20; break;
        case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *v = 48 << 10; break;
        case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = 163 << 10; break;
        case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
        case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *v = 32; break;
        default: *v = 0;
      }
      return CUDA_SUCCESS;
    };
    t.DeviceTotalMem = [](size_t* bytes, CUdevice) { return *bytes = kTotalMemory, CUDA_SUCCESS; };

    t.DevicePrimaryCtxRetain = [](CUcontext* c, CUdevice d) {
      if (d < 0 || d >= devices()) return CUDA_ERROR_INVALID_DEVICE;
      return *c = context(d), count(state().contexts, +1);
    };
    t.DevicePrimaryCtxRelease = [](CUdevice) { return count(state().contexts, -1); };
    t.CtxSetCurrent = [](CUcontext c) { return current() = c, CUDA_SUCCESS; };
    t.CtxGetCurrent = [](CUcontext* c) { return *c = current(), CUDA_SUCCESS; };
    t.CtxGetDevice = [](CUdevice* d) {
      const int dev = device_of(current());
      return dev >= 0 ? (*d = dev, CUDA_SUCCESS) : CUDA_ERROR_INVALID_CONTEXT;
    };
    t.CtxSynchronize = [] { return current() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT; };

    t.StreamCreate = [](CUstream* s, unsigned) { return *s = handle<CUstream>(), count(state().streams, +1); };
    t.StreamDestroy = [](CUstream) { return count(state().streams, -1); };
    t.StreamSynchronize = [](CUstream) { return CUDA_SUCCESS; };
    t.EventCreate = [](CUevent* e, unsigned) { return *e = handle<CUevent>(), count(state().events, +1); };
    t.EventDestroy = [](CUevent) { return count(state().events, -1); };
    t.EventRecord = [](CUevent, CUstream) { return CUDA_SUCCESS; };
    t.EventSynchronize = [](CUevent) { return CUDA_SUCCESS; };
    t.EventElapsedTime = [](float* ms, CUevent, CUevent) { return *ms = 0.25f, CUDA_SUCCESS; };

    t.MemAlloc = [](CUdeviceptr* p, size_t bytes) {
      std::lock_guard lock(state().mu);
      size_t used = 0;
      for (const auto& [a, n] : state().memory) used += n;
      if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
      if (bytes > kTotalMemory - used) return CUDA_ERROR_OUT_OF_MEMORY;
      void* host = std::calloc(bytes, 1);
      if (host == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
      *p = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(host));
      state().memory[*p] = bytes;
      return CUDA_SUCCESS;
    };
    t.MemFree = [](CUdeviceptr p) {
      std::lock_guard lock(state().mu);
      auto it = state().memory.find(p);
      if (it == state().memory.end()) return CUDA_ERROR_INVALID_VALUE;
      std::free(reinterpret_cast<void*>(static_cast<uintptr_t>(p)));
      state().memory.erase(it);
      ++state().frees;
      return CUDA_SUCCESS;
    };
    t.MemcpyHtoD = [](CUdeviceptr d, const void* s, size_t n) { return copy(ptr(d), s, n); };
    t.MemcpyDtoD = [](CUdeviceptr d, CUdeviceptr s, size_t n) { return copy(ptr(d), ptr(s), n); };
    t.MemcpyDtoH = [](void* d, CUdeviceptr s, size_t n) { return copy(d, ptr(s), n); };
    t.MemcpyHtoDAsync = [](CUdeviceptr d, const void* s, size_t n, CUstream) { return copy(ptr(d), s, n); };
    t.MemcpyDtoHAsync = [](void* d, CUdeviceptr s, size_t n, CUstream) { return copy(d, ptr(s), n); };
    t.MemsetD8 = [](CUdeviceptr d, unsigned char v, size_t n) { return std::memset(ptr(d), v, n), CUDA_SUCCESS; };
    t.MemsetD32 = [](CUdeviceptr d, unsigned v, size_t n) {
      for (size_t i = 0; i < n; ++i) std::memcpy(static_cast<char*>(ptr(d)) + 4 * i, &v, 4);
      return CUDA_SUCCESS;
    };

    t.ModuleLoadDataEx = [](CUmodule* m, const void* image, unsigned, CUjit_option*, void**) {
      const char* bytes = static_cast<const char*>(image);
      // A cubin starts with the ELF magic; PTX is NUL-terminated text with a .version directive.
      const bool elf = std::strncmp(bytes, "\x7f" "ELF", 4) == 0;
      const bool ptx = !elf && std::string_view(bytes).find(".version") != std::string_view::npos;
      if (!elf && !ptx) return CUDA_ERROR_INVALID_IMAGE;
      auto module = std::make_unique<Module>();
      if (ptx) module->ptx = bytes;  // PTX is NUL-terminated
      module->ctx = current();
      std::lock_guard lock(state().mu);
      ++state().module_loads;
      ++state().loads_in[module->ctx];
      *m = reinterpret_cast<CUmodule>(module.get());
      state().modules.insert({*m, std::move(module)});
      return CUDA_SUCCESS;
    };
    t.ModuleUnload = [](CUmodule m) {
      std::lock_guard lock(state().mu);
      auto it = state().modules.find(m);
      if (it == state().modules.end()) return CUDA_ERROR_INVALID_HANDLE;
      if (it->second->ctx != current()) ++state().unloads_outside;
      for (auto& [name, entry] : it->second->functions) state().function_ctx.erase(reinterpret_cast<CUfunction>(&entry));
      state().modules.erase(it);
      return CUDA_SUCCESS;
    };
    t.ModuleGetFunction = [](CUfunction* f, CUmodule m, const char* name) {
      std::lock_guard lock(state().mu);
      auto it = state().modules.find(m);
      if (it == state().modules.end()) return CUDA_ERROR_INVALID_HANDLE;
      Module& mod = *it->second;
      // A PTX module has the kernels it declares; a (fake) cubin has any.
      if (!mod.ptx.empty() && mod.ptx.find(".entry " + std::string(name)) == std::string::npos)
        return CUDA_ERROR_NOT_FOUND;
      *f = reinterpret_cast<CUfunction>(&mod.functions[name]);
      state().function_ctx[*f] = mod.ctx;
      return CUDA_SUCCESS;
    };
    t.FuncGetAttribute = [](int* v, CUfunction_attribute a, CUfunction) {
      *v = a == CU_FUNC_ATTRIBUTE_NUM_REGS ? 32 : a == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024 : 0;
      return CUDA_SUCCESS;
    };
    t.FuncSetAttribute = [](CUfunction, CUfunction_attribute, int) { return CUDA_SUCCESS; };
    t.LaunchKernel = [](CUfunction f, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                        void**, void**) {
      if (f == nullptr) return CUDA_ERROR_INVALID_HANDLE;
      std::lock_guard lock(state().mu);
      // A function runs only in the context its module was loaded in (one not got through
      // cuModuleGetFunction, a test's own handle, runs anywhere).
      auto it = state().function_ctx.find(f);
      const CUcontext module_ctx = it == state().function_ctx.end() ? current() : it->second;
      if (module_ctx != current()) return CUDA_ERROR_INVALID_HANDLE;
      ++state().launches;
      state().launch_log.push_back({f, current(), module_ctx});
      return CUDA_SUCCESS;
    };
    t.TensorMapEncodeTiled = [](CUtensorMap* m, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill) {
      return *m = CUtensorMap{}, CUDA_SUCCESS;
    };

    t.LinkCreate = [](unsigned, CUjit_option*, void**, CUlinkState* s) {
      // Owned by the state, so a link whose destroy was made to fail is freed by reset().
      std::lock_guard lock(state().mu);
      auto l = std::make_unique<Link>();
      *s = reinterpret_cast<CUlinkState>(l.get());
      state().links.emplace(*s, std::move(l));
      return CUDA_SUCCESS;
    };
    t.LinkAddData = [](CUlinkState, CUjitInputType, void*, size_t, const char*, unsigned, CUjit_option*, void**) {
      return CUDA_SUCCESS;
    };
    t.LinkComplete = [](CUlinkState s, void** cubin, size_t* size) {
      Link* l = reinterpret_cast<Link*>(s);
      *cubin = l->image;
      *size = sizeof l->image;
      return CUDA_SUCCESS;
    };
    t.LinkDestroy = [](CUlinkState s) {
      std::lock_guard lock(state().mu);
      return state().links.erase(s) == 1 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    };
    return t;
  }

 private:
  struct Module {
    CUcontext ctx = nullptr;  // current when it was loaded
    std::string ptx;
    std::map<std::string, char> functions;  // a function handle is the address of its entry
  };
  // The smallest image check_image accepts as a cubin: a 64-bit ELF header with no tables.
  struct Link {
    char image[64] = {'\x7f', 'E', 'L', 'F', 2};
  };
  struct State {
    std::mutex mu;
    std::map<CUdeviceptr, size_t> memory;
    std::map<CUmodule, std::unique_ptr<Module>> modules;
    std::map<CUlinkState, std::unique_ptr<Link>> links;
    size_t streams = 0, events = 0, contexts = 0;
    std::atomic<int> launches{0}, module_loads{0}, frees{0};
    std::atomic<int> devices{1}, unloads_outside{0};
    std::array<std::pair<int, int>, kMaxDevices> cc = filled_cc();
    std::map<CUcontext, int> loads_in;
    std::vector<FakeLaunch> launch_log;
    std::map<CUfunction, CUcontext> function_ctx;
  };
  static std::array<std::pair<int, int>, kMaxDevices> filled_cc() {
    std::array<std::pair<int, int>, kMaxDevices> cc;
    cc.fill({kMajor, kMinor});
    return cc;
  }
  static int devices() { return state().devices; }
  // The device whose primary context `c` is; -1 for none (or a context not the fake's).
  static int device_of(CUcontext c) {
    for (int d = 0; d < devices(); ++d)
      if (c == context(d)) return d;
    return -1;
  }
  static State& state() {
    static State* s = new State;  // never destroyed: handles may be released during static destruction
    return *s;
  }
  static CUcontext& current() {
    thread_local CUcontext c = nullptr;
    return c;
  }
  template <class H>
  static H handle() {
    static char h;
    return reinterpret_cast<H>(&h);
  }
  static CUresult count(size_t& n, int delta) {
    std::lock_guard lock(state().mu);
    if (delta < 0 && n == 0) return CUDA_ERROR_INVALID_HANDLE;  // released more than made
    n += delta;
    return CUDA_SUCCESS;
  }
  static void* ptr(CUdeviceptr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); }
  static CUresult copy(void* dst, const void* src, size_t n) {
    std::memmove(dst, src, n);
    return CUDA_SUCCESS;
  }
};

// Installs `api` as the driver for the scope (available or not), then reinstalls what was there.
class ScopedDriverTable {
 public:
  ScopedDriverTable(const rt::DriverApi& api, bool available)
      : before_(rt::Driver::get().install_for_testing(api, available)) {}
  ~ScopedDriverTable() { rt::Driver::get().install_for_testing(before_.api, before_.available); }
  ScopedDriverTable(const ScopedDriverTable&) = delete;
  ScopedDriverTable& operator=(const ScopedDriverTable&) = delete;

 private:
  rt::Driver::TestingTable before_;
};

// The fake driver for the scope, with fresh counters.
class FakeDriver {
 public:
  FakeDriver() : installed_((FakeGpu::reset(), FakeGpu::table()), true) {}
  ~FakeDriver() { FakeGpu::reset(); }

 private:
  ScopedDriverTable installed_;
};

// ---- fault injection ----

namespace detail {
template <class T>
struct EntryType;
template <class Fn>
struct EntryType<Fn rt::DriverApi::*> {
  using type = Fn;
};

// The failing stand-in for one entry of the table (one per entry: a plain function pointer can
// carry no state of its own). Lets `pass` calls through to `next`, then fails `fail` calls with
// `code` (-1: every later call), then lets calls through again.
template <auto Member, class Fn = typename EntryType<decltype(Member)>::type>
struct Fault;
template <auto Member, class... Args>
struct Fault<Member, CUresult (*)(Args...)> {
  static inline CUresult (*next)(Args...) = nullptr;
  static inline CUresult code = CUDA_SUCCESS;
  static inline std::atomic<int> pass{0}, fail{0}, calls{0}, failed{0};
  static CUresult call(Args... args) {
    ++calls;
    if (pass > 0) {
      --pass;
      return next(args...);
    }
    if (fail != 0) {
      if (fail > 0) --fail;
      ++failed;
      return code;
    }
    return next(args...);
  }
};
}  // namespace detail

// Makes chosen entries of the installed table fail for the scope:
//   DriverFaults f;
//   f.fail<&rt::DriverApi::MemAlloc>(CUDA_ERROR_OUT_OF_MEMORY);           // every call
//   f.fail<&rt::DriverApi::LaunchKernel>(CUDA_ERROR_LAUNCH_FAILED, 2, 1);  // the 3rd call only
// One DriverFaults per entry at a time (each entry's stand-in has one state).
class DriverFaults {
 public:
  DriverFaults()
      : table_(rt::Driver::get().table_for_testing()), available_(rt::Driver::get().available()), original_(table_) {}
  ~DriverFaults() { rt::Driver::get().install_for_testing(original_, available_); }
  DriverFaults(const DriverFaults&) = delete;
  DriverFaults& operator=(const DriverFaults&) = delete;

  // Fails `times` calls of the entry (-1: all) with `code`, after letting `after` calls through.
  template <auto Member>
  DriverFaults& fail(CUresult code, int after = 0, int times = -1) {
    using F = detail::Fault<Member>;
    if (table_.*Member != &F::call) F::next = table_.*Member;
    F::code = code;
    F::pass = after;
    F::fail = times;
    F::calls = 0;
    F::failed = 0;
    table_.*Member = &F::call;
    rt::Driver::get().install_for_testing(table_, available_);
    return *this;
  }
  // Counts the entry's calls (calls<Member>()) and fails none.
  template <auto Member>
  DriverFaults& count() {
    return fail<Member>(CUDA_SUCCESS, 0, 0);
  }
  // How many calls of the entry failed, and were made, since fail() or count() was called for it.
  template <auto Member>
  static int failed() {
    return detail::Fault<Member>::failed;
  }
  template <auto Member>
  static int calls() {
    return detail::Fault<Member>::calls;
  }

 private:
  rt::DriverApi table_;
  bool available_;
  rt::DriverApi original_;
};

}  // namespace tessel_test
