// A kernel plugin for the CLI tests: a library of kernels the tessel tool was not built with.
// plugin_axpy1 also registers a workload, so `tessel run`, `tessel tune` and `tessel bench` run it.
#include <memory>
#include <random>
#include <vector>

#include "tessel/jit/registry.hpp"
#include "tessel/tessel.hpp"

using namespace tessel::lang;
namespace jit = tessel::jit;
namespace tune = tessel::jit::tune;

namespace {
// out = x * s + 1
void plugin_axpy1_kernel(Ptr<f32> x, Ptr<f32> out, Int n, Float s, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask) * s + 1.0f, mask);
}

// `offset` is what the reference adds: 1 (right), or 2 for plugin_axpy1_badref, whose reference
// is wrong on purpose (run must report FAILED, tune must find no correct config).
tune::Autotune axpy1_tuning(double offset) {
  return tune::Autotune{
      .configs = tune::product({{"BLOCK", {512, 128, 1024}}}, {4}),
      .key = {{{"n", tune::Bucket::PowerOfTwo}}},
      // Blocks wider than the problem only add masked lanes: pruned (the predicate sees the size).
      .prune = [](const tune::Config& c, const tune::ProblemInfo& p) {
        return c.meta["BLOCK"] <= 128 || c.meta["BLOCK"] / 2 < p.integer("n");
      },
      .outputs = {"out"},
      .reference = [offset](const tune::HostArgs& a) {
        const auto& x = a.array("x");
        const double s = a.floating("s");
        std::vector<double> want(x.size());
        for (size_t i = 0; i < x.size(); ++i) want[i] = x[i] * s + offset;
        return want;
      }};
}

jit::Kernel k_plugin{"plugin_axpy1", &plugin_axpy1_kernel, {"x", "out", "n", "s"}, Meta{{"BLOCK", 512}},
                     axpy1_tuning(1.0)};
jit::Kernel k_badref{"plugin_axpy1_badref", &plugin_axpy1_kernel, {"x", "out", "n", "s"}, Meta{{"BLOCK", 512}},
                     axpy1_tuning(2.0)};

// Random x in [-2, 2), out allocated (the problem poisons it before each checked run).
template <auto& K>
tune::Problem axpy1_problem(const std::vector<int64_t>& size) {
  struct Inputs {
    jit::Array<float> x, out;
    int64_t n;
    float s = 1.75f;
  };
  const int64_t n = size[0];
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> hx(static_cast<size_t>(n));
  for (float& v : hx) v = dist(gen);
  auto in = std::make_shared<Inputs>(Inputs{jit::Array<float>(hx), jit::Array<float>(static_cast<size_t>(n)), n});
  auto grid = [n](const Meta& m) { return jit::Grid{jit::cdiv(n, m["BLOCK"])}; };
  tune::Problem p = K.make_problem(grid, in->x, in->out, in->n, in->s);
  p.inputs = in;
  p.bytes = 8.0 * static_cast<double>(n);
  p.flops = 2.0 * static_cast<double>(n);
  return p;
}
}  // namespace

TESSEL_PLUGIN_KERNELS(registry) {
  registry.add(jit::entry_of(k_plugin, "out = x * s + 1 (from a plugin)",
                             jit::Workload{{"n"}, {{1 << 20}, {4097}}, axpy1_problem<k_plugin>}));
  registry.add(jit::entry_of(k_badref, "out = x * s + 1, its reference wrong on purpose (tests)",
                             jit::Workload{{"n"}, {{4097}}, axpy1_problem<k_badref>}));
}
