// A PointerCheck for parameter 'x' of a kernel 'k' taking Ptr<s>: what a launch hands a
// PointerArgument specialisation, for tests that call one directly (DLPack, at::Tensor).
#pragma once
#include "tessel/ir/types.hpp"
#include "tessel/jit/pointer_argument.hpp"

namespace tessel_test {

inline tessel::jit::PointerCheck check_of(tessel::ir::Scalar s, const tessel::jit::Device* dev) {
  tessel::jit::PointerCheck c;
  c.kernel = "k";
  c.param = "x";
  c.scalar = s;
  c.elem_bytes = static_cast<size_t>(tessel::ir::DType{s}.bytes());
  c.device = dev;
  return c;
}

}  // namespace tessel_test
