// Kernels inside a caller's program on the GPU: the caller's streams and events, CUDA graph
// capture and replay, memory from cudaMalloc, the caller's CUDA context left alone, and several
// threads launching one Kernel at once.
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

CUcontext current_context() {
  CUcontext c = nullptr;
  REQUIRE(tessel::rt::cu().CtxGetCurrent(&c) == CUDA_SUCCESS);
  return c;
}

bool has_wgmma() { return jit::Device::current().describe().find("code for sm_90a") != std::string::npos; }

// The TMA matmul of the graph case: f16 [M, K] x [K, N], a warp-specialised K loop whose
// producers copy by TMA (tensor maps encoded on the host at each launch, before capture).
struct TmaMatmul {
  static constexpr int M = 1000, N = 512, K = 256;  // M odd of the tile: the last tile masked
  jit::Meta meta{{"BLOCK_M", 64}, {"BLOCK_N", 64}, {"BLOCK_K", 32}, {"GROUP_M", 4}};
  jit::CompileOptions opts{4, 3, 1, /*warp_specialize=*/true, /*tma=*/true};
  std::vector<uint16_t> ha = random_f16(size_t(M) * K, 5), hb = random_f16(size_t(K) * N, 6);
  jit::Array<uint16_t> a{ha}, b{hb}, c{size_t(M) * N};
  jit::Grid grid{jit::cdiv(M, 64) * jit::cdiv(N, 64)};
  void launch(jit::StreamRef s) {
    samples::k_matmul.launch(grid, meta, opts, s, a, b, c, M, N, K, K, 1, N, 1, N, 1);
  }
  void check() const {
    const std::vector<double> ref = matmul_ref(ha, hb, M, N, K);
    const std::vector<uint16_t> got = c.download();
    size_t bad = 0;
    for (size_t i = 0; i < ref.size(); ++i)
      if (!(std::abs(tessel::interp::f16_to_double(got[i]) - ref[i]) <= 2e-2 + 1e-2 * std::abs(ref[i]))) ++bad;
    CHECK_MESSAGE(bad == 0, bad << " of " << ref.size() << " matmul outputs differ from the host reference");
  }
};

void check_scaled(const std::vector<float>& got, const std::vector<float>& x, float s, size_t from = 0) {
  size_t bad = 0;
  for (size_t i = from; i < x.size(); ++i)
    if (got[i] != x[i] * s) ++bad;
  CHECK_MESSAGE(bad == 0, bad << " of " << x.size() - from << " outputs differ from x * " << s);
}

void check_softmax(const std::vector<float>& got, const std::vector<float>& ref) {
  size_t bad = 0;
  for (size_t i = 0; i < ref.size(); ++i)
    if (!(std::abs(got[i] - ref[i]) <= 1e-6f + 1e-5f * std::abs(ref[i]))) ++bad;
  CHECK_MESSAGE(bad == 0, bad << " of " << ref.size() << " softmax outputs differ from the host reference");
}

const jit::Meta kBlock{{"BLOCK", 1024}};

}  // namespace

TEST_CASE("GPU: a launch on the caller's stream runs after an event recorded on another stream" *
          doctest::test_suite("gpu")) {
  if (!gpu_or_skip()) return;
  const size_t n = 4194305;  // odd: the last program masked
  const std::vector<float> hx = random_floats(n, 1);
  CudaBuffer<float> src(n), x(n), y(n), slow(size_t{64} << 20);
  src.upload(hx);
  x.poison();
  y.poison();
  cudaStream_t a = nullptr, b = nullptr;
  cudaEvent_t ready = nullptr;
  EMBED_CUDA(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  EMBED_CUDA(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  EMBED_CUDA(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
  // Warm: the variant compiled and loaded before the ordering is tested.
  samples::k_scale(jit::Grid{jit::cdiv(n, 1024)}, kBlock, a, src.ptr(), y.ptr(), static_cast<int64_t>(n), 3.0f);
  EMBED_CUDA(cudaStreamSynchronize(a));
  y.poison();
  // Stream b: slow work (1 GiB of memsets), then x = src, then the event. Stream a waits for
  // the event; neither syncs with the legacy default stream, so only the wait orders them.
  for (int i = 0; i < 4; ++i) EMBED_CUDA(cudaMemsetAsync(slow.p, i, slow.n * sizeof(float), b));
  EMBED_CUDA(cudaMemcpyAsync(x.p, src.p, n * sizeof(float), cudaMemcpyDeviceToDevice, b));
  EMBED_CUDA(cudaEventRecord(ready, b));
  EMBED_CUDA(cudaStreamWaitEvent(a, ready, 0));
  samples::k_scale(jit::Grid{jit::cdiv(n, 1024)}, kBlock, a, x.ptr(), y.ptr(), static_cast<int64_t>(n), 3.0f);
  EMBED_CUDA(cudaStreamSynchronize(a));
  check_scaled(y.download(), hx, 3.0f);
  EMBED_CUDA(cudaEventDestroy(ready));
  EMBED_CUDA(cudaStreamDestroy(a));
  EMBED_CUDA(cudaStreamDestroy(b));
}

TEST_CASE("GPU: tessel launches captured into a CUDA graph replay 100 times with nothing else captured" *
          doctest::test_suite("gpu")) {
  if (!gpu_or_skip()) return;
  const size_t rows = 333, cols = 1000, n = rows * cols;
  std::vector<float> hx = random_floats(n, 2);
  jit::Array<float> x(hx), y(n), p(n);
  std::optional<TmaMatmul> mm;
  if (has_wgmma()) mm.emplace();
  else MESSAGE("no sm_90a code on this GPU: the graph holds no TMA matmul");
  jit::Stream s(jit::Device::current(), /*non_blocking=*/true);
  auto sequence = [&] {
    samples::k_scale(jit::Grid{jit::cdiv(n, 1024)}, kBlock, s, x, y, static_cast<int64_t>(n), 0.5f);
    samples::k_softmax(jit::Grid{static_cast<uint32_t>(rows)}, kBlock, s, y, p, static_cast<int64_t>(cols),
                       static_cast<int64_t>(cols), static_cast<int64_t>(cols));
    if (mm) mm->launch(s);
  };
  sequence();  // compiles and loads every variant: capture must see launches only
  s.synchronize();
  const jit::JitCounters before = jit::jit_counters();

  cudaStream_t cs = reinterpret_cast<cudaStream_t>(s.handle());
  cudaGraph_t graph = nullptr;
  // Global mode: any call the driver deems unsafe during capture (a synchronisation, an
  // allocation, a blocking copy) fails the capture.
  EMBED_CUDA(cudaStreamBeginCapture(cs, cudaStreamCaptureModeGlobal));
  sequence();
  EMBED_CUDA(cudaStreamEndCapture(cs, &graph));
  size_t nodes = 0;
  EMBED_CUDA(cudaGraphGetNodes(graph, nullptr, &nodes));
  CHECK(nodes == (mm ? 3u : 2u));
  std::vector<cudaGraphNode_t> list(nodes);
  EMBED_CUDA(cudaGraphGetNodes(graph, list.data(), &nodes));
  for (cudaGraphNode_t node : list) {
    cudaGraphNodeType t{};
    EMBED_CUDA(cudaGraphNodeGetType(node, &t));
    CHECK(t == cudaGraphNodeTypeKernel);
  }
  cudaGraphExec_t exec = nullptr;
  EMBED_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  const jit::JitCounters after = jit::jit_counters();
  CHECK(after.lowered == before.lowered);
  CHECK(after.modules_loaded == before.modules_loaded);

  for (int round = 0; round < 2; ++round) {
    CAPTURE(round);
    y.poison();
    p.poison();
    if (mm) mm->c.poison();
    for (int r = 0; r < 100; ++r) EMBED_CUDA(cudaGraphLaunch(exec, cs));
    s.synchronize();
    check_scaled(y.download(), hx, 0.5f);
    std::vector<float> half(n);
    for (size_t i = 0; i < n; ++i) half[i] = hx[i] * 0.5f;
    check_softmax(p.download(), softmax_ref(half, rows, cols));
    if (mm) mm->check();
    // The graph reads the arrays where they are: new inputs in place, new results on replay.
    hx = random_floats(n, 3 + round);
    x.upload(hx);
    if (mm) {
      mm->ha = random_f16(mm->ha.size(), 9 + round);
      mm->a.upload(mm->ha);
    }
  }
  EMBED_CUDA(cudaGraphExecDestroy(exec));
  EMBED_CUDA(cudaGraphDestroy(graph));
}

TEST_CASE("GPU: memory from cudaMalloc passes as DevicePtr, offsets counted in elements" * doctest::test_suite("gpu")) {
  if (!gpu_or_skip()) return;
  for (size_t n : {size_t{1}, size_t{4097}, size_t{1000003}}) {
    CAPTURE(n);
    const std::vector<float> hx = random_floats(n + 1, 10 + n);
    CudaBuffer<float> x(n + 1), y(n + 1);
    x.upload(hx);
    y.poison();
    // Aligned, then one element in: 4 bytes past a 256-byte boundary, the variant without the
    // divisible-by-16 assumption.
    samples::k_scale(jit::Grid{jit::cdiv(n, 1024)}, kBlock, x.ptr(), y.ptr(), static_cast<int64_t>(n), -1.5f);
    std::vector<float> got = y.download();
    check_scaled(std::vector<float>(got.begin(), got.begin() + n), std::vector<float>(hx.begin(), hx.begin() + n), -1.5f);
    CHECK(std::isnan(got[n]));  // past the end: untouched
    y.poison();
    samples::k_scale(jit::Grid{jit::cdiv(n, 1024)}, kBlock, x.ptr() + 1, y.ptr() + 1, static_cast<int64_t>(n), 2.0f);
    got = y.download();
    CHECK(std::isnan(got[0]));  // before the offset: untouched
    check_scaled(got, hx, 2.0f, 1);
  }
}

TEST_CASE("GPU: no tessel call leaves another CUDA context current on the calling thread" * doctest::test_suite("gpu")) {
  if (!gpu_or_skip()) return;
  jit::Device& dev = jit::Device::current();
  auto calls = [&] {
    const std::vector<float> hx = random_floats(5000, 20);
    jit::Array<float> x(hx, dev), y(5000, dev);
    samples::k_scale(jit::Grid{5}, kBlock, x, y, int64_t{5000}, 4.0f);
    jit::Stream s(dev);
    samples::k_scale(jit::Grid{5}, kBlock, s, x, y, int64_t{5000}, 4.0f);
    s.synchronize();
    dev.synchronize();
    check_scaled(y.download(), hx, 4.0f);
  };
  // No context at all (a fresh thread, or one that unset it).
  std::thread([&] {
    REQUIRE(current_context() == nullptr);
    calls();
    CHECK(current_context() == nullptr);
  }).join();
  // The primary context, made current by the CUDA runtime: kept.
  EMBED_CUDA(cudaSetDevice(dev.ordinal()));
  EMBED_CUDA(cudaFree(nullptr));
  const CUcontext runtime_ctx = current_context();
  REQUIRE(runtime_ctx != nullptr);
  calls();
  CHECK(current_context() == runtime_ctx);
  // Another device's context current: put back after calls on this device.
  if (jit::Device::count() > 1) {
    EMBED_CUDA(cudaSetDevice(1));
    EMBED_CUDA(cudaFree(nullptr));
    const CUcontext other = current_context();
    calls();
    CHECK(current_context() == other);
    EMBED_CUDA(cudaSetDevice(dev.ordinal()));
  }
}

TEST_CASE("GPU: eight threads launch one Kernel at once, each on its own stream; it is compiled once" *
          doctest::test_suite("gpu")) {
  if (!gpu_or_skip()) return;
  // A kernel of this test alone, so the first launches race to compile it.
  static jit::Kernel k_axpb{"embed_axpb",
                            +[](tessel::lang::Ptr<tessel::lang::f32> x, tessel::lang::Ptr<tessel::lang::f32> out,
                                tessel::lang::Int n, tessel::lang::Float a, const jit::Meta& m) {
                              using namespace tessel::lang;
                              const int BLOCK = m["BLOCK"];
                              auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
                              auto mask = offs < n;
                              store(out + offs, load(x + offs, mask) * a + 1.0f, mask);
                            },
                            {"x", "out", "n", "a"},
                            kBlock};
  const int devices = jit::Device::count();
  const jit::JitCounters before = jit::jit_counters();
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      try {
        jit::Device& dev = jit::Device::get(t % devices);
        jit::DeviceGuard on(dev);
        const size_t n = 100003 + t;
        const std::vector<float> hx = random_floats(n, 30 + t);
        jit::Array<float> x(hx, dev), y(n, dev);
        jit::Stream s(dev, /*non_blocking=*/true);
        for (int r = 0; r < 50; ++r) {
          y.poison();
          k_axpb(jit::Grid{jit::cdiv(n, 1024)}, kBlock, s, x, y, static_cast<int64_t>(n), static_cast<float>(r));
          s.synchronize();
          const std::vector<float> got = y.download();
          for (size_t i = 0; i < n; ++i)
            if (got[i] != hx[i] * static_cast<float>(r) + 1.0f) {
              failures++;
              break;
            }
        }
        if (current_context() != nullptr) failures += 1000;  // a fresh thread: none before, none after
      } catch (const std::exception& e) {
        MESSAGE("thread " << t << ": " << e.what());
        failures += 100;
      }
    });
  for (auto& th : threads) th.join();
  CHECK(failures.load() == 0);
  const jit::JitCounters after = jit::jit_counters();
  const int used = std::min(devices, 8);
  // One variant (no n divisible by 16, every address aligned): lowered at most once (the disk
  // cache may hold it from an earlier run), compiled once per device used (from LLVM, the disk
  // cache or the other device's compile), and loaded once per device used.
  CHECK(after.lowered - before.lowered <= 1);
  CHECK(after.lowered + after.disk_cache_hits + after.memory_hits - before.lowered - before.disk_cache_hits -
            before.memory_hits ==
        static_cast<uint64_t>(used));
  CHECK(after.modules_loaded - before.modules_loaded == static_cast<uint64_t>(used));
}
