// The horizontal fusion samples (sin and cos from one read) and the seeds' relu((x + 1) * 2)^2 and
// sigmoid(x) * tanh(x + 1), fused and unfused, with double-precision host references.
#include <cmath>

#include "tessel/samples/fusion_kernels.hpp"
#include "tessel/samples/sample.hpp"

namespace tessel::samples {
namespace {
using jit::Array;

// Both outputs compared; `checked` counts elements (each is checked in both outputs).
RunResult run_sin_cos(const RunConfig& c, bool fused) {
  auto hx = random_floats(c.n, c.seed, -4.0f, 4.0f);
  Array<float> x(hx), s(c.n), co(c.n);
  s.poison();
  co.poison();
  if (fused) {
    k_sin_cos(grid_for(k_sin_cos, c), c.meta, x, s, co, c.n);
  } else {
    k_sin(grid_for(k_sin, c), c.meta, x, s, c.n);
    k_cos(grid_for(k_cos, c), c.meta, x, co, c.n);
  }
  std::vector<double> rs(c.n), rc(c.n);
  for (int64_t i = 0; i < c.n; ++i) rs[i] = std::sin(static_cast<double>(hx[i])), rc[i] = std::cos(static_cast<double>(hx[i]));
  // sin.approx / cos.approx: absolute error about 2^-21 on [-pi, pi], a little more beyond.
  RunResult a = compare(s.download(), rs, 4e-6, 0), b = compare(co.download(), rc, 4e-6, 0);
  a.mismatches += b.mismatches;  // `checked` stays n: element i is checked in both outputs
  a.verified = a.verified && b.verified;
  a.max_abs_err = std::max(a.max_abs_err, b.max_abs_err);
  if (a.first_mismatch.empty() && !b.first_mismatch.empty()) a.first_mismatch = "cos: " + b.first_mismatch;
  a.launches = fused ? 1 : 2;
  return a;
}

RunResult run_relu_sq(const RunConfig& c, bool fused) {
  auto hx = random_floats(c.n, c.seed);
  Array<float> x(hx), out(c.n);
  out.poison();
  if (fused) {
    k_relu_sq(grid_for(k_relu_sq, c), c.meta, x, out, c.n);
  } else {
    Array<float> t1(c.n), t2(c.n), t3(c.n);
    k_add_scalar(grid_for(k_add_scalar, c), c.meta, x, t1, c.n, 1.0f);
    k_scale(grid_for(k_scale, c), c.meta, t1, t2, c.n, 2.0f);
    k_relu(grid_for(k_relu, c), c.meta, t2, t3, c.n);
    k_square(grid_for(k_square, c), c.meta, t3, out, c.n);
  }
  std::vector<double> ref(c.n);
  for (int64_t i = 0; i < c.n; ++i) {
    const double r = std::max(0.0, (static_cast<double>(hx[i]) + 1.0) * 2.0);
    ref[i] = r * r;
  }
  RunResult r = compare(out.download(), ref, 1e-6, 5e-7);
  r.launches = fused ? 1 : 4;
  return r;
}

RunResult run_sigmoid_tanh(const RunConfig& c, bool fused) {
  auto hx = random_floats(c.n, c.seed);
  Array<float> x(hx), out(c.n);
  out.poison();
  if (fused) {
    k_sigmoid_tanh(grid_for(k_sigmoid_tanh, c), c.meta, x, out, c.n);
  } else {
    Array<float> t1(c.n), t2(c.n), t3(c.n);
    k_sigmoid(grid_for(k_sigmoid, c), c.meta, x, t1, c.n);
    k_add_scalar(grid_for(k_add_scalar, c), c.meta, x, t2, c.n, 1.0f);
    k_tanh(grid_for(k_tanh, c), c.meta, t2, t3, c.n);
    k_mul(grid_for(k_mul, c), c.meta, t1, t3, out, c.n);
  }
  std::vector<double> ref(c.n);
  for (int64_t i = 0; i < c.n; ++i) {
    const double v = hx[i];
    ref[i] = 1.0 / (1.0 + std::exp(-v)) * std::tanh(v + 1.0);
  }
  RunResult r = compare(out.download(), ref, 1e-5, 1e-5);
  r.launches = fused ? 1 : 4;
  return r;
}

}  // namespace

std::vector<Sample> fusion_samples() {
  return {
      {"sin_cos", "horizontal fusion: sin(x) and cos(x) from one read, two outputs", {"sin_cos"},
       [](const RunConfig& c) { return run_sin_cos(c, true); }},
      {"sin_cos_unfused", "sin(x) and cos(x) as two kernels, each reading x", {"sin", "cos"},
       [](const RunConfig& c) { return run_sin_cos(c, false); }},
      {"relu_sq", "fused relu((x + 1) * 2)^2, one pass", {"relu_sq"},
       [](const RunConfig& c) { return run_relu_sq(c, true); }},
      {"relu_sq_unfused", "relu((x + 1) * 2)^2 as four kernels (add_scalar, scale, relu, square)",
       {"add_scalar", "scale", "relu", "square"}, [](const RunConfig& c) { return run_relu_sq(c, false); }},
      {"sigmoid_tanh", "fused sigmoid(x) * tanh(x + 1), one pass", {"sigmoid_tanh"},
       [](const RunConfig& c) { return run_sigmoid_tanh(c, true); }},
      {"sigmoid_tanh_unfused", "sigmoid(x) * tanh(x + 1) as four kernels (sigmoid, add_scalar, tanh, mul)",
       {"sigmoid", "add_scalar", "tanh", "mul"}, [](const RunConfig& c) { return run_sigmoid_tanh(c, false); }},
  };
}

void register_fusion_kernels(jit::Registry& r) {
  r.add(jit::entry_of(k_sin_cos, "s = sin(x), c = cos(x): one read, two outputs"));
  r.add(jit::entry_of(k_relu_sq, "out = relu((x + 1) * 2)^2"));
  r.add(jit::entry_of(k_sigmoid_tanh, "out = sigmoid(x) * tanh(x + 1)"));
  r.add(jit::entry_of(k_sin, "out = sin(x)"));
  r.add(jit::entry_of(k_cos, "out = cos(x)"));
  r.add(jit::entry_of(k_square, "out = x * x"));
  r.add(jit::entry_of(k_tanh, "out = tanh(x)"));
  r.add(jit::entry_of(k_mul, "out = x * y"));
}

}  // namespace tessel::samples
