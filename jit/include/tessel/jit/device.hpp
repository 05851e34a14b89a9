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
#include "tessel/jit/stream.hpp"

namespace tessel::jit {

enum class BackendKind { Interpreter, Cuda };

// Device::current() under TESSEL_REQUIRE_GPU=1 when the GPU cannot be used: the environment's
// fault (no driver, no device, TESSEL_INTERPRET=1), not tessel's; the message says which.
class GpuRequiredError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An execution backend. The process uses one kind: the CPU interpreter when TESSEL_INTERPRET=1
// (or select() asked for it) or when no GPU backend is usable, else the GPUs, one Device per GPU
// the driver shows (by ordinal, each on its primary context, the one the CUDA runtime and
// frameworks use). Under TESSEL_REQUIRE_GPU=1 only select(Interpreter) gives the interpreter:
// an unusable GPU or TESSEL_INTERPRET=1 makes current() throw GpuRequiredError with the reason.
//
// Each thread has a current device (set_current, DeviceGuard; device 0 until set) and, per
// device, a current stream (set_current_stream, StreamGuard; the legacy default stream until
// set): what a launch without LaunchOptions uses, as frameworks keep theirs. No tessel call
// leaves another CUDA context current on the calling thread than the one it found.
class Device {
 public:
  virtual ~Device() = default;

  // The calling thread's current device (device 0 until set_current on this thread).
  static Device& current();
  // The devices of the process's backend: the GPUs the driver shows, or 1 (the interpreter).
  static int count();
  // Device `ordinal`; std::out_of_range naming count() when there is none.
  static Device& get(int ordinal);
  // Makes `d` the calling thread's current device.
  static void set_current(Device& d);
  static void set_current(int ordinal) { set_current(get(ordinal)); }
  // The calling thread's current stream on `d` (null: the legacy default stream).
  static StreamRef current_stream(const Device& d);
  // Sets the calling thread's current stream on its current device.
  static void set_current_stream(StreamRef s);
  static void set_current_stream(Device& d, StreamRef s);
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
  // The device's ordinal among count() (0 for the interpreter).
  virtual int ordinal() const { return 0; }

  // Streams (jit::Stream uses these; null is the legacy default stream). On the interpreter,
  // create gives null and synchronize returns at once: its launches are synchronous.
  virtual StreamRef create_stream(bool non_blocking) = 0;
  virtual void destroy_stream(StreamRef s) noexcept = 0;
  virtual void synchronize(StreamRef s) = 0;

  // Memory the caller owns, for kernels to use as arguments (DevicePtr, DLPack tensors). The
  // interpreter accepts only addresses inside its allocations and regions registered here
  // (host memory, which must outlive the registration); the GPU needs no registration (any
  // device memory of the device's primary context is valid), so there these only check the
  // arguments. std::invalid_argument for an empty or overlapping region, or an unknown one.
  virtual void register_external(const void* p, size_t bytes) = 0;
  virtual void unregister_external(const void* p) = 0;

  // Compiles an IR kernel (already through the passes) for this backend.
  virtual std::shared_ptr<Executable> compile(std::shared_ptr<const ir::Function> f,
                                              const CompileOptions& opts) = 0;
};

// Makes a device the calling thread's current one for the guard's lifetime.
class DeviceGuard {
 public:
  explicit DeviceGuard(Device& d) : prev_(&Device::current()) { Device::set_current(d); }
  explicit DeviceGuard(int ordinal) : DeviceGuard(Device::get(ordinal)) {}
  ~DeviceGuard() { Device::set_current(*prev_); }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  Device* prev_;
};

// Makes a stream the calling thread's current one on a device (the current device, or the
// stream's own for a jit::Stream) for the guard's lifetime.
class StreamGuard {
 public:
  explicit StreamGuard(StreamRef s) : StreamGuard(Device::current(), s) {}
  explicit StreamGuard(const Stream& s) : StreamGuard(s.device(), s.ref()) {}
  StreamGuard(Device& d, StreamRef s) : dev_(&d), prev_(Device::current_stream(d)) { Device::set_current_stream(d, s); }
  ~StreamGuard() { Device::set_current_stream(*dev_, prev_); }
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  Device* dev_;
  StreamRef prev_;
};

// Registers caller-owned memory with a device for the guard's lifetime (see
// Device::register_external): the same program then passes host memory to the interpreter
// and device memory to the GPU.
class ExternalMemory {
 public:
  ExternalMemory(Device& d, const void* p, size_t bytes) : dev_(&d), p_(p) { d.register_external(p, bytes); }
  ~ExternalMemory();  // never throws
  ExternalMemory(const ExternalMemory&) = delete;
  ExternalMemory& operator=(const ExternalMemory&) = delete;

 private:
  Device* dev_;
  const void* p_;
};

// A typed device address the caller owns (a cudaMalloc pointer, a framework's tensor data),
// passed to a Ptr<T> parameter. Its alignment is a launch fact as an Array's is: an address
// divisible by 16 selects the variant specialised for it. Arithmetic is in elements of T.
template <class T>
struct DevicePtr {
  uint64_t addr = 0;

  static DevicePtr of(const void* p) { return {static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p))}; }
  T* get() const { return reinterpret_cast<T*>(static_cast<uintptr_t>(addr)); }
  friend constexpr DevicePtr operator+(DevicePtr p, int64_t n) { return {p.addr + static_cast<uint64_t>(n) * sizeof(T)}; }
  friend constexpr DevicePtr operator+(int64_t n, DevicePtr p) { return p + n; }
  friend constexpr DevicePtr operator-(DevicePtr p, int64_t n) { return {p.addr - static_cast<uint64_t>(n) * sizeof(T)}; }
  DevicePtr& operator+=(int64_t n) { return *this = *this + n; }
  friend constexpr bool operator==(DevicePtr, DevicePtr) = default;
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
  Device& device() const { return *dev_; }

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
