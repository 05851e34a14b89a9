// jit::Stream: a stream tessel creates on a device and destroys with the object.
#include "tessel/jit/stream.hpp"

#include <utility>

#include "tessel/jit/device.hpp"

namespace tessel::jit {

Stream::Stream(Device& device, bool non_blocking)
    : device_(&device), handle_(device.create_stream(non_blocking).handle) {}
Stream::Stream() : Stream(Device::current()) {}
Stream::~Stream() { destroy(); }
Stream::Stream(Stream&& o) noexcept : device_(o.device_), handle_(std::exchange(o.handle_, nullptr)) {}
Stream& Stream::operator=(Stream&& o) noexcept {
  if (this != &o) {
    destroy();
    device_ = o.device_;
    handle_ = std::exchange(o.handle_, nullptr);
  }
  return *this;
}
void Stream::synchronize() const { device_->synchronize(ref()); }
void Stream::destroy() noexcept {
  if (handle_ != nullptr) device_->destroy_stream(StreamRef{std::exchange(handle_, nullptr)});
}

}  // namespace tessel::jit
