// Memory a stand-in at::Tensor (fake_aten) may point at on the current device, for the tests of
// samples/torch's headers: host memory registered with the interpreter (CPU tensors), or an
// Array's on a GPU (CUDA tensors of its ordinal).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "tessel/tessel.hpp"

#include <ATen/core/Tensor.h>

namespace tessel_test {

inline bool on_interpreter() { return tessel::jit::Device::current().kind() == tessel::jit::BackendKind::Interpreter; }

// n floats a tensor may use on the current device: host memory registered with the interpreter,
// or an Array's on a GPU; the tensor says which (CPU, or CUDA of the GPU's ordinal).
class Buffer {
 public:
  explicit Buffer(size_t n) : dev_(tessel::jit::Device::current()), n_(n) {
    if (on_interpreter()) {
      host_.resize(n);
      registration_ = std::make_unique<tessel::jit::ExternalMemory>(dev_, host_.data(), n * sizeof(float));
    } else {
      array_.emplace(n, dev_);
    }
  }
  void* data() {
    return array_ ? reinterpret_cast<void*>(static_cast<uintptr_t>(array_->address())) : host_.data();
  }
  uint64_t addr() { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(data())); }
  at::Tensor tensor(c10::ScalarType dtype = c10::ScalarType::Float) {
    const c10::Device d = array_ ? c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(dev_.ordinal()))
                                 : c10::Device(c10::DeviceType::CPU);
    return at::Tensor(dtype, d, data());
  }
  // A float tensor starting `offset` elements into the buffer (a chunk, as narrow() gives).
  at::Tensor tensor_at(size_t offset) {
    const at::Tensor t = tensor();
    return at::Tensor(t.scalar_type(), t.device(), static_cast<float*>(data()) + offset);
  }
  void write(const std::vector<float>& v) { dev_.upload(addr(), v.data(), v.size() * sizeof(float)); }
  std::vector<float> read() {
    std::vector<float> v(n_);
    dev_.download(v.data(), addr(), n_ * sizeof(float));
    return v;
  }
  void poison() { dev_.fill_bytes(addr(), 0xFF, n_ * sizeof(float)); }

 private:
  tessel::jit::Device& dev_;
  size_t n_;
  std::vector<float> host_;
  std::unique_ptr<tessel::jit::ExternalMemory> registration_;
  std::optional<tessel::jit::Array<float>> array_;
};

}  // namespace tessel_test
