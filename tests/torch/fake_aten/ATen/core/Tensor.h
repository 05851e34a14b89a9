// A stand-in for PyTorch's <ATen/core/Tensor.h> holding just what samples/torch/torch_pointer.hpp
// asks of a tensor (dtype, device, data pointer), so its checks are tested without PyTorch. The
// names and types follow PyTorch's (c10::ScalarType, c10::DeviceType, at::Tensor's accessors);
// nothing else of PyTorch is here.
#pragma once
#include <cstdint>

namespace c10 {

enum class ScalarType : int8_t {
  Byte, Char, Short, Int, Long, Half, Float, Double, ComplexFloat, Bool, BFloat16,
  Float8_e5m2, Float8_e4m3fn, UInt16, UInt32, UInt64, Undefined
};
enum class DeviceType : int8_t { CPU = 0, CUDA = 1, Meta = 9, PrivateUse1 = 20 };
using DeviceIndex = int8_t;

class Device {
 public:
  Device(DeviceType type, DeviceIndex index = -1) : type_(type), index_(index) {}
  DeviceType type() const { return type_; }
  DeviceIndex index() const { return index_; }

 private:
  DeviceType type_;
  DeviceIndex index_;
};

}  // namespace c10

namespace at {

// A tensor as torch_pointer.hpp sees it: undefined when default-constructed.
class Tensor {
 public:
  Tensor() = default;
  Tensor(c10::ScalarType dtype, c10::Device device, void* data)
      : defined_(true), dtype_(dtype), device_(device), data_(data) {}

  bool defined() const { return defined_; }
  c10::ScalarType scalar_type() const { return dtype_; }
  c10::Device device() const { return device_; }
  bool is_cuda() const { return device_.type() == c10::DeviceType::CUDA; }
  bool is_cpu() const { return device_.type() == c10::DeviceType::CPU; }
  bool is_meta() const { return device_.type() == c10::DeviceType::Meta; }
  int64_t get_device() const { return is_cpu() ? -1 : device_.index(); }
  void* data_ptr() const { return data_; }

 private:
  bool defined_ = false;
  c10::ScalarType dtype_ = c10::ScalarType::Undefined;
  c10::Device device_{c10::DeviceType::CPU};
  void* data_ = nullptr;
};

}  // namespace at
