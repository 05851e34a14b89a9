// DeviceBuffer: cuMemAlloc/Free and range-checked copies and fills.
#include "tessel/runtime/buffer.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

#include "release.hpp"
#include "tessel/runtime/driver.hpp"
#include "tessel/runtime/error.hpp"

namespace tessel::rt {

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  // cuMemAlloc rejects 0 bytes; an empty buffer is still a useful value (empty tensors).
  if (bytes == 0) return;
  CUresult r = cu().MemAlloc(&ptr_, bytes);
  if (r != CUDA_SUCCESS) throw CudaError(r, "cuMemAlloc", fmt::format("{} bytes", bytes));
}

// A failed free (e.g. after a sticky kernel fault) is noted, never thrown: destructors cannot
// throw, and nothing more could be done with the pointer anyway.
static void free_buffer(CUdeviceptr ptr) noexcept {
  if (ptr != 0) detail::release_call("cuMemFree", [&](const DriverApi& api) { return api.MemFree(ptr); });
}

DeviceBuffer::~DeviceBuffer() { free_buffer(ptr_); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, 0)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    free_buffer(ptr_);
    ptr_ = std::exchange(other.ptr_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::check_range(const char* what, size_t bytes, size_t offset) const {
  // Written to avoid overflow in offset + bytes.
  if (offset > bytes_ || bytes > bytes_ - offset)
    throw std::out_of_range(fmt::format("DeviceBuffer::{}: {} bytes at offset {} exceed the {}-byte buffer",
                                        what, bytes, offset, bytes_));
}

void DeviceBuffer::upload(const void* src, size_t bytes, size_t offset) {
  check_range("upload", bytes, offset);
  if (bytes == 0) return;
  check(cu().MemcpyHtoD(ptr_ + offset, src, bytes), "cuMemcpyHtoD");
}

void DeviceBuffer::download(void* dst, size_t bytes, size_t offset) const {
  check_range("download", bytes, offset);
  if (bytes == 0) return;
  check(cu().MemcpyDtoH(dst, ptr_ + offset, bytes), "cuMemcpyDtoH");
}

void DeviceBuffer::upload_async(const void* src, size_t bytes, CUstream stream, size_t offset) {
  check_range("upload_async", bytes, offset);
  if (bytes == 0) return;
  check(cu().MemcpyHtoDAsync(ptr_ + offset, src, bytes, stream), "cuMemcpyHtoDAsync");
}

void DeviceBuffer::download_async(void* dst, size_t bytes, CUstream stream, size_t offset) const {
  check_range("download_async", bytes, offset);
  if (bytes == 0) return;
  check(cu().MemcpyDtoHAsync(dst, ptr_ + offset, bytes, stream), "cuMemcpyDtoHAsync");
}

void DeviceBuffer::memset(uint8_t value) {
  if (bytes_ == 0) return;
  check(cu().MemsetD8(ptr_, value, bytes_), "cuMemsetD8");
}

void DeviceBuffer::fill_u32(uint32_t value) {
  if (bytes_ % 4 != 0)
    throw std::invalid_argument(
        fmt::format("DeviceBuffer::fill_u32: size {} is not a multiple of 4 bytes", bytes_));
  if (bytes_ == 0) return;
  check(cu().MemsetD32(ptr_, value, bytes_ / 4), "cuMemsetD32");
}

}  // namespace tessel::rt
