// DLPack tensors as kernel arguments: a DLTensor* (or DLManagedTensor*) passes to a Ptr<T>
// parameter, checked against it at launch, and the shape helpers a launch needs (numel, strides).
//
// Header-only, so tessel itself does not depend on DLPack: a program that includes this header
// needs <dlpack/dlpack.h> (Debian libdlpack-dev; DLPack 0.6 or later, whose DLTensor layout has
// not changed since).
//
//   DLManagedTensor* x = ...;           // from a framework (torch.utils.dlpack.to_dlpack, ...)
//   k(grid, {}, x, out, n);             // its data pointer + byte_offset is what the kernel reads
//
// What a launch checks of each tensor, each failure a std::invalid_argument naming the kernel and
// the parameter (PointerCheck::fail):
//  - the tensor and its data are not null (an empty tensor's data may be null: launch nothing);
//  - its element type is the parameter's: kDLFloat 16/32/64 for f16/f32/f64, kDLBfloat 16 for
//    bf16, kDLInt 8/16/32/64 for i8..i64, and for i1 (one byte, nonzero is true) kDLBool 8
//    (DLPack 0.8's code 6) or kDLUInt 8, the label exporters older than 0.8 give booleans;
//    one lane (tessel kernels take scalar elements, not vector ones);
//  - its memory is the launch device's: on a GPU kDLCUDA with device_id the device's ordinal, or
//    kDLCUDAManaged (managed memory's device_id is 0 whatever GPU uses it, so it is not compared);
//    on the CPU interpreter host memory, kDLCPU or kDLCUDAHost, which must also be registered
//    (ExternalMemory) for the interpreter to accept the addresses a kernel touches;
//  - data + byte_offset, the address passed, is aligned to the element size.
// Shape and strides are not checked: the kernel gets only the address (use numel, strides,
// require_contiguous to derive and check the sizes a launch passes).
#pragma once
// A dlpack.h already included (PyTorch's <ATen/dlpack.h> is a copy with the same guard and the
// same structs) serves as well, so a file may include a framework's first.
#ifndef DLPACK_DLPACK_H_
#include <dlpack/dlpack.h>
#endif

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessel/jit/device.hpp"
#include "tessel/jit/pointer_argument.hpp"

namespace tessel::jit {
namespace dlpack {

// DLPack 0.8's boolean type code, absent from 0.6's enum.
inline constexpr uint8_t kDLBoolCode = 6;

// "kDLCUDA", "kDLCPU", ... (the number for a type this header does not name).
inline std::string device_type_name(int type) {
  switch (type) {
    case kDLCPU: return "kDLCPU";
    case kDLCUDA: return "kDLCUDA";
    case kDLCUDAHost: return "kDLCUDAHost";
    case kDLOpenCL: return "kDLOpenCL";
    case kDLVulkan: return "kDLVulkan";
    case kDLMetal: return "kDLMetal";
    case kDLVPI: return "kDLVPI";
    case kDLROCM: return "kDLROCM";
    case kDLROCMHost: return "kDLROCMHost";
    case kDLExtDev: return "kDLExtDev";
    case kDLCUDAManaged: return "kDLCUDAManaged";
    default: return "device type " + std::to_string(type);
  }
}

// "float32", "bfloat16", "int8", "uint8", "bool", "float32x4" (lanes), "code 9, 32 bits".
inline std::string dtype_str(DLDataType d) {
  std::string base;
  switch (d.code) {
    case kDLFloat: base = "float" + std::to_string(d.bits); break;
    case kDLBfloat: base = "bfloat" + std::to_string(d.bits); break;
    case kDLInt: base = "int" + std::to_string(d.bits); break;
    case kDLUInt: base = "uint" + std::to_string(d.bits); break;
    case kDLComplex: base = "complex" + std::to_string(d.bits); break;
    case kDLOpaqueHandle: base = "opaque handle (" + std::to_string(d.bits) + " bits)"; break;
    case kDLBoolCode: base = d.bits == 8 ? std::string("bool") : "bool (" + std::to_string(d.bits) + " bits)"; break;
    default: base = "type code " + std::to_string(d.code) + " (" + std::to_string(d.bits) + " bits)"; break;
  }
  if (d.lanes != 1) base += "x" + std::to_string(d.lanes);
  return base;
}

// The DLPack type(s) a tessel element type is exchanged as, in words: "float32: kDLFloat, 32 bits".
inline std::string expected_dtype_str(ir::Scalar s) {
  switch (s) {
    case ir::Scalar::i1: return "bool: kDLBool or kDLUInt, 8 bits";
    case ir::Scalar::i8: return "int8: kDLInt, 8 bits";
    case ir::Scalar::i16: return "int16: kDLInt, 16 bits";
    case ir::Scalar::i32: return "int32: kDLInt, 32 bits";
    case ir::Scalar::i64: return "int64: kDLInt, 64 bits";
    case ir::Scalar::f16: return "float16: kDLFloat, 16 bits";
    case ir::Scalar::bf16: return "bfloat16: kDLBfloat, 16 bits";
    case ir::Scalar::f32: return "float32: kDLFloat, 32 bits";
    case ir::Scalar::f64: return "float64: kDLFloat, 64 bits";
    case ir::Scalar::u8: return "uint8: kDLUInt, 8 bits";
    case ir::Scalar::u16: return "uint16: kDLUInt, 16 bits";
    case ir::Scalar::u32: return "uint32: kDLUInt, 32 bits";
    case ir::Scalar::u64: return "uint64: kDLUInt, 64 bits";
    case ir::Scalar::f8e4m3: return "float8_e4m3fn bits: kDLUInt, 8 bits";
    case ir::Scalar::f8e5m2: return "float8_e5m2 bits: kDLUInt, 8 bits";
  }
  return "?";
}

// Whether a DLPack element type (lanes aside) holds tessel's `s` (see the header's comment).
inline bool dtype_matches(DLDataType d, ir::Scalar s) {
  switch (s) {
    case ir::Scalar::i1: return d.bits == 8 && (d.code == kDLBoolCode || d.code == kDLUInt);
    case ir::Scalar::i8: return d.code == kDLInt && d.bits == 8;
    case ir::Scalar::i16: return d.code == kDLInt && d.bits == 16;
    case ir::Scalar::i32: return d.code == kDLInt && d.bits == 32;
    case ir::Scalar::i64: return d.code == kDLInt && d.bits == 64;
    case ir::Scalar::f16: return d.code == kDLFloat && d.bits == 16;
    case ir::Scalar::bf16: return d.code == kDLBfloat && d.bits == 16;
    case ir::Scalar::f32: return d.code == kDLFloat && d.bits == 32;
    case ir::Scalar::f64: return d.code == kDLFloat && d.bits == 64;
    case ir::Scalar::u8: return d.code == kDLUInt && d.bits == 8;
    case ir::Scalar::u16: return d.code == kDLUInt && d.bits == 16;
    case ir::Scalar::u32: return d.code == kDLUInt && d.bits == 32;
    case ir::Scalar::u64: return d.code == kDLUInt && d.bits == 64;
    // DLPack's fp8 codes are recent and not what exporters agree on: the bytes travel as uint8.
    case ir::Scalar::f8e4m3: case ir::Scalar::f8e5m2: return d.code == kDLUInt && d.bits == 8;
  }
  return false;
}

// "[2,3]"
inline std::string dims_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// The tensor's sizes; std::invalid_argument for a negative ndim or size, or a null shape.
inline std::vector<int64_t> shape(const DLTensor& t) {
  if (t.ndim < 0) throw std::invalid_argument("DLTensor: ndim is " + std::to_string(t.ndim) + " (expected >= 0)");
  if (t.ndim > 0 && !t.shape) throw std::invalid_argument("DLTensor: shape is null for a tensor of ndim " +
                                                          std::to_string(t.ndim));
  std::vector<int64_t> s(t.shape, t.shape + t.ndim);
  for (int64_t d : s)
    if (d < 0) throw std::invalid_argument("DLTensor: shape " + dims_str(s) + " has a negative size");
  return s;
}

// The number of elements (1 for a 0-d tensor).
inline int64_t numel(const DLTensor& t) {
  int64_t n = 1;
  for (int64_t d : shape(t)) n *= d;
  return n;
}

// The strides in elements: the tensor's, or the row-major ones when it gives none (null strides
// mean a compact row-major tensor).
inline std::vector<int64_t> strides(const DLTensor& t) {
  const std::vector<int64_t> s = shape(t);
  if (t.strides) return {t.strides, t.strides + t.ndim};
  std::vector<int64_t> r(s.size());
  int64_t step = 1;
  for (size_t i = s.size(); i-- > 0;) {
    r[i] = step;
    step *= s[i];
  }
  return r;
}

// Whether the elements are compact and row-major, so element i is at data + byte_offset + i *
// element size. A dimension of size 1 may have any stride (frameworks give such dimensions
// arbitrary ones), and a tensor of no elements is contiguous.
inline bool is_contiguous(const DLTensor& t) {
  const std::vector<int64_t> s = shape(t), st = strides(t);
  if (numel(t) == 0) return true;
  int64_t want = 1;
  for (size_t i = s.size(); i-- > 0;) {
    if (s[i] != 1 && st[i] != want) return false;
    want *= s[i];
  }
  return true;
}

// std::invalid_argument("<what>: expected a contiguous (row-major) tensor, got shape [..] with
// strides [..]") unless is_contiguous(t).
inline void require_contiguous(const DLTensor& t, const std::string& what) {
  if (!is_contiguous(t))
    throw std::invalid_argument(what + ": expected a contiguous (row-major) tensor, got shape " + dims_str(shape(t)) +
                                " with strides " + dims_str(strides(t)));
}

// The address a launch passes for tensor `t` to the parameter `c` describes: data + byte_offset,
// after the checks the header's comment lists (c.fail on each). One function for every
// PointerArgument specialisation, so the messages are written once.
inline uint64_t checked_address(const DLTensor* t, const PointerCheck& c) {
  const std::string want = std::string(c.dtype_name()) + " (" + expected_dtype_str(c.scalar) + ")";
  if (!t) c.fail("expected a DLPack tensor of " + want + ", got a null tensor pointer");
  if (!t->data)
    c.fail("the DLPack tensor's data is null (expected an address of the tensor's memory; an empty tensor has "
           "nothing to launch on)");
  if (t->dtype.lanes != 1)
    c.fail("expected a DLPack tensor of " + want + " with 1 lane, got " + dtype_str(t->dtype) + " (" +
           std::to_string(t->dtype.lanes) + " lanes): kernels take scalar elements");
  if (!dtype_matches(t->dtype, c.scalar))
    c.fail("expected a DLPack tensor of " + want + ", got " + dtype_str(t->dtype) + " (code " +
           std::to_string(t->dtype.code) + ", " + std::to_string(t->dtype.bits) + " bits)");
  if (c.device) {
    const DLDevice d = t->device;
    const std::string got = device_type_name(d.device_type) + " device_id " + std::to_string(d.device_id);
    if (c.device->kind() == BackendKind::Cuda) {
      const std::string dev = "the launch runs on GPU " + std::to_string(c.device->ordinal()) + " (" +
                              c.device->describe() + ")";
      if (d.device_type != kDLCUDA && d.device_type != kDLCUDAManaged)
        c.fail("expected GPU memory (DLPack kDLCUDA or kDLCUDAManaged), got " + got + ": " + dev);
      if (d.device_type == kDLCUDA && d.device_id != c.device->ordinal())
        c.fail("expected memory of GPU " + std::to_string(c.device->ordinal()) + " (kDLCUDA device_id " +
               std::to_string(c.device->ordinal()) + "), got " + got + ": " + dev +
               " (launch on the tensor's device: LaunchOptions{Device::get(id)} or a DeviceGuard)");
    } else if (d.device_type != kDLCPU && d.device_type != kDLCUDAHost) {
      c.fail("expected host memory (DLPack kDLCPU or kDLCUDAHost) for the launch on the " + c.device->describe() +
             ", got " + got);
    }
  }
  const auto data = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(t->data));
  if (t->byte_offset > UINT64_MAX - data)
    c.fail("the DLPack tensor's data + byte_offset (" + std::to_string(t->byte_offset) + ") wraps around the address space");
  const uint64_t addr = data + t->byte_offset;
  if (c.elem_bytes > 1 && addr % c.elem_bytes != 0)
    c.fail("the DLPack tensor's address (data + byte_offset " + std::to_string(t->byte_offset) +
           ") is not a multiple of " + std::to_string(c.elem_bytes) + " bytes, the size of its " +
           std::string(c.dtype_name()) + " elements");
  return addr;
}

}  // namespace dlpack

// The PointerArgument specialisations: a DLTensor or DLManagedTensor, by pointer or by reference.
template <>
struct PointerArgument<const DLTensor*> {
  static uint64_t address(const DLTensor* t, const PointerCheck& c) { return dlpack::checked_address(t, c); }
};
template <>
struct PointerArgument<DLTensor*> {
  static uint64_t address(const DLTensor* t, const PointerCheck& c) { return dlpack::checked_address(t, c); }
};
template <>
struct PointerArgument<DLTensor> {
  static uint64_t address(const DLTensor& t, const PointerCheck& c) { return dlpack::checked_address(&t, c); }
};
template <>
struct PointerArgument<const DLManagedTensor*> {
  static uint64_t address(const DLManagedTensor* m, const PointerCheck& c) {
    return dlpack::checked_address(m ? &m->dl_tensor : nullptr, c);
  }
};
template <>
struct PointerArgument<DLManagedTensor*> {
  static uint64_t address(const DLManagedTensor* m, const PointerCheck& c) {
    return dlpack::checked_address(m ? &m->dl_tensor : nullptr, c);
  }
};
template <>
struct PointerArgument<DLManagedTensor> {
  static uint64_t address(const DLManagedTensor& m, const PointerCheck& c) {
    return dlpack::checked_address(&m.dl_tensor, c);
  }
};

}  // namespace tessel::jit
