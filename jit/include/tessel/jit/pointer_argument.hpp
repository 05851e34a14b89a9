// PointerArgument<H>: how a host value of type H passes to a kernel's Ptr<T> parameter, for
// types tessel does not own (DLPack tensors in tessel/jit/dlpack.hpp, a framework's tensors).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tessel/ir/types.hpp"

namespace tessel::jit {

class Device;

// What a launch expects of one pointer argument, and the names an error gives.
struct PointerCheck {
  std::string_view kernel;  // the kernel's name
  std::string_view param;   // the parameter's name ("" when the kernel was given none)
  size_t index = 0;         // the parameter's position (0-based)
  ir::Scalar scalar = ir::Scalar::f32;  // the element type Ptr<T> points to
  size_t elem_bytes = 0;
  const Device* device = nullptr;       // where the launch runs

  // "kernel 'softmax', parameter 'x' (argument 1)" (argument numbers count from 1).
  std::string where() const;
  // Throws std::invalid_argument("<where()>: <what>").
  [[noreturn]] void fail(const std::string& what) const;
  // The element type's name, e.g. "f32", "bf16".
  std::string_view dtype_name() const;
};

// Specialise for a type H to pass it as a Ptr<T> argument:
//   template <> struct tessel::jit::PointerArgument<MyTensor> {
//     static uint64_t address(const MyTensor& t, const PointerCheck& c);  // c.fail(...) on a mismatch
//   };
// The address returned is what the kernel reads (its alignment selects the variant as an
// Array's does). The primary template is left undefined.
template <class H>
struct PointerArgument;

template <class H>
concept HasPointerArgument = requires(const H& h, const PointerCheck& c) {
  { PointerArgument<H>::address(h, c) } -> std::convertible_to<uint64_t>;
};

}  // namespace tessel::jit
