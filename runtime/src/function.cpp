// Function: kernel attributes and the dynamic shared memory opt-in.
#include "tessel/runtime/function.hpp"

#include <fmt/format.h>

#include "tessel/runtime/driver.hpp"
#include "tessel/runtime/error.hpp"

namespace tessel::rt {

Function::Function(CUfunction fn, std::string name)
    : fn_(fn), api_(&Driver::get().api()), name_(std::move(name)) {}

int Function::attribute(CUfunction_attribute attr) const {
  int value = 0;
  check(api_->FuncGetAttribute(&value, attr, fn_), "cuFuncGetAttribute");
  return value;
}

int Function::num_regs() const { return attribute(CU_FUNC_ATTRIBUTE_NUM_REGS); }
int Function::local_size_bytes() const { return attribute(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES); }
int Function::max_threads_per_block() const {
  return attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
}
int Function::shared_size_bytes() const { return attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES); }
int Function::const_size_bytes() const { return attribute(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES); }

void Function::set_max_dynamic_shared(int bytes) {
  CUresult r =
      api_->FuncSetAttribute(fn_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
  if (r != CUDA_SUCCESS)
    throw CudaError(r, "cuFuncSetAttribute",
                    fmt::format("kernel {}: max dynamic shared memory {} bytes", name_, bytes));
}

}  // namespace tessel::rt
