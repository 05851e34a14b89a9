// Device: where kernels run (the GPU, or the CPU interpreter) and its memory, typed arrays.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessel/ir/ir.hpp"
#include "tessel/jit/executable.hpp"
#include "tessel/jit/options.hpp"

namespace tessel::jit {

enum class BackendKind { Interpreter, Cuda };

// Device::current() under TESSEL_REQUIRE_GPU=1 when the GPU cannot be used: the environment's
// fault (no driver, no device, TESSEL_INTERPRET=1), not tessel's; the message says which.
class GpuRequiredError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An execution backend. Device::current() picks one per process: the CPU interpreter when
// TESSEL_INTERPRET=1 (or select() asked for it) or when no GPU backend is usable, else the GPU.
// Under TESSEL_REQUIRE_GPU=1 only select(Interpreter) gives the interpreter: an unusable GPU or
// TESSEL_INTERPRET=1 makes current() throw GpuRequiredError with the reason.
class Device {
 public:
  virtual ~Device() = default;

  static Device& current();
  // Chooses the backend before first use (the CLI's --interpret). Throws if a different
  // backend is already in use.
  static void select(BackendKind kind);
  // Why the GPU is not used, when it is not ("" when it is).
  static std::string gpu_unavailable_reason();

  virtual BackendKind kind() const = 0;
  // A one-line description: "GPU: NVIDIA H100 80GB HBM3 (sm_90)" or "CPU interpreter (...)".
  virtual std::string describe() const = 0;

  virtual uint64_t alloc(size_t bytes) = 0;
  virtual void free(uint64_t addr) = 0;
  // free() for code that must not throw (Array's destructor, cleanup after an error): a failure,
  // such as every free after a GPU fault, is counted and reported once on stderr through
  // rt::note_release_failure instead of thrown. Never throws.
  void release(uint64_t addr) noexcept;
  virtual void upload(uint64_t dst, const void* src, size_t bytes) = 0;
  virtual void download(void* dst, uint64_t src, size_t bytes) = 0;
  virtual void fill_bytes(uint64_t dst, uint8_t byte, size_t bytes) = 0;
  // Device-to-device copy, ordered with launches (the autotuner restores inputs with it).
  virtual void copy(uint64_t dst, uint64_t src, size_t bytes) = 0;
  virtual void synchronize() = 0;

  // What tuned results are keyed by: the device's name ("NVIDIA H200", "CPU interpreter") and
  // architecture ("sm_90", "interpreter").
  virtual std::string name() const = 0;
  virtual std::string arch() const = 0;
  // Programs that run at once, one per multiprocessor (the SM count of a GPU; 1 on the CPU
  // interpreter): the grid a persistent kernel, whose programs loop over the work, asks for.
  virtual int multiprocessors() const { return 1; }

  // Compiles an IR kernel (already through the passes) for this backend.
  virtual std::shared_ptr<Executable> compile(std::shared_ptr<const ir::Function> f,
                                              const CompileOptions& opts) = 0;
};

// A typed device address (no ownership), for passing raw pointers to kernels.
template <class T>
struct DevicePtr {
  uint64_t addr = 0;
};

// An owning array of T in device memory (host memory for the interpreter).
template <class T>
class Array {
 public:
  // std::length_error when n elements of T do not fit in size_t bytes (the product would wrap).
  explicit Array(size_t n, Device& dev = Device::current())
      : dev_(&dev), n_(n), addr_(dev.alloc(std::max<size_t>(checked_count(n), 1) * sizeof(T))) {}
  Array(std::span<const T> host, Device& dev = Device::current()) : Array(host.size(), dev) { upload(host); }
  // Never throws: a free that fails (after a GPU fault) is noted by Device::release.
  ~Array() {
    if (addr_) dev_->release(addr_);
  }
  Array(Array&& o) noexcept : dev_(o.dev_), n_(o.n_), addr_(o.addr_) { o.addr_ = 0; }
  Array& operator=(Array&& o) noexcept {
    std::swap(dev_, o.dev_), std::swap(n_, o.n_), std::swap(addr_, o.addr_);
    return *this;
  }
  Array(const Array&) = delete;
  Array& operator=(const Array&) = delete;

  size_t size() const { return n_; }
  size_t bytes() const { return n_ * sizeof(T); }
  uint64_t address() const { return addr_; }
  DevicePtr<T> ptr() const { return {addr_}; }

  void upload(std::span<const T> host) { dev_->upload(addr_, host.data(), std::min(host.size(), n_) * sizeof(T)); }
  std::vector<T> download() const {
    std::vector<T> out(n_);
    dev_->download(out.data(), addr_, bytes());
    return out;
  }
  // Fills every byte with `b` (e.g. 0xFF poisons floats with NaN).
  void poison(uint8_t b = 0xFF) { dev_->fill_bytes(addr_, b, bytes()); }

 private:
  static size_t checked_count(size_t n) {
    if (n > SIZE_MAX / sizeof(T))
      throw std::length_error("Array: " + std::to_string(n) + " elements of " + std::to_string(sizeof(T)) +
                              " bytes exceed the address space");
    return n;
  }
  Device* dev_;
  size_t n_;
  uint64_t addr_;
};

}  // namespace tessel::jit
