// The GPU as a Device: CUDA driver memory, kernels from the disk cache or lowered, loaded as modules.
#include <fmt/format.h>

#include <array>
#include <cstdlib>
#include <map>
#include <mutex>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "cache/cache_compile.hpp"
#include "cache/cache_io.hpp"
#include "counters_internal.hpp"
#include "device_checks.hpp"
#include "tma_encode.hpp"
#include "tessel/jit/cache.hpp"
#include "tessel/jit/cubin.hpp"
#include "tessel/interp/float_formats.hpp"
#include "tessel/jit/device.hpp"
#include "tessel/lowering/compile.hpp"
#include "tessel/runtime/runtime.hpp"

namespace tessel::jit {

int cuda_device_count();  // below

namespace {

// Every call that allocates, copies, compiles or launches holds an rt::ScopedContext of its
// device: the driver keeps the current context per thread, so the call needs the device's own,
// and the caller's (a framework's, another device's, or none) is put back afterwards. Asking
// costs far less than a launch.
using rt::ScopedContext;

// Entries compiled in this process, by cache key: a variant is lowered once per target however
// many devices (contexts) load it. A slot's mutex is held while its entry is made, so a second
// device asking at the same time waits for the first instead of lowering again.
struct CompiledSlot {
  std::mutex mu;
  std::shared_ptr<const cache::Entry> entry;
};
std::shared_ptr<CompiledSlot> compiled_slot(const std::string& key) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<CompiledSlot>> slots;
  std::lock_guard lock(mu);
  std::shared_ptr<CompiledSlot>& s = slots[key];
  if (!s) s = std::make_shared<CompiledSlot>();
  return s;
}

// How one kernel parameter is passed: its byte size and kind.
struct ParamSlot {
  RawArg::Kind kind;
  uint8_t bytes;      // 1, 2, 4 or 8
  bool bf16 = false;  // a 2-byte float: bf16 (else f16)
};

// The first line of a tool's message (ptxas' output follows it).
std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// The module to run an entry from: its cubin when it was made for this GPU, else its PTX
// (JIT-compiled by the driver). A cubin the driver refuses falls back to the PTX.
rt::Module load_entry(const cache::Entry& e, const std::string& device_arch) {
  detail::counter_cells().modules_loaded++;
  if (!e.cubin.empty() && e.meta.cubin_arch == device_arch) {
    try {
      return rt::Module::load_cubin(e.cubin);
    } catch (const rt::CudaError&) {
    }
  }
  return rt::Module::load_ptx(e.ptx);
}

class CudaKernel final : public Executable {
 public:
  CudaKernel(CUcontext ctx, rt::Module module, const cache::EntryMeta& meta, std::vector<ParamSlot> slots,
             std::shared_ptr<const detail::DeviceChecks> checks, std::shared_ptr<detail::LaunchLog> launches)
      : checks_(std::move(checks)),
        launches_(std::move(launches)),
        ctx_(ctx),
        module_(std::move(module)),
        fn_(module_.get_function(meta.entry())),
        slots_(std::move(slots)),
        launch_(meta.launch) {
    info_.kernel_name = meta.kernel;
    info_.symbol = meta.entry();
    info_.num_warps = meta.num_warps;
    info_.programs_per_cta = meta.launch.programs_per_cta;
    info_.cluster_ctas = meta.launch.cluster_ctas;
    info_.warp_specialize = meta.warp_specialize;
    info_.registers = fn_.num_regs();
    info_.local_bytes = fn_.local_size_bytes();
    info_.shared_bytes = meta.launch.shared_bytes;
    if (launch_.shared_bytes > 48 * 1024) fn_.set_max_dynamic_shared(launch_.shared_bytes);
  }

  // The module is unloaded in its own context (the thread's may be another, or none).
  ~CudaKernel() override {
    try {
      ScopedContext scope(ctx_);
      rt::Module gone = std::move(module_);
    } catch (...) {  // no usable driver: the module goes with the process
    }
  }
  CudaKernel(const CudaKernel&) = delete;
  CudaKernel& operator=(const CudaKernel&) = delete;

  void launch(Grid grid, std::span<const RawArg> args, StreamRef stream) override {
    // Packed on the stack: no allocation and no string building per launch.
    std::array<uint64_t, 32> storage;
    std::array<void*, 32> params;
    const size_t n = slots_.size();
    for (size_t i = 0; i < n; ++i) {
      const ParamSlot s = slots_[i];
      const RawArg& a = args[i];
      if (s.kind == RawArg::Float) {
        if (s.bytes == 2) {  // f16 / bf16 bits, rounded as the interpreter rounds (float_formats.hpp)
          const uint16_t h = s.bf16 ? interp::bf16_from_double(a.f) : interp::f16_from_double(a.f);
          std::memcpy(&storage[i], &h, 2);
        } else if (s.bytes == 4) {
          float f = static_cast<float>(a.f);
          std::memcpy(&storage[i], &f, 4);
        } else {
          std::memcpy(&storage[i], &a.f, 8);
        }
      } else if (s.bytes == 4) {
        auto v = static_cast<int32_t>(a.i);
        std::memcpy(&storage[i], &v, 4);
      } else {
        storage[i] = a.kind == RawArg::Pointer ? a.addr : static_cast<uint64_t>(a.i);
      }
      params[i] = &storage[i];
    }
    // The device's context from here on: the driver encodes tensor maps in the current context,
    // and launches there; the caller's is put back on return.
    ScopedContext scope(ctx_);
    // Tensor maps after the arguments (TMA copies), encoded from them for this launch.
    alignas(64) std::array<CUtensorMap, LaunchSpec::kMaxTensorMaps> maps;
    if (launch_.tensor_maps.size() > maps.size() || n + launch_.tensor_maps.size() > params.size())
      throw std::invalid_argument(fmt::format("kernel '{}' takes {} tensor maps after {} arguments; at most {} in all",
                                              info_.kernel_name, launch_.tensor_maps.size(), n, params.size()));
    for (size_t m = 0; m < launch_.tensor_maps.size(); ++m) {
      encode_tma_map(maps[m], launch_.tensor_maps[m], args, info_.kernel_name);
      params[n + m] = &maps[m];
    }
    if (info_.programs_per_cta != 1 || info_.cluster_ctas != 1) {
      check_grid(info_, grid);
      grid.x /= static_cast<uint32_t>(info_.programs_per_cta);
    }
    if (checks_) launches_->note(checks_);  // named if the driver reports a failed check later
    try {
      rt::launch(fn_, rt::Dim3{grid.x, grid.y, grid.z}, rt::Dim3{static_cast<unsigned>(launch_.threads), 1, 1},
                 static_cast<unsigned>(launch_.shared_bytes), stream.handle, params.data());
    } catch (const rt::CudaError& e) {
      launches_->rethrow(e);  // an earlier launch's failed check surfaces here too
    }
  }

  const ExecutableInfo& info() const override { return info_; }

 private:
  std::shared_ptr<const detail::DeviceChecks> checks_;  // null: the kernel makes none
  std::shared_ptr<detail::LaunchLog> launches_;
  CUcontext ctx_;
  rt::Module module_;
  rt::Function fn_;
  std::vector<ParamSlot> slots_;
  LaunchSpec launch_;  // the entry's launch record, as the lowering made it
  ExecutableInfo info_;
};

class CudaDevice final : public Device {
 public:
  // The device's primary context is retained, not made current: the caller's stays current.
  explicit CudaDevice(int ordinal)
      : ctx_(ordinal, /*make_current=*/false), dev_(ordinal), device_arch_(fmt::format("sm_{}", dev_.sm_arch())) {
    const int sm = dev_.cc_major() * 10 + dev_.cc_minor();
    target_ = lowering::Target{sm};
    if (target_.sm > 90) target_.sm = 90;  // newest target this LLVM emits for; PTX JITs forward
    if (sm == 90) target_.accel = true;    // sm_90a on Hopper: dots on wgmma
    // TESSEL_GPU_ARCH picks another target this GPU runs (sm_90 on Hopper: mma.sync dots).
    if (const char* e = std::getenv("TESSEL_GPU_ARCH"); e && *e) {
      lowering::Target t = lowering::Target::parse(e);
      if (t.sm > sm || (t.accel && t.sm != sm))
        throw std::invalid_argument(fmt::format("TESSEL_GPU_ARCH={}: code for it does not run on this sm_{} GPU", e, sm));
      target_ = t;
    }
  }

  BackendKind kind() const override { return BackendKind::Cuda; }
  std::string describe() const override {
    return fmt::format("GPU {}: {} (sm_{}{}, {} SMs), code for {}", dev_.ordinal(), dev_.name(), dev_.cc_major(),
                       dev_.cc_minor(), dev_.sm_count(), target_.arch());
  }
  uint64_t alloc(size_t bytes) override {
    ScopedContext scope(ctx_.handle());
    CUdeviceptr p = 0;
    checked(rt::cu().MemAlloc(&p, std::max<size_t>(bytes, 1)), "cuMemAlloc");
    return p;
  }
  void free(uint64_t addr) override {
    ScopedContext scope(ctx_.handle());
    checked(rt::cu().MemFree(addr), "cuMemFree");
  }
  void upload(uint64_t dst, const void* src, size_t bytes) override {
    ScopedContext scope(ctx_.handle());
    if (bytes) checked(rt::cu().MemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD");
  }
  void download(void* dst, uint64_t src, size_t bytes) override {
    ScopedContext scope(ctx_.handle());
    if (bytes) checked(rt::cu().MemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH");
    launches_->clear();  // the copy waited for every launch before it: none failed
  }
  void fill_bytes(uint64_t dst, uint8_t byte, size_t bytes) override {
    ScopedContext scope(ctx_.handle());
    if (bytes) checked(rt::cu().MemsetD8(dst, byte, bytes), "cuMemsetD8");
  }
  void copy(uint64_t dst, uint64_t src, size_t bytes) override {
    ScopedContext scope(ctx_.handle());
    if (bytes) checked(rt::cu().MemcpyDtoD(dst, src, bytes), "cuMemcpyDtoD");
  }
  void synchronize() override {
    try {
      ctx_.synchronize();
    } catch (const rt::CudaError& e) {
      launches_->rethrow(e);
    }
    launches_->clear();
  }
  StreamRef create_stream(bool non_blocking) override {
    ScopedContext scope(ctx_.handle());
    CUstream s = nullptr;
    checked(rt::cu().StreamCreate(&s, non_blocking ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT), "cuStreamCreate");
    return StreamRef{s};
  }
  void destroy_stream(StreamRef s) noexcept override {
    if (s.handle == nullptr) return;
    const rt::DriverApi* api = rt::Driver::get().api_if_available();  // a stream needs no current context to go
    const CUresult r = api != nullptr ? api->StreamDestroy(s.handle) : CUDA_ERROR_NOT_INITIALIZED;
    if (r != CUDA_SUCCESS) rt::note_release_failure(r, "cuStreamDestroy");
  }
  void synchronize(StreamRef s) override {
    ScopedContext scope(ctx_.handle());
    checked(rt::cu().StreamSynchronize(s.handle), "cuStreamSynchronize");
    // The legacy default stream waits for every blocking stream's work: none failed.
    if (s.handle == nullptr) launches_->clear();
  }
  // Device memory of this context is valid as it is; host memory is not, and cannot be checked
  // cheaply here (the launch reports an illegal address): nothing to record.
  void register_external(const void* p, size_t bytes) override {
    if (p == nullptr || bytes == 0)
      throw std::invalid_argument("register_external: an empty region (null pointer or 0 bytes)");
  }
  void unregister_external(const void*) override {}
  int ordinal() const override { return dev_.ordinal(); }
  std::string name() const override { return dev_.name(); }
  std::string arch() const override { return device_arch_; }
  int multiprocessors() const override { return dev_.sm_count(); }

  // Disk cache first (TESSEL_CACHE_DIR), else lower, link a cubin for this GPU and publish both.
  std::shared_ptr<Executable> compile(std::shared_ptr<const ir::Function> f, const CompileOptions& opts) override {
    ScopedContext scope(ctx_.handle());  // loading the module needs our context
    std::vector<ParamSlot> slots;
    for (const ir::Value* p : f->body.args) {
      const ir::DType d = p->type.dtype;
      RawArg::Kind k = d.ptr ? RawArg::Pointer : d.is_float() ? RawArg::Float : RawArg::Int;
      slots.push_back({k, static_cast<uint8_t>(d.ptr ? 8 : d.bytes()), d.scalar == ir::Scalar::bf16});
    }
    const cache::Settings settings = cache::Settings::from_env();
    const std::string key = cache::make_key(cache::gpu_key_inputs(*f, opts, target_));
    // With several GPUs an entry made here is kept for the others (lowered once per key in the
    // process, unless TESSEL_ALWAYS_COMPILE asks for every compile). With one GPU each Kernel
    // keeps its variants and the disk cache serves the rest: keeping every entry's PTX and cubin
    // (hundreds while tuning) would buy nothing.
    static const bool several_gpus = cuda_device_count() > 1;
    std::shared_ptr<CompiledSlot> slot =
        settings.always_compile || !several_gpus ? std::make_shared<CompiledSlot>() : compiled_slot(key);
    std::lock_guard slot_lock(slot->mu);
    // The disk cache first (its hits are counted there, and it may hold what another process
    // made), then what another device of this process made, then lowering.
    std::optional<cache::Entry> entry = cache::fetch(settings, key);
    const bool hit = entry.has_value();
    if (!hit && slot->entry) {
      detail::counter_cells().memory_hits++;
      cache::publish(settings, *slot->entry, /*hit=*/true);  // stored already; dumped when asked
      return std::make_shared<CudaKernel>(ctx_.handle(), load_entry(*slot->entry, device_arch_), slot->entry->meta,
                                          std::move(slots), detail::device_checks_of(*f), launches_);
    }
    // The key leaves the cubin tool out (a cache warmed with ptxas serves a machine without it),
    // so a hit whose cubin another tool made than TESSEL_CUBIN_TOOL names is linked again by the
    // one named, and stored so.
    bool relinked = false;
    if (hit) {
      detail::counter_cells().disk_cache_hits++;
      if (cubin_tool_forced() && entry->meta.cubin_tool != intended_cubin_tool()) {
        link_cubin(*entry);
        relinked = true;
      }
    } else {
      entry = cache::lower_to_entry(*f, opts, target_);
      detail::counter_cells().lowered++;
      link_cubin(*entry);
    }
    auto kernel = std::make_shared<CudaKernel>(ctx_.handle(), load_entry(*entry, device_arch_), entry->meta, std::move(slots),
                                               detail::device_checks_of(*f), launches_);
    if (!hit || relinked) {
      entry->meta.registers = kernel->info().registers;
      entry->meta.local_bytes = kernel->info().local_bytes;
    }
    cache::publish(settings, *entry, hit && !relinked, /*replace=*/relinked);
    slot->entry = std::make_shared<const cache::Entry>(std::move(*entry));
    return kernel;
  }

 private:
  // The cubin for this GPU: by the toolkit's ptxas when jit_cubin_tool() says so and the target
  // is this GPU's own (an sm_90 cubin does not run on a newer GPU; the driver JITs forward), else
  // by the driver's linker. A PTX error is left for load_ptx to report with its JIT log, so the
  // entry simply goes without a cubin here; a ptxas that fails (too old for the PTX, say) is
  // reported once and the driver links instead. A ptxas timeout is the kernel's: it propagates.
  void link_cubin(cache::Entry& e) {
    if (intended_cubin_tool() == "ptxas") {
      try {
        Cubin c = ptxas_cubin(e.ptx, target_.arch());
        e.cubin = std::move(c.image);
        e.meta.cubin_arch = device_arch_;
        e.meta.cubin_tool = "ptxas";
        return;
      } catch (const PtxasTimeoutError&) {
        throw;
      } catch (const std::runtime_error& err) {
        cache::io::report_once("ptxas-jit", fmt::format("ptxas could not assemble kernel {} ({}); the driver links "
                                                        "it instead (TESSEL_CUBIN_TOOL=driver: always)",
                                                        e.meta.kernel, first_line(err.what())));
      }
    }
    try {
      rt::Linker linker;
      linker.add_ptx(e.ptx, e.meta.kernel + ".ptx");
      e.cubin = linker.complete();
      e.meta.cubin_arch = device_arch_;
      e.meta.cubin_tool = "driver";
    } catch (const rt::CudaError&) {
      e.cubin.clear();
    }
  }

  // What link_cubin uses first: "ptxas" when jit_cubin_tool() says so and the target is this
  // GPU's own, else "driver".
  std::string intended_cubin_tool() const {
    return target_.sm == dev_.sm_arch() && jit_cubin_tool() == CubinTool::Ptxas ? "ptxas" : "driver";
  }

  // A failed device-side check (CUDA_ERROR_ASSERT) surfaces at the next synchronising call,
  // which names the kernels with checks launched since the last one that succeeded.
  void checked(CUresult r, const char* call) {
    if (r == CUDA_SUCCESS) [[likely]]
      return;
    try {
      rt::throw_cuda_error(r, call);
    } catch (const rt::CudaError& e) {
      launches_->rethrow(e);
    }
  }

  std::shared_ptr<detail::LaunchLog> launches_ = std::make_shared<detail::LaunchLog>();
  rt::Context ctx_;
  rt::Device dev_;
  std::string device_arch_;  // the GPU itself, "sm_90" (target_ may be older: see the constructor)
  lowering::Target target_;
};

}  // namespace

std::unique_ptr<Device> make_cuda_device(int ordinal, std::string& why) {
  rt::Driver& d = rt::Driver::get();
  if (!d.available()) {
    why = "no CUDA driver: " + d.unavailable_reason();
    return nullptr;
  }
  try {
    return std::make_unique<CudaDevice>(ordinal);
  } catch (const std::exception& e) {
    why = std::string("CUDA device unusable: ") + e.what();
    return nullptr;
  }
}

int cuda_device_count() {
  try {
    return rt::Device::count();
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace tessel::jit
