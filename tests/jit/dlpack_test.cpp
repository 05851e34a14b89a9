// DLPack tensors as kernel arguments (tessel/jit/dlpack.hpp): launches over tensors whose memory
// the test owns, every check a launch makes with its message, and the shape helpers.
//
// Launches run on the current device: on the CPU interpreter over host memory registered with
// it (ExternalMemory, as a CPU framework's tensors would be), on a GPU over an Array's memory.
// GPU-only checks (device type, device_id) run on a fake GPU device (fake_gpu_device.hpp), which
// they only ask for its kind and ordinal.
#include "tessel/jit/dlpack.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "fake_gpu_device.hpp"
#include "tessel/interp/interpreter.hpp"
#include "tessel/tessel.hpp"
#include "../common/pointer_check_of.hpp"

using namespace tessel;
using namespace tessel::lang;

namespace {

// out = x * 2 + y
void axpy_kernel(Ptr<f32> x, Ptr<f32> y, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask) * 2.0f + load(y + offs, mask), mask);
}

jit::Kernel<Ptr<f32>, Ptr<f32>, Ptr<f32>, Int, const Meta&>& axpy() {
  static jit::Kernel k{"axpy", &axpy_kernel, {"x", "y", "out", "n"}, Meta{{"BLOCK", 256}}};
  return k;
}

bool on_interpreter() { return jit::Device::current().kind() == jit::BackendKind::Interpreter; }

// The DLPack device of the current device's memory.
DLDevice launch_dl_device() {
  if (on_interpreter()) return {kDLCPU, 0};
  return {kDLCUDA, jit::Device::current().ordinal()};
}

// n floats a tensor may use on the current device: on the interpreter host memory the test owns,
// registered for the buffer's lifetime; on a GPU an Array's. Read and written through the
// device (upload/download/fill), which on the interpreter must accept the registered region.
class Buffer {
 public:
  explicit Buffer(size_t n) : dev_(jit::Device::current()), n_(n) {
    if (dev_.kind() == jit::BackendKind::Interpreter) {
      host_.resize(n);
      registration_ = std::make_unique<jit::ExternalMemory>(dev_, host_.data(), n * sizeof(float));
    } else {
      array_.emplace(n, dev_);
    }
  }
  float* data() const {
    return array_ ? reinterpret_cast<float*>(static_cast<uintptr_t>(array_->address()))
                  : const_cast<float*>(host_.data());
  }
  uint64_t addr() const { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(data())); }
  void write(const std::vector<float>& v) { dev_.upload(addr(), v.data(), v.size() * sizeof(float)); }
  std::vector<float> read() const {
    std::vector<float> v(n_);
    dev_.download(v.data(), addr(), n_ * sizeof(float));
    return v;
  }
  void poison() { dev_.fill_bytes(addr(), 0xFF, n_ * sizeof(float)); }

 private:
  jit::Device& dev_;
  size_t n_;
  std::vector<float> host_;                          // before registration_: unregistered first
  std::unique_ptr<jit::ExternalMemory> registration_;
  std::optional<jit::Array<float>> array_;
};

// A 1-d DLTensor over `data` (not copyable: `t.shape` points into it).
struct Tensor1d {
  int64_t size[1];
  DLTensor t{};
  Tensor1d(void* data, int64_t n, DLDataType dtype = {kDLFloat, 32, 1}, DLDevice dev = launch_dl_device()) {
    size[0] = n;
    t.data = data;
    t.device = dev;
    t.ndim = 1;
    t.dtype = dtype;
    t.shape = size;
    t.strides = nullptr;
    t.byte_offset = 0;
  }
  Tensor1d(const Tensor1d&) = delete;
  Tensor1d& operator=(const Tensor1d&) = delete;
};

std::vector<float> random_floats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  std::vector<float> v(n);
  for (float& f : v) f = u(rng);
  return v;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// The std::invalid_argument message of launching axpy with x given as `x` (y and out valid), or
// "no error".
std::string x_error(DLTensor* x) {
  Buffer y(16), out(16);
  Tensor1d ty(y.data(), 16), tout(out.data(), 16);
  try {
    axpy()(jit::Grid{1}, {}, x, &ty.t, &tout.t, 16);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

using tessel_test::check_of;

}  // namespace

TEST_CASE("dlpack: a kernel over DLPack tensors matches the host reference (sizes 1 and 4097)") {
  for (int64_t n : {1, 4097}) {
    CAPTURE(n);
    const std::vector<float> hx = random_floats(n, 11 + n), hy = random_floats(n, 29 + n);
    Buffer x(n), y(n), out(n);
    x.write(hx);
    y.write(hy);
    out.poison();
    // The three forms a caller has: a DLTensor*, a const DLTensor*, a framework's DLManagedTensor*.
    Tensor1d tx(x.data(), n), ty(y.data(), n);
    DLManagedTensor managed{};
    Tensor1d tout(out.data(), n);
    managed.dl_tensor = tout.t;
    const DLTensor* cy = &ty.t;
    axpy()(jit::Grid{static_cast<uint32_t>(jit::cdiv(n, 256))}, {}, &tx.t, cy, &managed, n);
    const std::vector<float> got = out.read();
    int wrong = 0;
    for (int64_t i = 0; i < n; ++i) {
      const float want = hx[i] * 2.0f + hy[i];
      if (!same_bits(got[i], want) && ++wrong <= 5) CHECK_MESSAGE(false, "out[" << i << "] = " << got[i] << ", want " << want);
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("dlpack: byte_offset is applied: the kernel reads from data + byte_offset") {
  const int64_t n = 300, k = 7;
  const std::vector<float> hx = random_floats(n + k, 3), hy = random_floats(n, 5);
  Buffer x(n + k), y(n), out(n);
  x.write(hx);
  y.write(hy);
  Tensor1d tx(x.data(), n), ty(y.data(), n), tout(out.data(), n);
  tx.t.byte_offset = k * sizeof(float);
  out.poison();
  axpy()(jit::Grid{2}, {}, &tx.t, &ty.t, &tout.t, n);
  std::vector<float> got = out.read();
  for (int64_t i = 0; i < n; ++i) REQUIRE(same_bits(got[i], hx[i + k] * 2.0f + hy[i]));

  // Only the sum is aligned: data 2 bytes into an element, byte_offset 6 more, is element 2.
  Tensor1d odd(reinterpret_cast<char*>(x.data()) + 2, n);
  odd.t.byte_offset = 6;
  out.poison();
  axpy()(jit::Grid{2}, {}, odd.t, &ty.t, &tout.t, n);  // a DLTensor passes by reference too
  got = out.read();
  for (int64_t i = 0; i < n; ++i) REQUIRE(same_bits(got[i], hx[i + 2] * 2.0f + hy[i]));
}

TEST_CASE("dlpack: every tensor a launch refuses, with its message") {
  Buffer x(16);
  const std::string where = "kernel 'axpy', parameter 'x' (argument 1): ";
  const std::string want = "expected a DLPack tensor of f32 (float32: kDLFloat, 32 bits)";

  CHECK(x_error(nullptr) == where + want + ", got a null tensor pointer");
  {
    Tensor1d t(nullptr, 16);
    CHECK(x_error(&t.t) == where + "the DLPack tensor's data is null (expected an address of the tensor's memory; "
                                   "an empty tensor has nothing to launch on)");
  }
  {
    Tensor1d t(x.data(), 16, {kDLInt, 32, 1});  // the type code
    CHECK(x_error(&t.t) == where + want + ", got int32 (code 0, 32 bits)");
  }
  {
    Tensor1d t(x.data(), 16, {kDLFloat, 64, 1});  // the bits
    CHECK(x_error(&t.t) == where + want + ", got float64 (code 2, 64 bits)");
  }
  {
    Tensor1d t(x.data(), 16, {kDLBfloat, 16, 1});
    CHECK(x_error(&t.t) == where + want + ", got bfloat16 (code 4, 16 bits)");
  }
  {
    Tensor1d t(x.data(), 4, {kDLFloat, 32, 4});  // lanes
    CHECK(x_error(&t.t) == where + want + " with 1 lane, got float32x4 (4 lanes): kernels take scalar elements");
  }
  {
    Tensor1d t(x.data(), 16);
    t.t.byte_offset = 2;  // the address is 2 bytes into an element
    CHECK(x_error(&t.t) == where + "the DLPack tensor's address (data + byte_offset 2) is not a multiple of 4 bytes, "
                                   "the size of its f32 elements");
  }
  {
    // Memory of another kind of device than the launch's.
    const bool interp = on_interpreter();
    Tensor1d t(x.data(), 16, {kDLFloat, 32, 1}, interp ? DLDevice{kDLCUDA, 0} : DLDevice{kDLCPU, 0});
    const std::string got = x_error(&t.t);
    if (interp)
      CHECK(got == where + "expected host memory (DLPack kDLCPU or kDLCUDAHost) for the launch on the " +
                       jit::Device::current().describe() + ", got kDLCUDA device_id 0");
    else
      CHECK(got.find(where + "expected GPU memory (DLPack kDLCUDA or kDLCUDAManaged), got kDLCPU device_id 0") == 0);
  }
  // The interpreter's own check: host memory that is not registered is outside every buffer.
  if (on_interpreter()) {
    std::vector<float> unregistered(16, 1.0f);
    Tensor1d t(unregistered.data(), 16);
    try {
      x_error(&t.t);
      FAIL("expected an InterpError for unregistered memory");
    } catch (const interp::InterpError& e) {
      const std::string msg = e.what();
      INFO(msg);
      CHECK(msg.find("outside every buffer") != std::string::npos);
      CHECK(msg.find("registered with it: ExternalMemory, Device::register_external") != std::string::npos);
    }
  } else {
    MESSAGE("unregistered host memory: an interpreter check, not made on the GPU");
  }
}

TEST_CASE("dlpack: on a GPU, the memory must be that GPU's (kDLCUDA device_id = its ordinal, or managed)") {
  tessel_test::FakeGpuDevice gpu1(1);
  alignas(16) static float data[4];
  const auto addr = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(data));
  const jit::PointerCheck c = check_of(ir::Scalar::f32, &gpu1);
  auto address = [&](DLDevice dev) {
    Tensor1d t(data, 4, {kDLFloat, 32, 1}, dev);
    return jit::PointerArgument<const DLTensor*>::address(&t.t, c);
  };
  CHECK(address({kDLCUDA, 1}) == addr);
  CHECK(address({kDLCUDAManaged, 0}) == addr);  // managed memory's device_id is always 0
  CHECK_THROWS_WITH_AS(address({kDLCUDA, 0}),
                       "kernel 'k', parameter 'x' (argument 1): expected memory of GPU 1 (kDLCUDA device_id 1), got "
                       "kDLCUDA device_id 0: the launch runs on GPU 1 (GPU: Fake GPU 1 (sm_90)) (launch on the "
                       "tensor's device: LaunchOptions{Device::get(id)} or a DeviceGuard)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(address({kDLCPU, 0}),
                       "kernel 'k', parameter 'x' (argument 1): expected GPU memory (DLPack kDLCUDA or kDLCUDAManaged), "
                       "got kDLCPU device_id 0: the launch runs on GPU 1 (GPU: Fake GPU 1 (sm_90))",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(address({kDLCUDAHost, 0}), doctest::Contains("expected GPU memory"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(address({kDLROCM, 1}), doctest::Contains("got kDLROCM device_id 1"), std::invalid_argument);
}

TEST_CASE("dlpack: the interpreter takes host memory (kDLCPU, kDLCUDAHost); no device, no device check") {
  alignas(16) static float data[4];
  const auto addr = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(data));
  Tensor1d t(data, 4, {kDLFloat, 32, 1}, {kDLCUDAHost, 0});
  if (on_interpreter()) {
    CHECK(jit::PointerArgument<DLTensor*>::address(&t.t, check_of(ir::Scalar::f32, &jit::Device::current())) == addr);
  }
  t.t.device = {kDLOpenCL, 3};  // not checked when the check names no device
  CHECK(jit::PointerArgument<DLTensor*>::address(&t.t, check_of(ir::Scalar::f32, nullptr)) == addr);
  DLManagedTensor m{};
  m.dl_tensor = t.t;
  CHECK(jit::PointerArgument<const DLManagedTensor*>::address(&m, check_of(ir::Scalar::f32, nullptr)) == addr);
  const DLManagedTensor* none = nullptr;
  CHECK_THROWS_WITH_AS(jit::PointerArgument<const DLManagedTensor*>::address(none, check_of(ir::Scalar::f32, nullptr)),
                       doctest::Contains("got a null tensor pointer"), std::invalid_argument);
}

TEST_CASE("dlpack: each element type's DLPack types, and i1 as kDLBool or kDLUInt bytes") {
  alignas(16) static unsigned char data[64];
  struct Row {
    ir::Scalar s;
    std::vector<DLDataType> accepted;
  };
  const std::vector<Row> rows = {
      {ir::Scalar::i1, {{kDLUInt, 8, 1}, {jit::dlpack::kDLBoolCode, 8, 1}}},
      {ir::Scalar::i8, {{kDLInt, 8, 1}}},
      {ir::Scalar::i16, {{kDLInt, 16, 1}}},
      {ir::Scalar::i32, {{kDLInt, 32, 1}}},
      {ir::Scalar::i64, {{kDLInt, 64, 1}}},
      {ir::Scalar::f16, {{kDLFloat, 16, 1}}},
      {ir::Scalar::bf16, {{kDLBfloat, 16, 1}}},
      {ir::Scalar::f32, {{kDLFloat, 32, 1}}},
      {ir::Scalar::f64, {{kDLFloat, 64, 1}}},
  };
  // Every type any row accepts, plus types no tessel element is: each must pass exactly where listed.
  std::vector<DLDataType> all = {{kDLUInt, 16, 1}, {kDLUInt, 32, 1}, {kDLComplex, 64, 1}, {kDLOpaqueHandle, 64, 1},
                                 {jit::dlpack::kDLBoolCode, 1, 1}, {kDLFloat, 8, 1}};
  for (const Row& r : rows) all.insert(all.end(), r.accepted.begin(), r.accepted.end());
  for (const Row& r : rows) {
    for (const DLDataType& d : all) {
      const std::string element(ir::name_of(r.s)), tensor = jit::dlpack::dtype_str(d);
      CAPTURE(element);
      CAPTURE(tensor);
      bool listed = false;
      for (const DLDataType& a : r.accepted) listed |= a.code == d.code && a.bits == d.bits;
      Tensor1d t(data, 4, d);
      const jit::PointerCheck c = check_of(r.s, nullptr);
      if (listed) {
        CHECK(jit::PointerArgument<DLTensor*>::address(&t.t, c) == reinterpret_cast<uintptr_t>(data));
      } else {
        CHECK_THROWS_WITH_AS(jit::PointerArgument<DLTensor*>::address(&t.t, c),
                             doctest::Contains((", got " + jit::dlpack::dtype_str(d) + " (code ").c_str()), std::invalid_argument);
      }
    }
  }
  Tensor1d b(data, 4, {jit::dlpack::kDLBoolCode, 8, 1});
  CHECK_THROWS_WITH_AS(jit::PointerArgument<DLTensor*>::address(&b.t, check_of(ir::Scalar::i8, nullptr)),
                       "kernel 'k', parameter 'x' (argument 1): expected a DLPack tensor of i8 (int8: kDLInt, 8 "
                       "bits), got bool (code 6, 8 bits)",
                       std::invalid_argument);
}

TEST_CASE("dlpack: numel, shape, strides (row-major when absent), contiguity") {
  alignas(16) static float data[64];
  int64_t shape[3] = {2, 3, 4};
  DLTensor t{};
  t.data = data;
  t.device = {kDLCPU, 0};
  t.ndim = 3;
  t.dtype = {kDLFloat, 32, 1};
  t.shape = shape;
  CHECK(jit::dlpack::numel(t) == 24);
  CHECK(jit::dlpack::shape(t) == std::vector<int64_t>{2, 3, 4});
  CHECK(jit::dlpack::strides(t) == std::vector<int64_t>{12, 4, 1});
  CHECK(jit::dlpack::is_contiguous(t));
  CHECK_NOTHROW(jit::dlpack::require_contiguous(t, "x"));

  int64_t given[3] = {12, 4, 1};
  t.strides = given;
  CHECK(jit::dlpack::is_contiguous(t));
  int64_t transposed[3] = {12, 1, 3};  // the last two dimensions swapped
  t.strides = transposed;
  CHECK(jit::dlpack::strides(t) == std::vector<int64_t>{12, 1, 3});
  CHECK_FALSE(jit::dlpack::is_contiguous(t));
  CHECK_THROWS_WITH_AS(jit::dlpack::require_contiguous(t, "softmax: x"),
                       "softmax: x: expected a contiguous (row-major) tensor, got shape [2,3,4] with strides [12,1,3]",
                       std::invalid_argument);

  // A dimension of size 1 may have any stride; a tensor of no elements is contiguous.
  int64_t one_row[3] = {1, 3, 4}, odd_stride[3] = {99, 4, 1};
  t.shape = one_row;
  t.strides = odd_stride;
  CHECK(jit::dlpack::is_contiguous(t));
  int64_t empty[3] = {2, 0, 4}, any[3] = {5, 7, 9};
  t.shape = empty;
  t.strides = any;
  CHECK(jit::dlpack::numel(t) == 0);
  CHECK(jit::dlpack::is_contiguous(t));

  DLTensor scalar{};  // 0-d: one element
  scalar.data = data;
  CHECK(jit::dlpack::numel(scalar) == 1);
  CHECK(jit::dlpack::strides(scalar).empty());
  CHECK(jit::dlpack::is_contiguous(scalar));

  int64_t negative[1] = {-1};
  DLTensor bad{};
  bad.ndim = 1;
  bad.shape = negative;
  CHECK_THROWS_WITH_AS(jit::dlpack::numel(bad), "DLTensor: shape [-1] has a negative size", std::invalid_argument);
  bad.shape = nullptr;
  CHECK_THROWS_WITH_AS(jit::dlpack::numel(bad), "DLTensor: shape is null for a tensor of ndim 1",
                       std::invalid_argument);
}
