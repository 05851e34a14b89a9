// tessel_launcher_example: kernels called through the launchers `tessel export --header` generated,
// in a program that links tessel::runtime only (no compiler, no DSL).
//
//   tessel_launcher_example [BUNDLE]   (default: the bundle exported when this program was built)
//
// Runs vector add and row softmax through add_kernel() and softmax_kernel() on random inputs of
// odd sizes with poisoned outputs, and checks them against host references. Without a CUDA
// driver it checks what it can (the bundle opens; launchers report errors as CUresults) and
// prints SKIPPED. Exit codes: 0 pass or skipped, 1 bundle error, 3 a check failed.
#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <string_view>
#include <vector>

#include "host_check.hpp"
#include "tessel_kernels.hpp"  // generated at build time by `tessel export ... --header`

using namespace tessel;

namespace {

// out = x + y over n elements, through the generated launcher.
bool check_add(size_t n, uint64_t seed) {
  auto hx = production::random_floats(n, seed), hy = production::random_floats(n, seed + 1);
  rt::DeviceBuffer x(n * 4), y(n * 4), out((n + 16) * 4);
  x.upload(hx);
  y.upload(hy);
  out.fill_u32(production::kPoison);
  const auto grid = static_cast<unsigned>((static_cast<int64_t>(n) + tessel_kernels::add_BLOCK - 1) /
                                          tessel_kernels::add_BLOCK);
  CUresult r = tessel_kernels::add_kernel(nullptr, grid, 1, 1, x.ptr(), y.ptr(), out.ptr(), static_cast<int32_t>(n));
  if (r != CUDA_SUCCESS) {
    fmt::print("  add      n={:<8} launch failed: {}\n", n, tessel_kernels::last_error());
    return false;
  }
  std::vector<float> got(n + 16);
  out.download(got);
  std::vector<double> ref(n);
  for (size_t i = 0; i < n; ++i) ref[i] = static_cast<double>(hx[i]) + hy[i];
  production::Check c = production::compare(got, ref, 1e-7, 1.2e-7);
  fmt::print("  add      n={:<8} {}{}\n", n, c.ok ? "PASS" : "FAIL ", c.first);
  return c.ok;
}

// out[row] = softmax(x[row]) over rows x cols (cols <= softmax_BLOCK), one program per row.
bool check_softmax(size_t rows, size_t cols, uint64_t seed) {
  const size_t n = rows * cols;
  auto hx = production::random_floats(n, seed, -4.0f, 4.0f);
  rt::DeviceBuffer x(n * 4), out((n + 16) * 4);
  x.upload(hx);
  out.fill_u32(production::kPoison);
  const auto c32 = static_cast<int32_t>(cols);
  CUresult r = tessel_kernels::softmax_kernel(nullptr, static_cast<unsigned>(rows), 1, 1, x.ptr(), out.ptr(), c32,
                                              c32, c32);
  if (r != CUDA_SUCCESS) {
    fmt::print("  softmax  {}x{} launch failed: {}\n", rows, cols, tessel_kernels::last_error());
    return false;
  }
  std::vector<float> got(n + 16);
  out.download(got);
  std::vector<double> ref(n);
  for (size_t row = 0; row < rows; ++row) {
    double mx = -INFINITY, sum = 0;
    for (size_t c = 0; c < cols; ++c) mx = std::max<double>(mx, hx[row * cols + c]);
    for (size_t c = 0; c < cols; ++c) sum += std::exp(hx[row * cols + c] - mx);
    for (size_t c = 0; c < cols; ++c) ref[row * cols + c] = std::exp(hx[row * cols + c] - mx) / sum;
  }
  production::Check c = production::compare(got, ref, 1e-6, 2e-5);
  fmt::print("  softmax  {}x{:<6} {}{}\n", rows, cols, c.ok ? "PASS" : "FAIL ", c.first);
  return c.ok;
}

}  // namespace

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : TESSEL_EXAMPLE_BUNDLE;
  // Before open_bundle the launchers answer with an error code, not a crash.
  if (tessel_kernels::add_kernel(nullptr, 1, 1, 1, 0, 0, 0, 0) != CUDA_ERROR_NOT_INITIALIZED) {
    fmt::print("FAILED: a launcher did not report that no bundle is open\n");
    return 3;
  }
  // A single-file bundle (.tsb) is read into memory and opened from its bytes, as a program that
  // carries its kernels in its own binary would; a directory is opened by its path.
  static std::vector<unsigned char> bytes;  // read in place by the bundle: kept for the process
  const bool packed = std::string_view(path).ends_with(".tsb");
  if (packed) {
    std::ifstream f(path, std::ios::binary);
    if (!f) {
      fmt::print(stderr, "tessel_launcher_example: cannot read {}\n", path);
      return 1;
    }
    bytes.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  const CUresult opened =
      packed ? tessel_kernels::open_bundle(bytes.data(), bytes.size()) : tessel_kernels::open_bundle(path);
  if (opened != CUDA_SUCCESS) {
    fmt::print(stderr, "tessel_launcher_example: {}\n", tessel_kernels::last_error());
    return 1;
  }
  fmt::print("bundle: {}{}\n", path, packed ? " (opened from its bytes in memory)" : "");
  if (!rt::Driver::get().available()) {
    CUresult r = tessel_kernels::add_kernel(nullptr, 1, 1, 1, 0, 0, 0, 1);
    fmt::print("without a driver add_kernel returns {}: {}\n", rt::error_name(r), tessel_kernels::last_error());
    fmt::print("SKIPPED: no usable CUDA driver ({})\n", rt::Driver::get().unavailable_reason());
    return r == CUDA_SUCCESS ? 3 : 0;
  }
  rt::Context ctx(0);
  fmt::print("device: {} (sm_{})\n", ctx.device().name(), ctx.device().sm_arch());
  bool ok = true;
  for (size_t n : {size_t{1}, size_t{4097}, size_t{65536}, size_t{1000003}}) ok = check_add(n, n) && ok;
  const auto block = static_cast<size_t>(tessel_kernels::softmax_BLOCK);
  for (auto [rows, cols] : {std::pair<size_t, size_t>{1, 1}, {7, 1000}, {1031, 781}, {64, block}})
    ok = check_softmax(rows, std::min(cols, block), rows * 131 + cols) && ok;
  // A wrong call is an error code with a reason, never a crash: the driver refuses an empty grid.
  CUresult bad = tessel_kernels::add_kernel(nullptr, 0, 1, 1, 0, 0, 0, 0);
  fmt::print("a launch over an empty grid returns {}: {}\n", rt::error_name(bad), tessel_kernels::last_error());
  ok = ok && bad != CUDA_SUCCESS;
  fmt::print("RESULT: {}\n", ok ? "PASS" : "FAILED");
  tessel_kernels::close_bundle();  // unload the modules while the context is alive
  return ok ? 0 : 3;
}
