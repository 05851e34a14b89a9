// Tutorial 02: fused row softmax — one program per row, reductions in registers, one read and one write.
#include <tessel/tessel.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <limits>
#include <vector>

#include "tutorial_check.hpp"

using namespace tessel::lang;
namespace jit = tessel::jit;

// out[row, :] = softmax(x[row, :]). The whole row is one tile (BLOCK >= cols), so max, exp,
// sum and the division all happen in registers: the row is read once and written once, where
// the unfused form (max pass, exp-and-sum pass, divide pass) reads it three times.
void softmax_kernel(Ptr<f32> x, Ptr<f32> out, Int cols, Int x_stride, Int out_stride, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto row = program_id(0);
  auto offs = arange(0, BLOCK);
  auto mask = offs < cols;
  // Masked lanes read -inf: they do not change the max, and exp(-inf) = 0 adds nothing to the sum.
  auto v = load(x + row * x_stride + offs, mask, -std::numeric_limits<float>::infinity());
  auto e = exp(v - max(v, 0));       // subtract the row max: exp never overflows
  auto inv = 1.0f / sum(e, 0);       // one division per row, then multiplies
  store(out + row * out_stride + offs, e * inv, mask);
}

jit::Kernel softmax{"tutorial_softmax", &softmax_kernel, {"x", "out", "cols", "x_stride", "out_stride"}};

// The smallest power of two >= n: tile sizes are powers of two.
int next_pow2(int64_t n) {
  int p = 1;
  while (p < n) p *= 2;
  return p;
}

// Softmax of each row of a rows x cols matrix whose rows are `stride` floats apart.
std::vector<float> row_softmax(const std::vector<float>& hx, int64_t rows, int64_t cols, int64_t stride) {
  jit::Array<float> x(hx), out(rows * cols);
  const int BLOCK = next_pow2(cols);
  // More warps for wider rows: each thread then holds fewer of the row's elements.
  jit::CompileOptions opts;
  opts.num_warps = BLOCK >= 2048 ? 8 : 4;
  softmax.launch(jit::Grid{uint32_t(rows)}, Meta{{"BLOCK", BLOCK}}, opts, x, out, cols, stride, cols);
  return out.download();
}

bool run_checks() {
  std::printf("device: %s\n", jit::Device::current().describe().c_str());
  bool ok = true;
  struct Shape { int64_t rows, cols, stride; };
  // Odd widths (masked tails), a padded row stride, a single column.
  for (Shape s : {Shape{37, 781, 781}, Shape{5, 1000, 1003}, Shape{3, 1, 1}, Shape{2, 3001, 3001}}) {
    auto hx = tutorial::random_floats(s.rows * s.stride, 7, -4.0f, 4.0f);
    std::vector<float> got = row_softmax(hx, s.rows, s.cols, s.stride);
    std::vector<double> want(s.rows * s.cols);
    for (int64_t r = 0; r < s.rows; ++r) {
      const float* row = &hx[r * s.stride];
      double mx = -INFINITY, total = 0;
      for (int64_t c = 0; c < s.cols; ++c) mx = std::max<double>(mx, row[c]);
      for (int64_t c = 0; c < s.cols; ++c) total += std::exp(row[c] - mx);
      for (int64_t c = 0; c < s.cols; ++c) want[r * s.cols + c] = std::exp(row[c] - mx) / total;
    }
    const std::string what = "softmax " + std::to_string(s.rows) + "x" + std::to_string(s.cols) + " stride " +
                             std::to_string(s.stride);
    ok = tutorial::check_close(what.c_str(), got, want, 1e-6, 2e-5) && ok;
  }
  return ok;
}

int main() {
  return tutorial::run_tutorial(run_checks, [] { return jit::Device::current().kind() == jit::BackendKind::Cuda; });
}
