// samples/torch/torch_pointer.hpp without PyTorch: at::Tensor is the stand-in of
// tests/torch/fake_aten (dtype, device, data pointer; what the header reads). A launch of the
// samples' softmax over such tensors against a host reference, then every check the header makes,
// each by its message. The real operators are tested with PyTorch on a GPU
// (samples/torch/test_tessel_torch.py).
//
// The launch runs on the current device: on the interpreter over host memory registered with it
// (CPU tensors), on a GPU over an Array's memory (CUDA tensors of its ordinal). GPU-only checks
// run on the fake GPU device of tests/jit/fake_gpu_device.hpp.
#include "torch_pointer.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "../jit/fake_gpu_device.hpp"
#include "tensor_buffer.hpp"
#include "tessel/samples/reduction_kernels.hpp"
#include "tessel/tessel.hpp"
#include "../common/pointer_check_of.hpp"

using namespace tessel;

namespace {

using tessel_test::Buffer;
using tessel_test::on_interpreter;

using tessel_test::check_of;

uint64_t address(const at::Tensor& t, const jit::PointerCheck& c) { return jit::PointerArgument<at::Tensor>::address(t, c); }

}  // namespace

TEST_CASE("torch tensors: the samples' softmax over at::Tensor arguments matches the host reference") {
  const int64_t rows = 3, cols = 37;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<float> x(rows * cols);
  for (float& v : x) v = dist(rng);
  Buffer xb(x.size()), ob(x.size());
  xb.write(x);
  ob.poison();
  samples::k_softmax(jit::Grid{static_cast<uint32_t>(rows)}, jit::Meta{{"BLOCK", 64}}, xb.tensor(), ob.tensor(), cols,
                     cols, cols);
  const std::vector<float> out = ob.read();
  for (int64_t r = 0; r < rows; ++r) {
    double mx = -INFINITY, sum = 0;
    for (int64_t k = 0; k < cols; ++k) mx = std::max(mx, double(x[r * cols + k]));
    for (int64_t k = 0; k < cols; ++k) sum += std::exp(x[r * cols + k] - mx);
    for (int64_t k = 0; k < cols; ++k) {
      const double want = std::exp(x[r * cols + k] - mx) / sum;
      INFO("row " << r << ", column " << k);
      CHECK(std::fabs(out[r * cols + k] - want) <= 1e-6 + 2e-5 * want);
    }
  }
}

TEST_CASE("torch tensors: a launch names the kernel and parameter of a tensor of the wrong dtype") {
  Buffer xb(8), ob(8);
  CHECK_THROWS_WITH_AS(samples::k_softmax(jit::Grid{1}, jit::Meta{{"BLOCK", 8}}, xb.tensor(), ob.tensor(c10::ScalarType::Half),
                                          8, 8, 8),
                       "kernel 'softmax', parameter 'out' (argument 2): expected a tensor of torch.float32 (f32), got "
                       "torch.float16",
                       std::invalid_argument);
}

TEST_CASE("torch tensors: each element type takes its one torch dtype") {
  alignas(16) static unsigned char data[64];
  const struct {
    ir::Scalar s;
    c10::ScalarType ok, wrong;
    const char* want;
    const char* got;
  } rows[] = {
      {ir::Scalar::i1, c10::ScalarType::Bool, c10::ScalarType::Byte, "torch.bool (i1)", "torch.uint8"},
      {ir::Scalar::i8, c10::ScalarType::Char, c10::ScalarType::Byte, "torch.int8 (i8)", "torch.uint8"},
      {ir::Scalar::i16, c10::ScalarType::Short, c10::ScalarType::Half, "torch.int16 (i16)", "torch.float16"},
      {ir::Scalar::i32, c10::ScalarType::Int, c10::ScalarType::Float, "torch.int32 (i32)", "torch.float32"},
      {ir::Scalar::i64, c10::ScalarType::Long, c10::ScalarType::Double, "torch.int64 (i64)", "torch.float64"},
      {ir::Scalar::f16, c10::ScalarType::Half, c10::ScalarType::BFloat16, "torch.float16 (f16)", "torch.bfloat16"},
      {ir::Scalar::bf16, c10::ScalarType::BFloat16, c10::ScalarType::Half, "torch.bfloat16 (bf16)", "torch.float16"},
      {ir::Scalar::f32, c10::ScalarType::Float, c10::ScalarType::Int, "torch.float32 (f32)", "torch.int32"},
      {ir::Scalar::f64, c10::ScalarType::Double, c10::ScalarType::Long, "torch.float64 (f64)", "torch.int64"},
  };
  for (const auto& r : rows) {
    INFO(r.want);
    const jit::PointerCheck c = check_of(r.s, nullptr);
    CHECK(address(at::Tensor(r.ok, c10::Device(c10::DeviceType::CPU), data), c) ==
          static_cast<uint64_t>(reinterpret_cast<uintptr_t>(data)));
    CHECK_THROWS_WITH_AS(address(at::Tensor(r.wrong, c10::Device(c10::DeviceType::CPU), data), c),
                         (std::string("kernel 'k', parameter 'x' (argument 1): expected a tensor of ") + r.want +
                          ", got " + r.got)
                             .c_str(),
                         std::invalid_argument);
  }
  // A dtype the header has no name for is given by number.
  CHECK_THROWS_WITH_AS(address(at::Tensor(c10::ScalarType::ComplexFloat, c10::Device(c10::DeviceType::CPU), data),
                               check_of(ir::Scalar::f32, nullptr)),
                       doctest::Contains("got torch dtype #8"), std::invalid_argument);
}

TEST_CASE("torch tensors: on a GPU, a CUDA tensor of that GPU's ordinal") {
  tessel_test::FakeGpuDevice gpu1(1);
  alignas(16) static float data[4];
  const jit::PointerCheck c = check_of(ir::Scalar::f32, &gpu1);
  auto on = [&](c10::Device d) { return address(at::Tensor(c10::ScalarType::Float, d, data), c); };
  CHECK(on(c10::Device(c10::DeviceType::CUDA, 1)) == static_cast<uint64_t>(reinterpret_cast<uintptr_t>(data)));
  CHECK_THROWS_WITH_AS(on(c10::Device(c10::DeviceType::CUDA, 0)),
                       "kernel 'k', parameter 'x' (argument 1): expected a tensor on cuda:1, where the launch runs "
                       "(GPU: Fake GPU 1 (sm_90)), got one on cuda:0 (launch on the tensor's device: "
                       "LaunchOptions{Device::get(t.get_device()), stream})",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(on(c10::Device(c10::DeviceType::CPU)), doctest::Contains("got one on cpu"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(on(c10::Device(c10::DeviceType::Meta)), doctest::Contains("got one on meta"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(on(c10::Device(c10::DeviceType::PrivateUse1, 1)), doctest::Contains("got one on device type #20"),
                       std::invalid_argument);
}

TEST_CASE("torch tensors: the interpreter takes CPU tensors only") {
  if (!on_interpreter()) {
    MESSAGE("CPU tensors on the interpreter: an interpreter check, not made on the GPU");
    return;
  }
  alignas(16) static float data[4];
  const jit::PointerCheck c = check_of(ir::Scalar::f32, &jit::Device::current());
  CHECK(address(at::Tensor(c10::ScalarType::Float, c10::Device(c10::DeviceType::CPU), data), c) ==
        static_cast<uint64_t>(reinterpret_cast<uintptr_t>(data)));
  CHECK_THROWS_WITH_AS(address(at::Tensor(c10::ScalarType::Float, c10::Device(c10::DeviceType::CUDA, 0), data), c),
                       ("kernel 'k', parameter 'x' (argument 1): expected a CPU tensor for the launch on the " +
                        jit::Device::current().describe() + ", got one on cuda:0")
                           .c_str(),
                       std::invalid_argument);
}

TEST_CASE("torch tensors: undefined, null and misaligned tensors") {
  alignas(16) static unsigned char data[16];
  const jit::PointerCheck c = check_of(ir::Scalar::f32, nullptr);
  CHECK_THROWS_WITH_AS(address(at::Tensor(), c),
                       "kernel 'k', parameter 'x' (argument 1): expected a tensor of torch.float32 (f32), got an "
                       "undefined tensor",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(address(at::Tensor(c10::ScalarType::Float, c10::Device(c10::DeviceType::CPU), nullptr), c),
                       "kernel 'k', parameter 'x' (argument 1): the tensor's data is null (an empty tensor has nothing "
                       "to launch on)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(address(at::Tensor(c10::ScalarType::Float, c10::Device(c10::DeviceType::CPU), data + 2), c),
                       "kernel 'k', parameter 'x' (argument 1): the tensor's address is not a multiple of 4 bytes, the "
                       "size of its f32 elements",
                       std::invalid_argument);
  // One-byte elements have no alignment to keep.
  CHECK(address(at::Tensor(c10::ScalarType::Char, c10::Device(c10::DeviceType::CPU), data + 1),
                check_of(ir::Scalar::i8, nullptr)) == static_cast<uint64_t>(reinterpret_cast<uintptr_t>(data + 1)));
}
