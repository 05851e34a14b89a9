// Tutorial 04: autotuning from C++ — a config space, a tuning key, a checked output, launch_tuned.
#include <tessel/tessel.hpp>

#include <cmath>
#include <cstdio>
#include <exception>
#include <vector>

#include "tutorial_check.hpp"

using namespace tessel::lang;
namespace jit = tessel::jit;
namespace tune = tessel::jit::tune;

// out = relu(x * scale + y), fused: one read of x and y, one write of out.
void scale_add_relu_kernel(Ptr<f32> x, Ptr<f32> y, Ptr<f32> out, Float scale, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, maximum(load(x + offs, mask) * scale + load(y + offs, mask), 0.0f), mask);
}

// What launch_tuned may choose from, how problems share a choice, and how to tell a right
// answer: a config that runs fast but computes something else is never chosen.
tune::Autotune scale_add_relu_tuning() {
  return tune::Autotune{
      // 4 BLOCK values x 2 warp counts = 8 configs; the first is the fallback when nothing is tuned.
      .configs = tune::product({{"BLOCK", {256, 512, 1024, 2048}}}, {4, 8}),
      // Sizes in the same power-of-two bucket (65537..131072, ...) share one tuned choice.
      .key = {{{"n", tune::Bucket::PowerOfTwo}}},
      .budget_s = 2,  // at most about 2 s of GPU timing per key
      .outputs = {"out"},
      // Computed once on the host from the launch's arguments; each config's output must match.
      .reference = [](const tune::HostArgs& a) {
        const auto &x = a.array("x"), &y = a.array("y");
        const double scale = a.floating("scale");
        std::vector<double> want(x.size());
        for (size_t i = 0; i < x.size(); ++i) want[i] = std::max(x[i] * scale + y[i], 0.0);
        return want;
      },
      .rtol = 1e-6,  // the GPU fuses x * scale + y into one fma: not bit-equal to the host
      .atol = 1e-6};
}

// Meta{{"BLOCK", 1024}}: the defaults, which every config overrides (tracing needs a value).
jit::Kernel scale_add_relu{"tutorial_scale_add_relu", &scale_add_relu_kernel, {"x", "y", "out", "scale", "n"},
                           Meta{{"BLOCK", 1024}}, scale_add_relu_tuning()};

bool run_checks() {
  const bool on_gpu = jit::Device::current().kind() == jit::BackendKind::Cuda;
  std::printf("device: %s\n", jit::Device::current().describe().c_str());
  if (!on_gpu) std::printf("on the interpreter nothing is timed: launch_tuned takes the first config\n");
  bool ok = true;
  for (int64_t n : {int64_t{98433}, int64_t{100001}, int64_t{3}}) {
    auto hx = tutorial::random_floats(n, 11), hy = tutorial::random_floats(n, 12);
    jit::Array<float> x(hx), y(hy), out(n);
    const float scale = 1.5f;
    // The grid depends on the config: launch_tuned calls this with the chosen config's meta.
    auto grid = [&](const Meta& m) { return jit::Grid{jit::cdiv(n, m["BLOCK"])}; };
    // The first call for a key tunes it (on the GPU, unless the tuning database already has
    // it); later calls in the same bucket reuse the choice.
    const tune::Config& chosen = scale_add_relu.launch_tuned(grid, x, y, out, scale, n);
    std::printf("n = %-7lld launched with %s\n", static_cast<long long>(n), chosen.str().c_str());
    std::vector<float> got = out.download();
    std::vector<double> want(n);
    for (int64_t i = 0; i < n; ++i) want[i] = std::max(double(hx[i]) * scale + hy[i], 0.0);
    const std::string what = "tuned scale_add_relu, n = " + std::to_string(n);
    ok = tutorial::check_close(what.c_str(), got, want, 1e-6, 1e-6) && ok;
  }
  return ok;
}

int main() {
  return tutorial::run_tutorial(run_checks, [] { return jit::Device::current().kind() == jit::BackendKind::Cuda; });
}
