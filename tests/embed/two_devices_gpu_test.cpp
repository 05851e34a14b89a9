// Two GPUs in one process: one Kernel launched on both from two threads at once, each on its
// own stream, for an elementwise kernel, a reduction and a TMA matmul; compiled once per
// architecture, loaded once per device; an array of one device refused by a launch on the other.
// Runs where the driver shows at least two GPUs (the two-GPU device run); elsewhere it says so.
#include <cuda.h>

#include <atomic>
#include <thread>

#include "embed_common.hpp"
#include "tessel/jit/counters.hpp"
#include "tessel/jit/kernel.hpp"
#include "tessel/runtime/driver.hpp"
#include "tessel/samples/elementwise_kernels.hpp"
#include "tessel/samples/matmul_kernels.hpp"
#include "tessel/samples/reduction_kernels.hpp"

namespace jit = tessel::jit;
namespace samples = tessel::samples;
using namespace embed_test;

namespace {

// TESSEL_TEST_REQUIRE_GPUS=2 (the two-GPU run): fewer GPUs is a failure, not a note.
bool two_gpus_or_say() {
  if (!gpu_or_skip()) return false;
  if (jit::Device::count() >= 2) return true;
  const char* need = std::getenv("TESSEL_TEST_REQUIRE_GPUS");
  if (need != nullptr && std::atoi(need) >= 2)
    FAIL_CHECK("TESSEL_TEST_REQUIRE_GPUS=" << need << " but the driver shows " << jit::Device::count() << " GPU");
  else
    MESSAGE("NOT RUN: one GPU (" << jit::Device::current().describe() << "); the two-device cases need two");
  return false;
}

// Runs one device's share: the three kernels on its own stream, results checked. Returns the
// number of problems (0: all right).
int run_on(jit::Device& dev, uint64_t seed) {
  int problems = 0;
  jit::Stream s(dev, /*non_blocking=*/true);
  const size_t rows = 257, cols = 1000, n = rows * cols;
  const std::vector<float> hx = random_floats(n, seed);
  jit::Array<float> x(hx, dev), y(n, dev), p(n, dev);
  y.poison();
  p.poison();
  const jit::Meta block{{"BLOCK", 1024}};
  samples::k_scale(jit::Grid{jit::cdiv(n, 1024)}, block, s, x, y, static_cast<int64_t>(n), 0.25f);
  samples::k_softmax(jit::Grid{static_cast<uint32_t>(rows)}, block, s, y, p, static_cast<int64_t>(cols),
                     static_cast<int64_t>(cols), static_cast<int64_t>(cols));
  const int M = 1000, N = 512, K = 256;
  const std::vector<uint16_t> ha = random_f16(size_t(M) * K, seed + 1), hb = random_f16(size_t(K) * N, seed + 2);
  jit::Array<uint16_t> a(ha, dev), b(hb, dev), c(size_t(M) * N, dev);
  c.poison();
  const bool tma = dev.describe().find("code for sm_90a") != std::string::npos;
  samples::k_matmul.launch(jit::Grid{jit::cdiv(M, 64) * jit::cdiv(N, 64)},
                           jit::Meta{{"BLOCK_M", 64}, {"BLOCK_N", 64}, {"BLOCK_K", 32}, {"GROUP_M", 4}},
                           jit::CompileOptions{4, 3, 1, tma, tma}, s, a, b, c, M, N, K, K, 1, N, 1, N, 1);
  s.synchronize();
  const std::vector<float> got_y = y.download(), got_p = p.download();
  std::vector<float> half(n);
  for (size_t i = 0; i < n; ++i) {
    half[i] = hx[i] * 0.25f;
    problems += got_y[i] != half[i];
  }
  const std::vector<float> ref_p = softmax_ref(half, rows, cols);
  for (size_t i = 0; i < n; ++i) problems += !(std::abs(got_p[i] - ref_p[i]) <= 1e-6f + 1e-5f * std::abs(ref_p[i]));
  const std::vector<double> ref_c = matmul_ref(ha, hb, M, N, K);
  const std::vector<uint16_t> got_c = c.download();
  for (size_t i = 0; i < ref_c.size(); ++i)
    problems += !(std::abs(tessel::interp::f16_to_double(got_c[i]) - ref_c[i]) <= 2e-2 + 1e-2 * std::abs(ref_c[i]));
  CUcontext cur = nullptr;
  tessel::rt::cu().CtxGetCurrent(&cur);
  if (cur != nullptr) problems += 1000000;  // a fresh thread had none; tessel left none
  return problems;
}

}  // namespace

TEST_CASE("GPU: two devices at once from two threads, each on its own stream; loaded once per device" *
          doctest::test_suite("gpu")) {
  if (!two_gpus_or_say()) return;
  jit::Device& d0 = jit::Device::get(0);
  jit::Device& d1 = jit::Device::get(1);
  MESSAGE("device 0: " << d0.describe() << "; device 1: " << d1.describe());
  const jit::JitCounters before = jit::jit_counters();
  std::atomic<int> p0{-1}, p1{-1};
  // A thread's exception is a failure of the case, not the end of the process.
  auto guarded = [](jit::Device& d, uint64_t seed, std::atomic<int>& problems, std::string& error) {
    try {
      problems = run_on(d, seed);
    } catch (const std::exception& e) {
      error = e.what();
    }
  };
  std::string e0, e1;
  std::thread t0(guarded, std::ref(d0), 100, std::ref(p0), std::ref(e0));
  std::thread t1(guarded, std::ref(d1), 200, std::ref(p1), std::ref(e1));
  t0.join();
  t1.join();
  CHECK_MESSAGE(e0.empty(), "device 0: " << e0);
  CHECK_MESSAGE(e1.empty(), "device 1: " << e1);
  CHECK(p0.load() == 0);
  CHECK(p1.load() == 0);
  const jit::JitCounters after = jit::jit_counters();
  const uint64_t made = after.lowered + after.disk_cache_hits - before.lowered - before.disk_cache_hits;
  const uint64_t shared = after.memory_hits - before.memory_hits;
  const uint64_t loaded = after.modules_loaded - before.modules_loaded;
  MESSAGE("variants made " << made << ", shared " << shared << ", modules loaded " << loaded);
  // Every variant a device compiled was loaded there once, whether made here (lowered, or read
  // from the disk cache) or taken from the other device; device 1 is new, so it loaded the three
  // (the other cases may have compiled device 0's already), and nothing was made twice.
  CHECK(loaded == made + shared);
  CHECK(loaded >= 3);
  CHECK(made <= 3);
  if (d0.arch() == d1.arch()) CHECK(after.lowered - before.lowered <= 3);
  // Again on both: nothing new is compiled or loaded.
  const jit::JitCounters again_before = jit::jit_counters();
  CHECK(run_on(d0, 300) == 0);
  CHECK(run_on(d1, 400) == 0);
  const jit::JitCounters again = jit::jit_counters();
  CHECK(again.modules_loaded == again_before.modules_loaded);
  CHECK(again.lowered == again_before.lowered);
}

TEST_CASE("GPU: an Array of one device passed to a launch on the other is refused, naming both" *
          doctest::test_suite("gpu")) {
  if (!two_gpus_or_say()) return;
  jit::Device& d0 = jit::Device::get(0);
  jit::Device& d1 = jit::Device::get(1);
  jit::Array<float> x(16, d0), y(16, d1);
  CHECK_THROWS_WITH_AS(samples::k_scale(jit::Grid{1}, jit::Meta{{"BLOCK", 1024}}, jit::LaunchOptions(d1), x, y,
                                        int64_t{16}, 1.0f),
                       doctest::Contains("parameter 'x' (argument 1)"), std::invalid_argument);
}
