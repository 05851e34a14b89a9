// Shared by the embedding tests: random inputs, host references, and the CUDA runtime calls a
// caller's program makes (tessel itself never uses the runtime API).
#pragma once
#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "../common/gpu_gate.hpp"
#include "tessel/interp/float_formats.hpp"
#include "tessel/jit/device.hpp"

namespace embed_test {

namespace jit = tessel::jit;

// Fails the check with the runtime's message when a CUDA runtime call does not succeed.
#define EMBED_CUDA(call)                                                                    \
  do {                                                                                      \
    const cudaError_t embed_err_ = (call);                                                  \
    REQUIRE_MESSAGE(embed_err_ == cudaSuccess, #call << ": " << cudaGetErrorString(embed_err_)); \
  } while (0)

inline std::vector<float> random_floats(size_t n, uint64_t seed, float lo = -2.f, float hi = 2.f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// True when this case can use the GPU; otherwise says why (a failure under TESSEL_TEST_REQUIRE_GPU=1).
inline bool gpu_or_skip() {
  const std::string why = jit::Device::gpu_unavailable_reason();
  if (!why.empty()) {
    tessel_test::skip_gpu_case(why);
    return false;
  }
  if (jit::Device::current().kind() != jit::BackendKind::Cuda) {
    tessel_test::skip_gpu_case("the process uses the CPU interpreter: " + jit::Device::current().describe());
    return false;
  }
  return true;
}

// A device buffer of the caller's, from cudaMalloc (freed with the object).
template <class T>
struct CudaBuffer {
  T* p = nullptr;
  size_t n = 0;
  explicit CudaBuffer(size_t count) : n(count) { EMBED_CUDA(cudaMalloc(reinterpret_cast<void**>(&p), count * sizeof(T))); }
  ~CudaBuffer() { cudaFree(p); }
  CudaBuffer(const CudaBuffer&) = delete;
  CudaBuffer& operator=(const CudaBuffer&) = delete;
  void upload(const std::vector<T>& h) { EMBED_CUDA(cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice)); }
  std::vector<T> download() const {
    std::vector<T> h(n);
    EMBED_CUDA(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
  void poison() { EMBED_CUDA(cudaMemset(p, 0xFF, n * sizeof(T))); }
  jit::DevicePtr<T> ptr() const { return jit::DevicePtr<T>::of(p); }
};

// Row softmax in double, the reference for samples::k_softmax.
inline std::vector<float> softmax_ref(const std::vector<float>& x, size_t rows, size_t cols) {
  std::vector<float> out(x.size());
  for (size_t r = 0; r < rows; ++r) {
    double m = -INFINITY, s = 0;
    for (size_t c = 0; c < cols; ++c) m = std::max<double>(m, x[r * cols + c]);
    for (size_t c = 0; c < cols; ++c) s += std::exp(double(x[r * cols + c]) - m);
    for (size_t c = 0; c < cols; ++c) out[r * cols + c] = static_cast<float>(std::exp(double(x[r * cols + c]) - m) / s);
  }
  return out;
}

// c = a * b for f16 row-major a [M, K], b [K, N], in double from the f16 values.
inline std::vector<double> matmul_ref(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b, int M, int N, int K) {
  std::vector<double> c(static_cast<size_t>(M) * N, 0.0);
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k) {
      const double av = tessel::interp::f16_to_double(a[size_t(i) * K + k]);
      for (int j = 0; j < N; ++j) c[size_t(i) * N + j] += av * tessel::interp::f16_to_double(b[size_t(k) * N + j]);
    }
  return c;
}

inline std::vector<uint16_t> random_f16(size_t n, uint64_t seed) {
  std::vector<uint16_t> v(n);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(-1, 1);
  for (auto& x : v) x = tessel::interp::f16_from_double(d(rng));
  return v;
}

}  // namespace embed_test
