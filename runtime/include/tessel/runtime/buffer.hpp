// DeviceBuffer: an owned device allocation with size-checked copies.
#pragma once
#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <ranges>

namespace tessel::rt {

// Device memory from cuMemAlloc, freed on destruction. Every copy is checked against
// size() and throws std::out_of_range instead of touching memory it does not own.
// Movable, not copyable. A zero-byte buffer is valid and has ptr() == 0.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  CUdeviceptr ptr() const { return ptr_; }
  size_t size() const { return bytes_; }

  // Synchronous copies of `bytes` at byte `offset` into the buffer.
  void upload(const void* src, size_t bytes, size_t offset = 0);
  void download(void* dst, size_t bytes, size_t offset = 0) const;
  // Stream-ordered copies; host memory must stay alive until the stream reaches them.
  void upload_async(const void* src, size_t bytes, CUstream stream, size_t offset = 0);
  void download_async(void* dst, size_t bytes, CUstream stream, size_t offset = 0) const;

  // Whole-range helpers for contiguous containers (std::vector, std::array, std::span).
  template <std::ranges::contiguous_range R>
  void upload(const R& src, size_t offset = 0) {
    upload(std::ranges::data(src), std::ranges::size(src) * sizeof(std::ranges::range_value_t<R>),
           offset);
  }
  template <std::ranges::contiguous_range R>
  void download(R&& dst, size_t offset = 0) const {
    download(std::ranges::data(dst), std::ranges::size(dst) * sizeof(std::ranges::range_value_t<R>),
             offset);
  }

  // Sets every byte of the buffer.
  void memset(uint8_t value);
  // Sets every 32-bit word (size() must be a multiple of 4), e.g. a NaN poison pattern.
  void fill_u32(uint32_t value);

 private:
  void check_range(const char* what, size_t bytes, size_t offset) const;
  CUdeviceptr ptr_ = 0;
  size_t bytes_ = 0;
};

}  // namespace tessel::rt
