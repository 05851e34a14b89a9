// Horizontal fusion and the seeds' remaining elementwise chains, fused and in unfused pieces.
//
// sin_cos reads x once and writes two outputs (what two kernels would each read again);
// relu_sq is relu((x + 1) * 2)^2 and sigmoid_tanh is sigmoid(x) * tanh(x + 1), one pass each.
// The unfused forms launch the pieces below and the elementwise samples' scale, add_scalar,
// relu and sigmoid kernels.
#pragma once
#include "tessel/samples/elementwise_kernels.hpp"

namespace tessel::samples {
using namespace tessel::lang;

// s = sin(x), c = cos(x): one read, two writes
inline void sin_cos_kernel(Ptr<f32> x, Ptr<f32> s, Ptr<f32> c, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  auto v = load(x + offs, mask);
  store(s + offs, sin(v), mask);
  store(c + offs, cos(v), mask);
}

// out = relu((x + 1) * 2)^2
inline void relu_sq_kernel(Ptr<f32> x, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  auto r = maximum((load(x + offs, mask) + 1.0f) * 2.0f, 0.0f);
  store(out + offs, r * r, mask);
}

// out = sigmoid(x) * tanh(x + 1)
inline void sigmoid_tanh_kernel(Ptr<f32> x, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  auto v = load(x + offs, mask);
  store(out + offs, sigmoid(v) * tanh(v + 1.0f), mask);
}

// --- unfused pieces ---
inline void sin_kernel(Ptr<f32> x, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, sin(load(x + offs, mask)), mask);
}
inline void cos_kernel(Ptr<f32> x, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, cos(load(x + offs, mask)), mask);
}
inline void square_kernel(Ptr<f32> x, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  auto v = load(x + offs, mask);
  store(out + offs, v * v, mask);
}
inline void tanh_kernel(Ptr<f32> x, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, tanh(load(x + offs, mask)), mask);
}
inline void mul_kernel(Ptr<f32> x, Ptr<f32> y, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask) * load(y + offs, mask), mask);
}

inline jit::Kernel k_sin_cos{"sin_cos", &sin_cos_kernel, {"x", "s", "c", "n"}, kDefaultBlock};
inline jit::Kernel k_relu_sq{"relu_sq", &relu_sq_kernel, {"x", "out", "n"}, kDefaultBlock};
inline jit::Kernel k_sigmoid_tanh{"sigmoid_tanh", &sigmoid_tanh_kernel, {"x", "out", "n"}, kDefaultBlock};
inline jit::Kernel k_sin{"sin", &sin_kernel, {"x", "out", "n"}, kDefaultBlock};
inline jit::Kernel k_cos{"cos", &cos_kernel, {"x", "out", "n"}, kDefaultBlock};
inline jit::Kernel k_square{"square", &square_kernel, {"x", "out", "n"}, kDefaultBlock};
inline jit::Kernel k_tanh{"tanh", &tanh_kernel, {"x", "out", "n"}, kDefaultBlock};
inline jit::Kernel k_mul{"mul", &mul_kernel, {"x", "y", "out", "n"}, kDefaultBlock};

}  // namespace tessel::samples
