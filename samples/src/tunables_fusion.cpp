// Tunables of the fusion samples (fusion_kernels.hpp, issue 27): sin and cos from one read of x
// (two outputs) against two kernels, and the seeds' relu((x + 1) * 2)^2 and
// sigmoid(x) * tanh(x + 1), each fused and as its chain of single-op kernels (one tuning group a
// pair, so `tessel report` sets them side by side). The host references are the samples'
// (fusion_samples.cpp: the same formulas and tolerances) at the sampled outputs, from the inputs
// read back from the device. Bytes are the compulsory traffic of the launches, flops one per
// operation of the formula (a transcendental counts once).
#include <cmath>
#include <memory>

#include "tessel/samples/elementwise_kernels.hpp"
#include "tessel/samples/fusion_kernels.hpp"
#include "tunables_pointwise.hpp"

namespace tessel::samples::tunable {
namespace {
using namespace pointwise;

// sin(x) then cos(x), one vector: the output check samples both halves alike.
void sin_cos_outputs(Problem& p, const std::shared_ptr<Buffers>& b) {
  p.output = [b] {
    std::vector<float> both = b->out.download();
    const std::vector<float> c = b->t[0].download();
    both.insert(both.end(), c.begin(), c.end());
    return sample_values(both);
  };
  p.reference = [b] {
    const auto x = b->x.download();
    const size_t n = x.size();
    return sampled_reference(2 * n, [&](size_t i) {
      return i < n ? std::sin(static_cast<double>(x[i])) : std::cos(static_cast<double>(x[i - n]));
    });
  };
  p.rtol = 0;
  p.atol = 4e-6;  // sin.approx / cos.approx
  p.flops = 2.0 * static_cast<double>(b->n);
}

Tunable sin_cos() {
  Tunable t = base("sin_cos", "s = sin(x), c = cos(x) from one read of x (horizontal fusion)", true, "sin_cos");
  t.make_problem = [t](const SizeArgs& s) {
    auto b = std::make_shared<Buffers>(s.dims[0], 1);  // s: out, c: t[0]
    Problem p = problem(t, signature_of(k_sin_cos), b->n, b);
    p.compile = [b](const Config& c) { compile_for(k_sin_cos, c, b->x, b->out, b->t[0], b->n); };
    p.launch = [b](const Config& c) {
      k_sin_cos.launch(grid(k_sin_cos, c, b->n), c.meta, c.opts, b->x, b->out, b->t[0], b->n);
    };
    sin_cos_outputs(p, b);
    p.bytes = 12.0 * static_cast<double>(b->n);
    return p;
  };
  return t;
}

Tunable sin_cos_unfused() {
  Tunable t = base("sin_cos_unfused", "sin(x) and cos(x) as two kernels, each reading x", false, "sin_cos");
  t.make_problem = [t](const SizeArgs& s) {
    auto b = std::make_shared<Buffers>(s.dims[0], 1);
    Problem p = problem(t, signature_of(k_sin_cos), b->n, b);
    p.compile = [b](const Config& c) {
      compile_for(k_sin, c, b->x, b->out, b->n);
      compile_for(k_cos, c, b->x, b->t[0], b->n);
    };
    p.launch = [b](const Config& c) {
      k_sin.launch(grid(k_sin, c, b->n), c.meta, c.opts, b->x, b->out, b->n);
      k_cos.launch(grid(k_cos, c, b->n), c.meta, c.opts, b->x, b->t[0], b->n);
    };
    sin_cos_outputs(p, b);
    p.bytes = 16.0 * static_cast<double>(b->n);
    return p;
  };
  return t;
}

// A fused chain of x: out = f(x) in one kernel (x, out, n), its own tuning group with its chain.
using Reference = void (*)(Problem&, const std::shared_ptr<Buffers>&);
template <class Kern>
Tunable one_pass(const char* name, const char* description, Kern& k, Reference reference) {
  Tunable t = base(name, description, true, name);
  t.make_problem = [t, &k, reference](const SizeArgs& s) {
    auto b = std::make_shared<Buffers>(s.dims[0], 0);
    Problem p = problem(t, signature_of(k), b->n, b);
    p.compile = [b, &k](const Config& c) { compile_for(k, c, b->x, b->out, b->n); };
    p.launch = [b, &k](const Config& c) { k.launch(grid(k, c, b->n), c.meta, c.opts, b->x, b->out, b->n); };
    reference(p, b);
    p.bytes = 8.0 * static_cast<double>(b->n);
    return p;
  };
  return t;
}

// relu((x + 1) * 2)^2: add, mul, max, mul = 4 flops.
void relu_sq_reference(Problem& p, const std::shared_ptr<Buffers>& b) {
  p.reference = [b] {
    const auto x = b->x.download();
    return sampled_reference(x.size(), [&](size_t i) {
      const double r = std::max(0.0, (static_cast<double>(x[i]) + 1.0) * 2.0);
      return r * r;
    });
  };
  p.rtol = 1e-6;
  p.atol = 5e-7;
  p.flops = 4.0 * static_cast<double>(b->n);
}

Tunable relu_sq() { return one_pass("relu_sq", "fused relu((x + 1) * 2)^2, one pass", k_relu_sq, relu_sq_reference); }

Tunable relu_sq_unfused() {
  Tunable t = base("relu_sq_unfused", "relu((x + 1) * 2)^2 as four kernels (add_scalar, scale, relu, square)", false,
                   "relu_sq");
  t.make_problem = [t](const SizeArgs& s) {
    auto b = std::make_shared<Buffers>(s.dims[0], 3);
    Problem p = problem(t, signature_of(k_relu_sq), b->n, b);
    p.compile = [b](const Config& c) {
      auto& tmp = b->t;
      compile_for(k_add_scalar, c, b->x, tmp[0], b->n, 1.0f);
      compile_for(k_scale, c, tmp[0], tmp[1], b->n, 2.0f);
      compile_for(k_relu, c, tmp[1], tmp[2], b->n);
      compile_for(k_square, c, tmp[2], b->out, b->n);
    };
    p.launch = [b](const Config& c) {
      auto& tmp = b->t;
      const int64_t n = b->n;
      k_add_scalar.launch(grid(k_add_scalar, c, n), c.meta, c.opts, b->x, tmp[0], n, 1.0f);
      k_scale.launch(grid(k_scale, c, n), c.meta, c.opts, tmp[0], tmp[1], n, 2.0f);
      k_relu.launch(grid(k_relu, c, n), c.meta, c.opts, tmp[1], tmp[2], n);
      k_square.launch(grid(k_square, c, n), c.meta, c.opts, tmp[2], b->out, n);
    };
    relu_sq_reference(p, b);
    p.bytes = 32.0 * static_cast<double>(b->n);  // four kernels, each reading and writing one
    return p;
  };
  return t;
}

// sigmoid(x) * tanh(x + 1): sigmoid (exp, add, divide) 3, add, tanh, mul = 6 flops.
void sigmoid_tanh_reference(Problem& p, const std::shared_ptr<Buffers>& b) {
  p.reference = [b] {
    const auto x = b->x.download();
    return sampled_reference(x.size(), [&](size_t i) {
      const double v = x[i];
      return 1.0 / (1.0 + std::exp(-v)) * std::tanh(v + 1.0);
    });
  };
  p.rtol = 1e-5;
  p.atol = 1e-5;
  p.flops = 6.0 * static_cast<double>(b->n);
}

Tunable sigmoid_tanh() {
  return one_pass("sigmoid_tanh", "fused sigmoid(x) * tanh(x + 1), one pass", k_sigmoid_tanh, sigmoid_tanh_reference);
}

Tunable sigmoid_tanh_unfused() {
  Tunable t = base("sigmoid_tanh_unfused", "sigmoid(x) * tanh(x + 1) as four kernels (sigmoid, add_scalar, tanh, mul)",
                   false, "sigmoid_tanh");
  t.make_problem = [t](const SizeArgs& s) {
    auto b = std::make_shared<Buffers>(s.dims[0], 3);
    Problem p = problem(t, signature_of(k_sigmoid_tanh), b->n, b);
    p.compile = [b](const Config& c) {
      auto& tmp = b->t;
      compile_for(k_sigmoid, c, b->x, tmp[0], b->n);
      compile_for(k_add_scalar, c, b->x, tmp[1], b->n, 1.0f);
      compile_for(k_tanh, c, tmp[1], tmp[2], b->n);
      compile_for(k_mul, c, tmp[0], tmp[2], b->out, b->n);
    };
    p.launch = [b](const Config& c) {
      auto& tmp = b->t;
      const int64_t n = b->n;
      k_sigmoid.launch(grid(k_sigmoid, c, n), c.meta, c.opts, b->x, tmp[0], n);
      k_add_scalar.launch(grid(k_add_scalar, c, n), c.meta, c.opts, b->x, tmp[1], n, 1.0f);
      k_tanh.launch(grid(k_tanh, c, n), c.meta, c.opts, tmp[1], tmp[2], n);
      k_mul.launch(grid(k_mul, c, n), c.meta, c.opts, tmp[0], tmp[2], b->out, n);
    };
    sigmoid_tanh_reference(p, b);
    p.bytes = 36.0 * static_cast<double>(b->n);  // three kernels reading one, one reading two
    return p;
  };
  return t;
}

}  // namespace

std::vector<Tunable> fusion_tunables() {
  return {sin_cos(), sin_cos_unfused(), relu_sq(), relu_sq_unfused(), sigmoid_tanh(), sigmoid_tanh_unfused()};
}

}  // namespace tessel::samples::tunable
