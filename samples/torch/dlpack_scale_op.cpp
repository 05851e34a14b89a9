// tessel::scale_dlpack(Tensor x, float s) -> Tensor: x * s by the samples' `scale` kernel, with x
// and the result passed to the launch as DLPack tensors made by PyTorch's own exporter
// (at::toDLPack): what a C++ program gets from any framework's to_dlpack, checked at launch by
// tessel/jit/dlpack.hpp (dtype, lanes, device and ordinal, byte offset, alignment).
#include <ATen/ATen.h>
#include <ATen/DLConvertor.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <cstdint>
#include <limits>
#include <memory>

#include "check_message.hpp"
#include "tessel/jit/dlpack.hpp"
#include "tessel/samples/elementwise_kernels.hpp"

namespace {

namespace tj = tessel::jit;

// Returns a DLManagedTensor to its producer (which releases its hold on the tensor's storage).
struct ReturnToProducer {
  void operator()(DLManagedTensor* t) const {
    if (t != nullptr && t->deleter != nullptr) t->deleter(t);
  }
};
using ManagedTensor = std::unique_ptr<DLManagedTensor, ReturnToProducer>;

at::Tensor scale_dlpack_cuda(const at::Tensor& x, double s) {
  TESSEL_TORCH_CHECK(x.scalar_type() == at::kFloat, "tessel::scale_dlpack: x must be torch.float32");
  TESSEL_TORCH_CHECK(x.is_cuda(), "tessel::scale_dlpack: x must be a CUDA tensor, got one on ", x.device());
  TESSEL_TORCH_CHECK(x.is_contiguous(), "tessel::scale_dlpack: x must be contiguous, got strides ", x.strides());
  at::Tensor out = at::empty_like(x);
  const int64_t n = x.numel();
  if (n == 0) return out;
  TESSEL_TORCH_CHECK(n <= std::numeric_limits<int32_t>::max(), "tessel::scale_dlpack: ", n,
                     " elements; the kernel's i32 offsets allow at most 2^31 - 1");
  ManagedTensor dx(at::toDLPack(x)), dout(at::toDLPack(out));
  tj::dlpack::require_contiguous(dx->dl_tensor, "tessel::scale_dlpack: x");
  const int device = x.get_device();
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(device)).stream();
  tessel::samples::k_scale(tj::Grid{tj::cdiv(n, 1024)}, tj::Meta{{"BLOCK", 1024}},
                           tj::LaunchOptions{tj::Device::get(device), stream}, dx.get(), dout.get(), n,
                           static_cast<float>(s));
  return out;  // the DLPack views are returned to PyTorch here; the launch holds only addresses
}

at::Tensor scale_dlpack_meta(const at::Tensor& x, double) { return at::empty_like(x); }

}  // namespace

TORCH_LIBRARY_FRAGMENT(tessel, m) { m.def("scale_dlpack(Tensor x, float s) -> Tensor"); }
TORCH_LIBRARY_IMPL(tessel, CUDA, m) { m.impl("scale_dlpack", &scale_dlpack_cuda); }
TORCH_LIBRARY_IMPL(tessel, Meta, m) { m.impl("scale_dlpack", &scale_dlpack_meta); }
