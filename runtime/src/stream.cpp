// Stream: cuStreamCreate/Destroy/Synchronize.
#include "tessel/runtime/stream.hpp"

#include <utility>

#include "tessel/runtime/driver.hpp"
#include "tessel/runtime/error.hpp"

namespace tessel::rt {

Stream::Stream(unsigned flags) { check(cu().StreamCreate(&stream_, flags), "cuStreamCreate"); }

// Destroy errors are ignored: destructors cannot throw and the handle is unusable anyway.
Stream::~Stream() {
  if (stream_ != nullptr) cu().StreamDestroy(stream_);
}

Stream::Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    if (stream_ != nullptr) cu().StreamDestroy(stream_);
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

void Stream::synchronize() const { check(cu().StreamSynchronize(stream_), "cuStreamSynchronize"); }

}  // namespace tessel::rt
