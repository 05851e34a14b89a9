// Tunables of the elementwise samples: add, chain5 and bias_gelu_dropout, fused and unfused (the
// fusion samples' in tunables_fusion.cpp; the shared parts in tunables_pointwise.hpp).
//
// Flops count one per elementwise operation of the formula (a transcendental counts once, the
// dropout's random draw not at all); fused and unfused forms do the same flops. Bytes are the
// compulsory traffic: every input read once and every output written once per launch, so an
// unfused chain pays for its intermediates. Each problem's host reference is its sample's
// (elementwise_samples.cpp: the same formulas and tolerances), evaluated in double at the sampled
// output positions from the inputs read back from the device.
#include <cmath>
#include <memory>

#include "tessel/ir/philox.hpp"
#include "tessel/samples/elementwise_kernels.hpp"
#include "tessel/samples/sample.hpp"
#include "tunable_support.hpp"
#include "tunables_pointwise.hpp"

namespace tessel::samples::tunable {
namespace {
using jit::Array;
using jit::Grid;
using namespace pointwise;

constexpr float kDropP = 0.1f;
constexpr int32_t kDropSeed = 1234;

// out = x + y (run_add): one f32 rounding.
void add_reference(Problem& p, const std::shared_ptr<Buffers>& b) {
  p.reference = [b] {
    const auto x = b->x.download(), y = b->y.download();
    return sampled_reference(x.size(), [&](size_t i) { return static_cast<double>(x[i]) + y[i]; });
  };
  p.rtol = 1.2e-7;
  p.atol = 1e-7;
}

// sigmoid(relu((x + y) * 2) - 1) (run_chain5).
void chain5_reference(Problem& p, const std::shared_ptr<Buffers>& b) {
  p.reference = [b] {
    const auto x = b->x.download(), y = b->y.download();
    return sampled_reference(x.size(), [&](size_t i) {
      const double v = std::max(0.0, (static_cast<double>(x[i]) + y[i]) * 2.0) - 1.0;
      return 1.0 / (1.0 + std::exp(-v));
    });
  };
  p.rtol = 1e-5;
  p.atol = 1e-6;
}

// dropout(gelu_erf(x + bias[i % d]), p) with Philox keep decisions (run_bias_gelu_dropout).
void bias_gelu_dropout_reference(Problem& p, const std::shared_ptr<Buffers>& b) {
  p.reference = [b] {
    const auto x = b->x.download(), bias = b->bias.download();
    const int64_t d = b->d;
    return sampled_reference(x.size(), [&](size_t i) {
      if (!(ir::philox::rand(kDropSeed, static_cast<int32_t>(i)) > kDropP)) return 0.0;
      const double v = static_cast<double>(x[i]) + bias[i % static_cast<size_t>(d)];
      return v * 0.5 * (1.0 + std::erf(v * 0.7071067811865476)) / (1.0 - kDropP);
    });
  };
  p.rtol = 1e-5;
  p.atol = 1e-5;
}

Tunable add() {
  Tunable t = base("add", "out = x + y", true, "add");
  t.make_problem = [t](const SizeArgs& s) {
    const int64_t n = s.dims[0];
    auto b = std::make_shared<Buffers>(n, 0);
    Problem p = problem(t, signature_of(k_add), n, b);
    p.compile = [b](const Config& c) { compile_for(k_add, c, b->x, b->y, b->out, b->n); };
    p.launch = [b](const Config& c) { k_add.launch(grid(k_add, c, b->n), c.meta, c.opts, b->x, b->y, b->out, b->n); };
    add_reference(p, b);
    p.bytes = 12.0 * n;
    p.flops = 1.0 * n;
    return p;
  };
  return t;
}

// sigmoid(relu((x + y) * 2) - 1): add, mul, max, sub, sigmoid (exp, add, divide) = 7 flops.
constexpr double kChain5Flops = 7;

Tunable chain5() {
  Tunable t = base("chain5", "fused sigmoid(relu((x + y) * 2) - 1), one pass", true, "chain5");
  t.make_problem = [t](const SizeArgs& s) {
    const int64_t n = s.dims[0];
    auto b = std::make_shared<Buffers>(n, 0);
    Problem p = problem(t, signature_of(k_chain5), n, b);
    p.compile = [b](const Config& c) { compile_for(k_chain5, c, b->x, b->y, b->out, b->n); };
    p.launch = [b](const Config& c) {
      k_chain5.launch(grid(k_chain5, c, b->n), c.meta, c.opts, b->x, b->y, b->out, b->n);
    };
    chain5_reference(p, b);
    p.bytes = 12.0 * n;
    p.flops = kChain5Flops * n;
    return p;
  };
  return t;
}

Tunable chain5_unfused() {
  Tunable t = base("chain5_unfused", "sigmoid(relu((x + y) * 2) - 1) as five kernels, every config for all five",
                   false, "chain5");
  t.make_problem = [t](const SizeArgs& s) {
    const int64_t n = s.dims[0];
    auto b = std::make_shared<Buffers>(n, 4);
    Problem p = problem(t, signature_of(k_chain5), n, b);
    p.compile = [b](const Config& c) {
      auto& tmp = b->t;
      compile_for(k_add, c, b->x, b->y, tmp[0], b->n);
      compile_for(k_scale, c, tmp[0], tmp[1], b->n, 2.0f);
      compile_for(k_relu, c, tmp[1], tmp[2], b->n);
      compile_for(k_add_scalar, c, tmp[2], tmp[3], b->n, -1.0f);
      compile_for(k_sigmoid, c, tmp[3], b->out, b->n);
    };
    p.launch = [b](const Config& c) {
      auto& tmp = b->t;
      const int64_t n = b->n;
      k_add.launch(grid(k_add, c, n), c.meta, c.opts, b->x, b->y, tmp[0], n);
      k_scale.launch(grid(k_scale, c, n), c.meta, c.opts, tmp[0], tmp[1], n, 2.0f);
      k_relu.launch(grid(k_relu, c, n), c.meta, c.opts, tmp[1], tmp[2], n);
      k_add_scalar.launch(grid(k_add_scalar, c, n), c.meta, c.opts, tmp[2], tmp[3], n, -1.0f);
      k_sigmoid.launch(grid(k_sigmoid, c, n), c.meta, c.opts, tmp[3], b->out, n);
    };
    chain5_reference(p, b);
    p.bytes = (12.0 + 4 * 8.0) * n;  // add reads 2 and writes 1; four more kernels read 1, write 1
    p.flops = kChain5Flops * n;
    return p;
  };
  return t;
}

// dropout(gelu_erf(x + bias)): bias add 1; gelu (mul, erf, add, mul, mul) 5; dropout (compare,
// mul, select) 3 = 9 flops.
constexpr double kBgdFlops = 9;

Tunable bias_gelu_dropout() {
  Tunable t = base("bias_gelu_dropout", "fused dropout(gelu_erf(x + bias), p=0.1), one pass", true,
                   "bias_gelu_dropout");
  t.make_problem = [t](const SizeArgs& s) {
    const int64_t n = s.dims[0];
    auto b = std::make_shared<Buffers>(n, 0);
    Problem p = problem(t, signature_of(k_bias_gelu_dropout), n, b);
    p.compile = [b](const Config& c) {
      compile_for(k_bias_gelu_dropout, c, b->x, b->bias, b->out, b->n, b->d, kDropP, kDropSeed);
    };
    p.launch = [b](const Config& c) {
      k_bias_gelu_dropout.launch(grid(k_bias_gelu_dropout, c, b->n), c.meta, c.opts, b->x, b->bias, b->out, b->n,
                                 b->d, kDropP, kDropSeed);
    };
    bias_gelu_dropout_reference(p, b);
    p.bytes = 8.0 * n + 4.0 * static_cast<double>(b->d);
    p.flops = kBgdFlops * n;
    return p;
  };
  return t;
}

Tunable bias_gelu_dropout_unfused() {
  Tunable t = base("bias_gelu_dropout_unfused", "dropout(gelu_erf(x + bias)) as three kernels (bias_add, gelu, dropout)",
                   false, "bias_gelu_dropout");
  t.make_problem = [t](const SizeArgs& s) {
    const int64_t n = s.dims[0];
    auto b = std::make_shared<Buffers>(n, 2);
    Problem p = problem(t, signature_of(k_bias_gelu_dropout), n, b);
    p.compile = [b](const Config& c) {
      compile_for(k_bias_add, c, b->x, b->bias, b->t[0], b->n, b->d);
      compile_for(k_gelu, c, b->t[0], b->t[1], b->n);
      compile_for(k_dropout, c, b->t[1], b->out, b->n, kDropP, kDropSeed);
    };
    p.launch = [b](const Config& c) {
      const int64_t n = b->n;
      k_bias_add.launch(grid(k_bias_add, c, n), c.meta, c.opts, b->x, b->bias, b->t[0], n, b->d);
      k_gelu.launch(grid(k_gelu, c, n), c.meta, c.opts, b->t[0], b->t[1], n);
      k_dropout.launch(grid(k_dropout, c, n), c.meta, c.opts, b->t[1], b->out, n, kDropP, kDropSeed);
    };
    bias_gelu_dropout_reference(p, b);
    p.bytes = 24.0 * n + 4.0 * static_cast<double>(b->d);
    p.flops = kBgdFlops * n;
    return p;
  };
  return t;
}

}  // namespace

std::vector<Tunable> elementwise_tunables() {
  std::vector<Tunable> v{add(), chain5(), chain5_unfused(), bias_gelu_dropout(), bias_gelu_dropout_unfused()};
  for (auto& t : fusion_tunables()) v.push_back(std::move(t));
  return v;
}

}  // namespace tessel::samples::tunable
