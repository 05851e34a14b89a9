// The elementwise seed kernels, fused and in their unfused pieces, written in the DSL.
#pragma once
#include "tessel/tessel.hpp"

namespace tessel::samples {
using namespace tessel::lang;

// out = x + y
inline void add_kernel(Ptr<f32> x, Ptr<f32> y, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask) + load(y + offs, mask), mask);
}

// out = relu(x * 2 + bias[i % d])  (bias is a row vector broadcast over rows of width d)
inline void scale_bias_relu_kernel(Ptr<f32> x, Ptr<f32> bias, Ptr<f32> out, Int n, Int d, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  auto v = load(x + offs, mask) * 2.0f + load(bias + offs % d, mask);
  store(out + offs, maximum(v, 0.0f), mask);
}

// out = sigmoid(relu((x + y) * 2) - 1)
inline void chain5_kernel(Ptr<f32> x, Ptr<f32> y, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  auto v = (load(x + offs, mask) + load(y + offs, mask)) * 2.0f;
  store(out + offs, sigmoid(maximum(v, 0.0f) - 1.0f), mask);
}

// out = dropout(gelu(x + bias[i % d]), p, seed), GELU with erf; kept values scaled by 1/(1-p).
inline void bias_gelu_dropout_kernel(Ptr<f32> x, Ptr<f32> bias, Ptr<f32> out, Int n, Int d, Float p, Int seed,
                                     const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  auto v = load(x + offs, mask) + load(bias + offs % d, mask);
  auto g = v * 0.5f * (1.0f + erf(v * 0.7071067811865476f));
  auto keep = rand(seed, offs) > p;
  auto scale = 1.0f / (1.0f - p);  // a scalar: one division per program, not per element
  store(out + offs, where(keep, g * scale, 0.0f), mask);
}

// --- the unfused pieces: one pass over memory each ---

// out = x * s
inline void scale_kernel(Ptr<f32> x, Ptr<f32> out, Int n, Float s, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask) * s, mask);
}

// out = x + c
inline void add_scalar_kernel(Ptr<f32> x, Ptr<f32> out, Int n, Float c, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask) + c, mask);
}

// out = x + bias[i % d]
inline void bias_add_kernel(Ptr<f32> x, Ptr<f32> bias, Ptr<f32> out, Int n, Int d, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask) + load(bias + offs % d, mask), mask);
}

// out = max(x, 0)
inline void relu_kernel(Ptr<f32> x, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, maximum(load(x + offs, mask), 0.0f), mask);
}

// out = sigmoid(x)
inline void sigmoid_kernel(Ptr<f32> x, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, sigmoid(load(x + offs, mask)), mask);
}

// out = gelu(x) with erf
inline void gelu_kernel(Ptr<f32> x, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  auto v = load(x + offs, mask);
  store(out + offs, v * 0.5f * (1.0f + erf(v * 0.7071067811865476f)), mask);
}

// out = dropout(x, p, seed)
inline void dropout_kernel(Ptr<f32> x, Ptr<f32> out, Int n, Float p, Int seed, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  auto keep = rand(seed, offs) > p;
  auto scale = 1.0f / (1.0f - p);
  store(out + offs, where(keep, load(x + offs, mask) * scale, 0.0f), mask);
}

// The Kernel objects (one per process; they cache their compiled variants).
inline const Meta kDefaultBlock{{"BLOCK", 1024}};
inline jit::Kernel k_add{"add", &add_kernel, {"x", "y", "out", "n"}, kDefaultBlock};
inline jit::Kernel k_scale_bias_relu{"scale_bias_relu", &scale_bias_relu_kernel, {"x", "bias", "out", "n", "d"},
                                   kDefaultBlock};
inline jit::Kernel k_chain5{"chain5", &chain5_kernel, {"x", "y", "out", "n"}, kDefaultBlock};
inline jit::Kernel k_bias_gelu_dropout{"bias_gelu_dropout", &bias_gelu_dropout_kernel,
                                     {"x", "bias", "out", "n", "d", "p", "seed"}, kDefaultBlock};
inline jit::Kernel k_scale{"scale", &scale_kernel, {"x", "out", "n", "s"}, kDefaultBlock};
inline jit::Kernel k_add_scalar{"add_scalar", &add_scalar_kernel, {"x", "out", "n", "c"}, kDefaultBlock};
inline jit::Kernel k_bias_add{"bias_add", &bias_add_kernel, {"x", "bias", "out", "n", "d"}, kDefaultBlock};
inline jit::Kernel k_relu{"relu", &relu_kernel, {"x", "out", "n"}, kDefaultBlock};
inline jit::Kernel k_sigmoid{"sigmoid", &sigmoid_kernel, {"x", "out", "n"}, kDefaultBlock};
inline jit::Kernel k_gelu{"gelu", &gelu_kernel, {"x", "out", "n"}, kDefaultBlock};
inline jit::Kernel k_dropout{"dropout", &dropout_kernel, {"x", "out", "n", "p", "seed"}, kDefaultBlock};

}  // namespace tessel::samples
