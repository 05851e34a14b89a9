// Tutorial 01: vector add — a kernel, its launch grid, masks for the ragged last block.
#include <tessel/tessel.hpp>

#include <cstdio>
#include <exception>
#include <vector>

#include "tutorial_check.hpp"

using namespace tessel::lang;
namespace jit = tessel::jit;

// Each program adds one block of BLOCK elements; BLOCK is a meta-parameter, a compile-time
// constant for the trace, so every BLOCK value is its own compiled kernel.
void add_kernel(Ptr<f32> x, Ptr<f32> y, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);  // this program's element indices
  auto mask = offs < n;                                  // false past the end of the vectors
  auto sum = load(x + offs, mask) + load(y + offs, mask);
  store(out + offs, sum, mask);
}

// The kernel object: a name (cache entries, profiles), the function, the parameter names.
jit::Kernel add{"tutorial_add", &add_kernel, {"x", "y", "out", "n"}};

// out = x + y on the current device (the GPU, else the CPU interpreter).
std::vector<float> vector_add(const std::vector<float>& hx, const std::vector<float>& hy) {
  const int64_t n = static_cast<int64_t>(hx.size());
  jit::Array<float> x(hx), y(hy), out(hx.size());  // device memory, filled from the host
  const int BLOCK = 1024;
  add(jit::Grid{jit::cdiv(n, BLOCK)}, Meta{{"BLOCK", BLOCK}}, x, y, out, n);
  return out.download();
}

bool run_checks() {
  std::printf("device: %s\n", jit::Device::current().describe().c_str());
  bool ok = true;
  for (size_t n : {size_t{1}, size_t{1023}, size_t{98433}}) {  // odd sizes: the last block is ragged
    auto hx = tutorial::random_floats(n, 1), hy = tutorial::random_floats(n, 2);
    std::vector<float> got = vector_add(hx, hy);
    std::vector<double> want(n);
    for (size_t i = 0; i < n; ++i) want[i] = double(hx[i]) + double(hy[i]);
    const std::string what = "vector add, n = " + std::to_string(n);
    ok = tutorial::check_close(what.c_str(), got, want, 1e-7, 1.2e-7) && ok;
  }
  return ok;
}

int main() {
  return tutorial::run_tutorial(run_checks, [] { return jit::Device::current().kind() == jit::BackendKind::Cuda; });
}
