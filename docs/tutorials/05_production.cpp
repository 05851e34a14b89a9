// Tutorial 05, step 2: a production program that links tessel::runtime alone and runs the bundle.
//
//   tutorial_05_production BUNDLE_DIR
// Exit codes: 0 pass, or SKIPPED (no CUDA driver: nothing to launch on); 1 the bundle is
// unusable, or no GPU under TESSEL_TEST_REQUIRE_GPU=1; 3 a result differs from the reference.
#include <tessel/runtime/bundle.hpp>
#include <tessel/runtime/runtime.hpp>

#include <cstdio>
#include <exception>
#include <vector>

#include "tutorial_check.hpp"

namespace rt = tessel::rt;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: tutorial_05_production BUNDLE_DIR\n");
    return 1;
  }
  try {
    // Opening validates bundle.json and the files it lists; it needs no GPU.
    rt::Bundle bundle = rt::Bundle::open(argv[1]);
    rt::BundleKernel& saxpy = bundle.kernel("saxpy");
    const int64_t block = saxpy.meta("BLOCK");  // the exported default config's BLOCK
    std::printf("bundle %s: kernel %s, BLOCK = %lld\n", argv[1], saxpy.name().c_str(), static_cast<long long>(block));

    if (!rt::Driver::get().available()) {
      const char* why = rt::Driver::get().unavailable_reason().c_str();
      if (tutorial::gpu_required()) {  // the device runs: a missing driver is a failure there
        std::printf("FAIL: TESSEL_TEST_REQUIRE_GPU=1 but there is no usable CUDA driver (%s)\n", why);
        return 1;
      }
      std::printf("SKIPPED: no usable CUDA driver (%s)\n", why);
      return 0;
    }
    rt::Context ctx(0);  // the context the bundle's modules load into
    std::printf("device: %s (sm_%d)\n", ctx.device().name().c_str(), ctx.device().sm_arch());

    bool ok = true;
    for (size_t n : {size_t{1}, size_t{4097}, size_t{1000003}}) {
      auto hx = tutorial::random_floats(n, 21), hy = tutorial::random_floats(n, 22);
      const float scale = 0.75f;
      rt::DeviceBuffer x(n * sizeof(float)), y(n * sizeof(float)), out(n * sizeof(float));
      x.upload(hx);
      y.upload(hy);
      // Arguments are checked against the exported signature: CUdeviceptr for pointers,
      // float for Float, int32_t for Int.
      const rt::Dim3 grid{static_cast<unsigned>((static_cast<int64_t>(n) + block - 1) / block)};
      saxpy.launch(nullptr, grid, x.ptr(), y.ptr(), out.ptr(), scale, static_cast<int32_t>(n));
      std::vector<float> got(n);
      out.download(got);  // synchronous: waits for the launch on the default stream
      std::vector<double> want(n);
      for (size_t i = 0; i < n; ++i) want[i] = double(hx[i]) * scale + hy[i];
      const std::string what = "bundle saxpy, n = " + std::to_string(n);
      ok = tutorial::check_close(what.c_str(), got, want, 1e-6, 1e-6) && ok;
    }
    return ok ? 0 : 3;
  } catch (const std::exception& e) {  // BundleError, CudaError: one line saying what failed
    std::fprintf(stderr, "tutorial_05_production: %s\n", e.what());
    return 1;
  }
}
