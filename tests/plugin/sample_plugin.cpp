// A kernel plugin for the CLI tests: a library of kernels the tessel tool was not built with.
#include "tessel/jit/registry.hpp"
#include "tessel/tessel.hpp"

using namespace tessel::lang;

namespace {
// out = x * s + 1
void plugin_axpy1_kernel(Ptr<f32> x, Ptr<f32> out, Int n, Float s, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask) * s + 1.0f, mask);
}
tessel::jit::Kernel k_plugin{"plugin_axpy1", &plugin_axpy1_kernel, {"x", "out", "n", "s"}, Meta{{"BLOCK", 512}}};
}  // namespace

TESSEL_PLUGIN_KERNELS(registry) { registry.add(tessel::jit::entry_of(k_plugin, "out = x * s + 1 (from a plugin)")); }
