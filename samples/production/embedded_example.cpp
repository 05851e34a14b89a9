// tessel_embedded_example: a program that carries its kernels in its own binary. The sample
// bundle's single file was assembled into this executable at build time (embedded_bundle.S.in:
// `.incbin`, between two symbols), and is opened from those bytes: no bundle file is read at
// run time, and the program runs wherever it is copied.
//
//   tessel_embedded_example
//
// Opens the embedded bundle, verifies every image's checksum, and on a GPU runs add and relu at
// odd sizes with poisoned outputs, checked against host references. Without a CUDA driver it
// prints SKIPPED and exits 0. Exit codes: 0 pass or skipped, 1 bundle error, 3 a check failed.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <span>
#include <vector>

#include "host_check.hpp"
#include "tessel/runtime/bundle.hpp"
#include "tessel/runtime/runtime.hpp"

// The embedded bundle's first byte and one past its last (embedded_bundle.S.in). They have
// static storage duration, so the bundle may borrow them instead of copying them.
extern "C" const unsigned char tessel_embedded_bundle_begin[];
extern "C" const unsigned char tessel_embedded_bundle_end[];

using namespace tessel;

namespace {

std::span<const unsigned char> embedded_bytes() {
  return {tessel_embedded_bundle_begin, tessel_embedded_bundle_end};
}

// out = f(inputs...) over n elements through the bundle kernel, compared with `ref`.
bool check(rt::BundleKernel& k, size_t n, uint64_t seed, bool binary) {
  auto hx = production::random_floats(n, seed), hy = production::random_floats(n, seed + 1);
  rt::DeviceBuffer x(n * 4), y(n * 4), out((n + 16) * 4);
  x.upload(hx);
  y.upload(hy);
  out.fill_u32(production::kPoison);
  const auto block = k.meta("BLOCK");
  const rt::Dim3 grid{static_cast<unsigned>((static_cast<int64_t>(n) + block - 1) / block)};
  if (binary) k.launch(nullptr, grid, x.ptr(), y.ptr(), out.ptr(), static_cast<int32_t>(n));
  else k.launch(nullptr, grid, x.ptr(), out.ptr(), static_cast<int32_t>(n));
  std::vector<float> got(n + 16);
  out.download(got);
  std::vector<double> ref(n);
  for (size_t i = 0; i < n; ++i) ref[i] = binary ? static_cast<double>(hx[i]) + hy[i] : std::max(0.0f, hx[i]);
  const production::Check c = production::compare(got, ref, 1e-7, 1.2e-7);
  fmt::print("  {:<5} n={:<8} {}{}\n", k.name(), n, c.ok ? "PASS" : "FAIL ", c.first);
  return c.ok;
}

int run() {
  std::optional<rt::Context> ctx;  // declared first: modules unload while their context exists
  rt::Bundle bundle = rt::Bundle::open_borrowed(embedded_bytes(), "tessel_embedded_example:bundle.tsb");
  bundle.verify();
  fmt::print("bundle: {} ({} bytes inside this executable, {} kernels), verified\n", bundle.origin(),
             embedded_bytes().size(), bundle.manifest().kernels.size());
  if (!rt::Driver::get().available()) {
    fmt::print("SKIPPED: no usable CUDA driver ({})\n", rt::Driver::get().unavailable_reason());
    return 0;
  }
  ctx.emplace(0);
  fmt::print("device: {} (sm_{})\n", ctx->device().name(), ctx->device().sm_arch());
  bool ok = true;
  for (size_t n : {size_t{1}, size_t{4097}, size_t{65536}}) {
    ok = check(bundle.kernel("add"), n, n, true) && ok;
    ok = check(bundle.kernel("relu"), n, n + 7, false) && ok;
  }
  fmt::print("RESULT: {}\n", ok ? "PASS" : "FAILED");
  return ok ? 0 : 3;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const rt::BundleError& e) {
    fmt::print(stderr, "tessel_embedded_example: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "tessel_embedded_example: {}\n", e.what());
    return 3;
  }
}
