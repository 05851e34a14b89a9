// Stream: cuStreamCreate/Destroy/Synchronize.
#include "tessel/runtime/stream.hpp"

#include <utility>

#include "release.hpp"
#include "tessel/runtime/driver.hpp"
#include "tessel/runtime/error.hpp"

namespace tessel::rt {

Stream::Stream(unsigned flags) { check(cu().StreamCreate(&stream_, flags), "cuStreamCreate"); }

// Destroy errors are noted, never thrown: destructors cannot throw and the handle is unusable anyway.
static void destroy_stream(CUstream s) noexcept {
  if (s != nullptr) detail::release_call("cuStreamDestroy", [&](const DriverApi& api) { return api.StreamDestroy(s); });
}

Stream::~Stream() { destroy_stream(stream_); }

Stream::Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    destroy_stream(stream_);
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

void Stream::synchronize() const { check(cu().StreamSynchronize(stream_), "cuStreamSynchronize"); }

}  // namespace tessel::rt
