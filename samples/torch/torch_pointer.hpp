// PyTorch tensors as kernel arguments: an at::Tensor passes to a Ptr<T> parameter, its
// data_ptr() (storage offset included) being what the kernel reads.
//
//   at::Tensor x = ..., out = at::empty_like(x);
//   k_softmax(grid, meta, LaunchOptions{Device::get(x.get_device()), stream}, x, out, cols, cols, cols);
//
// What a launch checks of each tensor, each failure a std::invalid_argument naming the kernel and
// the parameter (PointerCheck::fail), which PyTorch shows as a Python exception:
//  - the tensor is defined and its data is not null (an empty tensor has nothing to launch on);
//  - its dtype is the parameter's element type (torch.float32 for f32, torch.float16 for f16, ...);
//  - its memory is the launch device's: a CUDA tensor on the GPU of the device's ordinal, or, on
//    the CPU interpreter, a CPU tensor (which must also be registered with the interpreter,
//    jit::ExternalMemory, for the kernel's accesses to be accepted);
//  - its address is aligned to the element size.
// Shape, strides and contiguity are the operator's to check: the kernel gets only the address.
#pragma once
#include <cstdint>
#include <string>

#include "tessel/jit/device.hpp"
#include "tessel/jit/pointer_argument.hpp"

#include <ATen/core/Tensor.h>

namespace tessel::torch_ext {

// The torch dtype that holds tessel's element type (one each: i1 is torch.bool).
inline c10::ScalarType torch_dtype_of(ir::Scalar s) {
  switch (s) {
    case ir::Scalar::i1: return c10::ScalarType::Bool;
    case ir::Scalar::i8: return c10::ScalarType::Char;
    case ir::Scalar::i16: return c10::ScalarType::Short;
    case ir::Scalar::i32: return c10::ScalarType::Int;
    case ir::Scalar::i64: return c10::ScalarType::Long;
    case ir::Scalar::f16: return c10::ScalarType::Half;
    case ir::Scalar::bf16: return c10::ScalarType::BFloat16;
    case ir::Scalar::f32: return c10::ScalarType::Float;
    case ir::Scalar::f64: return c10::ScalarType::Double;
    case ir::Scalar::u8: return c10::ScalarType::Byte;
    case ir::Scalar::u16: return c10::ScalarType::UInt16;
    case ir::Scalar::u32: return c10::ScalarType::UInt32;
    case ir::Scalar::u64: return c10::ScalarType::UInt64;
    case ir::Scalar::f8e4m3: return c10::ScalarType::Float8_e4m3fn;
    case ir::Scalar::f8e5m2: return c10::ScalarType::Float8_e5m2;
  }
  return c10::ScalarType::Undefined;
}

// A dtype as Python spells it ("torch.float32"), written here rather than taken from c10 so the
// messages need nothing of c10 beyond the enumerators.
inline std::string torch_dtype_name(c10::ScalarType t) {
  switch (t) {
    case c10::ScalarType::Bool: return "torch.bool";
    case c10::ScalarType::Byte: return "torch.uint8";
    case c10::ScalarType::Char: return "torch.int8";
    case c10::ScalarType::Short: return "torch.int16";
    case c10::ScalarType::Int: return "torch.int32";
    case c10::ScalarType::Long: return "torch.int64";
    case c10::ScalarType::Half: return "torch.float16";
    case c10::ScalarType::BFloat16: return "torch.bfloat16";
    case c10::ScalarType::Float: return "torch.float32";
    case c10::ScalarType::Double: return "torch.float64";
    default: return "torch dtype #" + std::to_string(static_cast<int>(t));
  }
}

// "cuda:1", "cpu", or the device type's number for others (meta tensors have no memory at all).
inline std::string torch_device_name(const at::Tensor& t) {
  if (t.is_cuda()) return "cuda:" + std::to_string(static_cast<int>(t.get_device()));
  if (t.is_cpu()) return "cpu";
  if (t.is_meta()) return "meta";
  return "device type #" + std::to_string(static_cast<int>(t.device().type()));
}

// The address a launch passes for `t` to the parameter `c` describes, after the checks the
// header's comment lists.
inline uint64_t checked_address(const at::Tensor& t, const jit::PointerCheck& c) {
  const c10::ScalarType want = torch_dtype_of(c.scalar);
  const std::string want_words = torch_dtype_name(want) + " (" + std::string(c.dtype_name()) + ")";
  if (!t.defined()) c.fail("expected a tensor of " + want_words + ", got an undefined tensor");
  if (t.scalar_type() != want)
    c.fail("expected a tensor of " + want_words + ", got " + torch_dtype_name(t.scalar_type()));
  if (c.device) {
    if (c.device->kind() == jit::BackendKind::Cuda) {
      const int ordinal = c.device->ordinal();
      if (!t.is_cuda() || t.get_device() != ordinal)
        c.fail("expected a tensor on cuda:" + std::to_string(ordinal) + ", where the launch runs (" +
               c.device->describe() + "), got one on " + torch_device_name(t) +
               " (launch on the tensor's device: LaunchOptions{Device::get(t.get_device()), stream})");
    } else if (!t.is_cpu()) {
      c.fail("expected a CPU tensor for the launch on the " + c.device->describe() + ", got one on " +
             torch_device_name(t));
    }
  }
  const void* p = t.data_ptr();
  if (!p) c.fail("the tensor's data is null (an empty tensor has nothing to launch on)");
  const auto addr = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
  if (c.elem_bytes > 1 && addr % c.elem_bytes != 0)
    c.fail("the tensor's address is not a multiple of " + std::to_string(c.elem_bytes) + " bytes, the size of its " +
           std::string(c.dtype_name()) + " elements");
  return addr;
}

}  // namespace tessel::torch_ext

namespace tessel::jit {

template <>
struct PointerArgument<at::Tensor> {
  static uint64_t address(const at::Tensor& t, const PointerCheck& c) { return torch_ext::checked_address(t, c); }
};

}  // namespace tessel::jit
