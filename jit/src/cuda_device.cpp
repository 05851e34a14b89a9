// The GPU as a Device: CUDA driver memory, kernels lowered to PTX and loaded as modules.
#include <fmt/format.h>

#include <array>
#include <cstring>
#include <memory>
#include <string>

#include "tessel/jit/device.hpp"
#include "tessel/lowering/compile.hpp"
#include "tessel/runtime/runtime.hpp"

namespace tessel::jit {
namespace {

// How one kernel parameter is passed: its byte size and kind.
struct ParamSlot {
  RawArg::Kind kind;
  uint8_t bytes;  // 4 or 8
};

class CudaKernel final : public Executable {
 public:
  CudaKernel(lowering::Compiled c, std::vector<ParamSlot> slots, int num_warps)
      : compiled_(std::move(c)),
        module_(rt::Module::load_ptx(compiled_.ptx)),
        fn_(module_.get_function(compiled_.kernel_name)),
        slots_(std::move(slots)),
        threads_(static_cast<unsigned>(32 * num_warps)) {
    info_.kernel_name = compiled_.kernel_name;
    info_.num_warps = num_warps;
    info_.registers = fn_.num_regs();
    info_.local_bytes = fn_.local_size_bytes();
    info_.shared_bytes = compiled_.shared_bytes;
    if (compiled_.shared_bytes > 48 * 1024) fn_.set_max_dynamic_shared(compiled_.shared_bytes);
  }

  void launch(Grid grid, std::span<const RawArg> args) override {
    // Packed on the stack: no allocation and no string building per launch.
    std::array<uint64_t, 32> storage;
    std::array<void*, 32> params;
    const size_t n = slots_.size();
    for (size_t i = 0; i < n; ++i) {
      const ParamSlot s = slots_[i];
      const RawArg& a = args[i];
      if (s.kind == RawArg::Float) {
        if (s.bytes == 4) {
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
    rt::launch(fn_, rt::Dim3{grid.x, grid.y, grid.z}, rt::Dim3{threads_, 1, 1},
               static_cast<unsigned>(compiled_.shared_bytes), nullptr, params.data());
  }

  const ExecutableInfo& info() const override { return info_; }
  const lowering::Compiled& compiled() const { return compiled_; }

 private:
  lowering::Compiled compiled_;
  rt::Module module_;
  rt::Function fn_;
  std::vector<ParamSlot> slots_;
  unsigned threads_;
  ExecutableInfo info_;
};

class CudaDevice final : public Device {
 public:
  CudaDevice() : ctx_(0), dev_(0) {
    target_ = lowering::Target{dev_.cc_major() * 10 + dev_.cc_minor()};
    if (target_.sm > 90) target_.sm = 90;  // newest target this LLVM emits for; PTX JITs forward
  }

  BackendKind kind() const override { return BackendKind::Cuda; }
  std::string describe() const override {
    return fmt::format("GPU: {} (sm_{}{}, {} SMs), code for {}", dev_.name(), dev_.cc_major(), dev_.cc_minor(),
                       dev_.sm_count(), target_.arch());
  }
  uint64_t alloc(size_t bytes) override {
    CUdeviceptr p = 0;
    rt::check(rt::cu().MemAlloc(&p, std::max<size_t>(bytes, 1)), "cuMemAlloc");
    return p;
  }
  void free(uint64_t addr) override { rt::check(rt::cu().MemFree(addr), "cuMemFree"); }
  void upload(uint64_t dst, const void* src, size_t bytes) override {
    if (bytes) rt::check(rt::cu().MemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD");
  }
  void download(void* dst, uint64_t src, size_t bytes) override {
    if (bytes) rt::check(rt::cu().MemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH");
  }
  void fill_bytes(uint64_t dst, uint8_t byte, size_t bytes) override {
    if (bytes) rt::check(rt::cu().MemsetD8(dst, byte, bytes), "cuMemsetD8");
  }
  void synchronize() override { ctx_.synchronize(); }

  std::shared_ptr<Executable> compile(std::shared_ptr<const ir::Function> f, const CompileOptions& opts) override {
    lowering::Options lo;
    lo.num_warps = opts.num_warps;
    lo.target = target_;
    std::vector<ParamSlot> slots;
    for (const ir::Value* p : f->body.args) {
      const ir::DType d = p->type.dtype;
      RawArg::Kind k = d.ptr ? RawArg::Pointer : d.is_float() ? RawArg::Float : RawArg::Int;
      slots.push_back({k, static_cast<uint8_t>(d.ptr ? 8 : d.bytes())});
    }
    return std::make_shared<CudaKernel>(lowering::compile(*f, lo), std::move(slots), opts.num_warps);
  }

 private:
  rt::Context ctx_;
  rt::Device dev_;
  lowering::Target target_;
};

}  // namespace

std::unique_ptr<Device> make_cuda_device(std::string& why) {
  rt::Driver& d = rt::Driver::get();
  if (!d.available()) {
    why = "no CUDA driver: " + d.unavailable_reason();
    return nullptr;
  }
  try {
    return std::make_unique<CudaDevice>();
  } catch (const std::exception& e) {
    why = std::string("CUDA device unusable: ") + e.what();
    return nullptr;
  }
}

}  // namespace tessel::jit
