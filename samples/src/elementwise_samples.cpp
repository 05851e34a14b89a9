// The elementwise samples: fused kernels and their unfused chains, with host references.
#include <cmath>

#include "tessel/ir/philox.hpp"
#include "tessel/samples/elementwise_kernels.hpp"
#include "tessel/samples/sample.hpp"

namespace tessel::samples {
namespace {
using jit::Array;

int64_t bias_width(int64_t n) { return std::max<int64_t>(1, std::min<int64_t>(n, 4096)); }

constexpr float kDropP = 0.1f;

double gelu_ref(double v) { return v * 0.5 * (1.0 + std::erf(v * 0.7071067811865476)); }

// ---- vector add ----
RunResult run_add(const RunConfig& c) {
  auto hx = random_floats(c.n, c.seed), hy = random_floats(c.n, c.seed + 1);
  Array<float> x(hx), y(hy), out(c.n);
  out.poison();
  k_add(grid_for(k_add, c), c.meta, x, y, out, c.n);
  std::vector<double> ref(c.n);
  for (int64_t i = 0; i < c.n; ++i) ref[i] = static_cast<double>(hx[i]) + hy[i];
  auto r = compare(out.download(), ref, 1e-7, 1.2e-7);
  r.launches = 1;
  return r;
}

// ---- relu(x * 2 + bias) ----
std::vector<double> scale_bias_relu_ref(const std::vector<float>& x, const std::vector<float>& b, int64_t d) {
  std::vector<double> ref(x.size());
  for (size_t i = 0; i < x.size(); ++i) ref[i] = std::max(0.0, 2.0 * x[i] + b[i % d]);
  return ref;
}

RunResult run_scale_bias_relu(const RunConfig& c, bool fused) {
  int64_t d = bias_width(c.n);
  auto hx = random_floats(c.n, c.seed), hb = random_floats(d, c.seed + 1);
  Array<float> x(hx), b(hb), out(c.n);
  out.poison();
  RunResult r;
  if (fused) {
    k_scale_bias_relu(grid_for(k_scale_bias_relu, c), c.meta, x, b, out, c.n, d);
    r.launches = 1;
  } else {
    Array<float> t1(c.n), t2(c.n);
    k_scale(grid_for(k_scale, c), c.meta, x, t1, c.n, 2.0f);
    k_bias_add(grid_for(k_bias_add, c), c.meta, t1, b, t2, c.n, d);
    k_relu(grid_for(k_relu, c), c.meta, t2, out, c.n);
    r.launches = 3;
  }
  int launches = r.launches;
  r = compare(out.download(), scale_bias_relu_ref(hx, hb, d), 1e-6, 2.4e-7);
  r.launches = launches;
  return r;
}

// ---- sigmoid(relu((x + y) * 2) - 1) ----
RunResult run_chain5(const RunConfig& c, bool fused) {
  auto hx = random_floats(c.n, c.seed), hy = random_floats(c.n, c.seed + 1);
  Array<float> x(hx), y(hy), out(c.n);
  out.poison();
  int launches;
  if (fused) {
    k_chain5(grid_for(k_chain5, c), c.meta, x, y, out, c.n);
    launches = 1;
  } else {
    Array<float> t1(c.n), t2(c.n), t3(c.n), t4(c.n);
    k_add(grid_for(k_add, c), c.meta, x, y, t1, c.n);
    k_scale(grid_for(k_scale, c), c.meta, t1, t2, c.n, 2.0f);
    k_relu(grid_for(k_relu, c), c.meta, t2, t3, c.n);
    k_add_scalar(grid_for(k_add_scalar, c), c.meta, t3, t4, c.n, -1.0f);
    k_sigmoid(grid_for(k_sigmoid, c), c.meta, t4, out, c.n);
    launches = 5;
  }
  std::vector<double> ref(c.n);
  for (int64_t i = 0; i < c.n; ++i) {
    double v = std::max(0.0, (static_cast<double>(hx[i]) + hy[i]) * 2.0) - 1.0;
    ref[i] = 1.0 / (1.0 + std::exp(-v));
  }
  auto r = compare(out.download(), ref, 1e-6, 1e-5);
  r.launches = launches;
  return r;
}

// ---- dropout(gelu(x + bias)) ----
RunResult run_bias_gelu_dropout(const RunConfig& c, bool fused) {
  int64_t d = bias_width(c.n);
  auto hx = random_floats(c.n, c.seed), hb = random_floats(d, c.seed + 1);
  auto seed = static_cast<int32_t>(c.seed * 7919 % 100003);
  Array<float> x(hx), b(hb), out(c.n);
  out.poison();
  int launches;
  if (fused) {
    k_bias_gelu_dropout(grid_for(k_bias_gelu_dropout, c), c.meta, x, b, out, c.n, d, kDropP, seed);
    launches = 1;
  } else {
    Array<float> t1(c.n), t2(c.n);
    k_bias_add(grid_for(k_bias_add, c), c.meta, x, b, t1, c.n, d);
    k_gelu(grid_for(k_gelu, c), c.meta, t1, t2, c.n);
    k_dropout(grid_for(k_dropout, c), c.meta, t2, out, c.n, kDropP, seed);
    launches = 3;
  }
  std::vector<double> ref(c.n);
  for (int64_t i = 0; i < c.n; ++i) {
    bool keep = ir::philox::rand(seed, static_cast<int32_t>(i)) > kDropP;
    ref[i] = keep ? gelu_ref(static_cast<double>(hx[i]) + hb[i % d]) / (1.0 - kDropP) : 0.0;
  }
  auto r = compare(out.download(), ref, 1e-5, 1e-5);
  r.launches = launches;
  return r;
}

}  // namespace

std::vector<Sample> elementwise_samples() {
  return {
      {"add", "vector add: out = x + y", {"add"}, run_add},
      {"scale_bias_relu", "fused relu(x * 2 + bias), one pass", {"scale_bias_relu"},
       [](const RunConfig& c) { return run_scale_bias_relu(c, true); }},
      {"scale_bias_relu_unfused", "relu(x * 2 + bias) as three kernels (scale, bias_add, relu)",
       {"scale", "bias_add", "relu"}, [](const RunConfig& c) { return run_scale_bias_relu(c, false); }},
      {"chain5", "fused sigmoid(relu((x + y) * 2) - 1), one pass", {"chain5"},
       [](const RunConfig& c) { return run_chain5(c, true); }},
      {"chain5_unfused", "sigmoid(relu((x + y) * 2) - 1) as five kernels",
       {"add", "scale", "relu", "add_scalar", "sigmoid"}, [](const RunConfig& c) { return run_chain5(c, false); }},
      {"bias_gelu_dropout", "fused dropout(gelu_erf(x + bias), p=0.1), one pass", {"bias_gelu_dropout"},
       [](const RunConfig& c) { return run_bias_gelu_dropout(c, true); }},
      {"bias_gelu_dropout_unfused", "dropout(gelu_erf(x + bias)) as three kernels (bias_add, gelu, dropout)",
       {"bias_add", "gelu", "dropout"}, [](const RunConfig& c) { return run_bias_gelu_dropout(c, false); }},
  };
}

void register_elementwise_kernels(jit::Registry& r) {
  r.add(jit::entry_of(k_add, "out = x + y"));
  r.add(jit::entry_of(k_scale_bias_relu, "out = relu(x * 2 + bias[i % d])"));
  r.add(jit::entry_of(k_chain5, "out = sigmoid(relu((x + y) * 2) - 1)"));
  r.add(jit::entry_of(k_bias_gelu_dropout, "out = dropout(gelu_erf(x + bias[i % d]), p, seed)"));
  r.add(jit::entry_of(k_scale, "out = x * s"));
  r.add(jit::entry_of(k_add_scalar, "out = x + c"));
  r.add(jit::entry_of(k_bias_add, "out = x + bias[i % d]"));
  r.add(jit::entry_of(k_relu, "out = max(x, 0)"));
  r.add(jit::entry_of(k_sigmoid, "out = sigmoid(x)"));
  r.add(jit::entry_of(k_gelu, "out = gelu_erf(x)"));
  r.add(jit::entry_of(k_dropout, "out = dropout(x, p, seed)"));
}

}  // namespace tessel::samples
