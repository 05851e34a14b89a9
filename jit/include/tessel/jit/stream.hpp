// Streams a launch runs on: the caller's (CUstream / cudaStream_t, borrowed) or one tessel owns.
#pragma once
#include <memory>

// The driver's and the runtime's stream handles are both `CUstream_st*` (cuda.h's CUstream,
// cuda_runtime.h's cudaStream_t): declared here so tessel's headers need neither.
struct CUstream_st;

namespace tessel::jit {

class Device;

// A stream to launch on, not owned: null is the legacy default stream (the default everywhere).
// Converts from a CUstream / cudaStream_t and from a jit::Stream. On the CPU interpreter every
// launch runs synchronously, so any stream given there is accepted and has no effect.
struct StreamRef {
  CUstream_st* handle = nullptr;
  constexpr StreamRef() = default;
  constexpr StreamRef(CUstream_st* h) : handle(h) {}  // NOLINT: implicit, so a cudaStream_t passes as is
  friend constexpr bool operator==(StreamRef, StreamRef) = default;
};

// A stream tessel creates on a device and destroys with the object (a non-blocking one does not
// synchronise with the legacy default stream). On the interpreter it is the null stream.
// Movable, not copyable. std::runtime_error (rt::CudaError) when the driver refuses.
class Stream {
 public:
  explicit Stream(Device& device, bool non_blocking = false);
  Stream();  // on Device::current()
  ~Stream();
  Stream(Stream&&) noexcept;
  Stream& operator=(Stream&&) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  StreamRef ref() const { return StreamRef{handle_}; }
  operator StreamRef() const { return ref(); }  // NOLINT: a Stream passes wherever a StreamRef is taken
  CUstream_st* handle() const { return handle_; }
  Device& device() const { return *device_; }
  // Waits for the work queued on the stream; a failed kernel's error is thrown here.
  void synchronize() const;

 private:
  void destroy() noexcept;
  Device* device_ = nullptr;
  CUstream_st* handle_ = nullptr;
};

// Where one launch runs: the device (null: the calling thread's current device, see
// Device::current) and the stream (unset: the thread's current stream for that device, see
// Device::set_current_stream, which is the legacy default stream unless set).
struct LaunchOptions {
  Device* device = nullptr;
  StreamRef stream;
  bool stream_set = false;  // false: take the thread's current stream for the device

  constexpr LaunchOptions() = default;
  constexpr LaunchOptions(StreamRef s) : stream(s), stream_set(true) {}       // NOLINT: implicit
  constexpr LaunchOptions(CUstream_st* s) : stream(s), stream_set(true) {}    // NOLINT: implicit
  LaunchOptions(const Stream& s) : device(&s.device()), stream(s.ref()), stream_set(true) {}  // NOLINT
  constexpr LaunchOptions(Device& d, StreamRef s) : device(&d), stream(s), stream_set(true) {}
  constexpr explicit LaunchOptions(Device& d) : device(&d) {}
};

}  // namespace tessel::jit
