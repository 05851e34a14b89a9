// Runtime tests on a real GPU: attributes, copies, JIT, launch, events, linker.
// Each case (doctest suite "gpu") runs only when Driver::available(); otherwise it is a visible
// skip, and a failure under TESSEL_TEST_REQUIRE_GPU=1 (common/gpu_gate.hpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "../common/gpu_gate.hpp"
#include "kernels_ptx.hpp"
#include "tessel/runtime/runtime.hpp"

using namespace tessel::rt;

namespace {

bool gpu_or_skip() {
  if (Driver::get().available()) return true;
  // The full reason once (every time when each skip is a failure), then a short line per case.
  static bool reason_shown = false;
  const bool full = !reason_shown || tessel_test::require_gpu();
  tessel_test::skip_gpu_case(full ? "no CUDA driver: runtime GPU tests — " + Driver::get().unavailable_reason()
                                  : std::string("no CUDA driver"));
  reason_shown = true;
  return false;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-100.0f, 100.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

constexpr uint32_t kNanPoison = 0x7fc0dead;  // a quiet NaN no kernel result can equal
constexpr unsigned kBlock = 256;

// Runs vadd over n random elements with the output poisoned; returns mismatches.
size_t run_vadd(const Function& fn, size_t n, CUstream stream, uint32_t seed) {
  std::vector<float> a = random_floats(n, seed), b = random_floats(n, seed + 1);
  DeviceBuffer da(n * 4), db(n * 4), dout(n * 4 + 64);  // + a guard zone past the end
  da.upload(a);
  db.upload(b);
  dout.fill_u32(kNanPoison);
  CUdeviceptr pa = da.ptr(), pb = db.ptr(), pout = dout.ptr();
  unsigned un = static_cast<unsigned>(n);
  void* params[] = {&pa, &pb, &pout, &un};
  launch(fn, Dim3{static_cast<unsigned>((n + kBlock - 1) / kBlock)}, Dim3{kBlock}, 0, stream, params);
  std::vector<float> out(n + 16);
  dout.download_async(out.data(), out.size() * 4, stream);
  check(cu().StreamSynchronize(stream), "cuStreamSynchronize");
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i)
    if (std::bit_cast<uint32_t>(out[i]) != std::bit_cast<uint32_t>(a[i] + b[i])) {
      if (bad == 0) MESSAGE("first mismatch at " << i << ": " << out[i] << " vs " << a[i] + b[i]);
      ++bad;
    }
  for (size_t i = n; i < out.size(); ++i)  // the kernel must not write past n
    if (std::bit_cast<uint32_t>(out[i]) != kNanPoison) ++bad;
  return bad;
}

}  // namespace

TEST_CASE("GPU: device attributes" * doctest::test_suite("gpu")) {
  if (!gpu_or_skip()) return;
  REQUIRE(Device::count() >= 1);
  Context ctx(0);
  const Device& dev = ctx.device();
  MESSAGE(dev.name() << " sm_" << dev.sm_arch() << ", " << dev.sm_count() << " SMs, L2 "
                     << dev.l2_bytes() << " B, smem optin " << dev.max_shared_per_block_optin()
                     << " B, " << dev.total_memory() / (1 << 20) << " MiB, driver "
                     << Driver::get().version());
  CHECK_FALSE(dev.name().empty());
  CHECK(dev.cc_major() >= 7);
  CHECK(dev.sm_arch() == dev.cc_major() * 10 + dev.cc_minor());
  CHECK(dev.sm_count() > 0);
  CHECK(dev.l2_bytes() > 0);
  CHECK(dev.max_shared_per_block() == 48 * 1024);
  CHECK(dev.max_shared_per_block_optin() >= dev.max_shared_per_block());
  CHECK(dev.max_threads_per_block() == 1024);
  CHECK(dev.warp_size() == 32);
  CHECK(dev.total_memory() > (size_t(1) << 30));
  CHECK(dev.attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT) == dev.sm_count());
  try {
    Device bad(Device::count());
    FAIL("an out-of-range ordinal was accepted");
  } catch (const CudaError& e) {
    CHECK(e.code() == CUDA_ERROR_INVALID_DEVICE);
    CHECK(e.call() == "cuDeviceGet");
  }
}

TEST_CASE("GPU: contexts retain and move" * doctest::test_suite("gpu")) {
  if (!gpu_or_skip()) return;
  Context a(0);
  Context b(0);  // the same primary context, retained twice
  CHECK(a.handle() == b.handle());
  Context c = std::move(a);
  CHECK(a.handle() == nullptr);
  CHECK(c.handle() == b.handle());
  CUcontext current = nullptr;
  c.make_current();
  check(cu().CtxGetCurrent(&current), "cuCtxGetCurrent");
  CHECK(current == c.handle());
  CHECK_NOTHROW(c.synchronize());
}

TEST_CASE("GPU: buffer upload, download, offsets and fills" * doctest::test_suite("gpu")) {
  if (!gpu_or_skip()) return;
  Context ctx(0);
  const size_t n = 1000003;
  std::vector<float> host = random_floats(n, 7);
  DeviceBuffer buf(n * sizeof(float));
  CHECK(buf.size() == n * 4);
  CHECK(buf.ptr() != 0);
  buf.upload(host);
  std::vector<float> back(n, -1.0f);
  buf.download(back);
  CHECK(back == host);

  // Partial copies at an odd offset touch only their range.
  std::vector<float> patch = random_floats(333, 8);
  buf.upload(patch, 101 * sizeof(float));
  buf.download(back);
  for (size_t i = 0; i < 333; ++i) host[101 + i] = patch[i];
  CHECK(back == host);
  std::vector<float> tail(5);
  buf.download(tail, (n - 5) * sizeof(float));
  CHECK(tail == std::vector<float>(host.end() - 5, host.end()));

  CHECK_THROWS_AS(buf.download(tail, (n - 4) * sizeof(float)), std::out_of_range);
  CHECK_THROWS_AS(buf.upload(host.data(), n * 4 + 1), std::out_of_range);

  buf.memset(0xAB);
  std::vector<uint8_t> bytes(n * 4);
  buf.download(bytes);
  CHECK(std::count(bytes.begin(), bytes.end(), uint8_t{0xAB}) == static_cast<long>(bytes.size()));
  buf.fill_u32(0x3f800000);  // 1.0f
  buf.download(back);
  CHECK(std::count(back.begin(), back.end(), 1.0f) == static_cast<long>(n));

  DeviceBuffer odd(7);
  CHECK_THROWS_AS(odd.fill_u32(0), std::invalid_argument);
  DeviceBuffer moved = std::move(buf);
  CHECK(buf.ptr() == 0);
  CHECK(moved.size() == n * 4);
}

TEST_CASE("GPU: JIT-loaded vector add on an odd size, default stream and a stream" * doctest::test_suite("gpu")) {
  if (!gpu_or_skip()) return;
  Context ctx(0);
  Module mod = Module::load_ptx(test::kVaddPtx, /*verbose=*/true);
  MESSAGE("JIT info log: " << mod.info_log());
  Function fn = mod.get_function("vadd");
  CHECK(fn.name() == "vadd");
  CHECK(fn.num_regs() > 0);
  CHECK(fn.num_regs() <= 32);
  CHECK(fn.local_size_bytes() == 0);  // no spills, no stack
  CHECK(fn.shared_size_bytes() == 0);
  CHECK(fn.max_threads_per_block() >= 256);
  CHECK(run_vadd(fn, 1000003, nullptr, 11) == 0);
  Stream stream;
  CHECK(run_vadd(fn, 1000003, stream, 12) == 0);
  CHECK(run_vadd(fn, 1, stream, 13) == 0);
  CHECK(run_vadd(fn, 257, stream, 14) == 0);

  try {
    (void)mod.get_function("no_such_kernel");
    FAIL("a missing kernel was found");
  } catch (const CudaError& e) {
    CHECK(e.code() == CUDA_ERROR_NOT_FOUND);
    CHECK(contains(e.what(), "no_such_kernel"));
  }
  // Too many threads per block: the launch fails with the kernel named, and the
  // context stays usable (launch configuration errors are not sticky).
  CUdeviceptr p = 0;
  unsigned zero = 0;
  void* params[] = {&p, &p, &p, &zero};
  try {
    launch(fn, Dim3{1}, Dim3{4096}, 0, nullptr, params);
    FAIL("a 4096-thread block launched");
  } catch (const CudaError& e) {
    CHECK(e.call() == "cuLaunchKernel");
    CHECK(contains(e.what(), "kernel vadd grid (1, 1, 1) block (4096, 1, 1)"));
  }
  CHECK(run_vadd(fn, 999, nullptr, 15) == 0);
}

TEST_CASE("GPU: dynamic shared memory opt-in" * doctest::test_suite("gpu")) {
  if (!gpu_or_skip()) return;
  Context ctx(0);
  Module mod = Module::load_ptx(test::kVaddPtx);
  Function fn = mod.get_function("vadd");
  const int optin = ctx.device().max_shared_per_block_optin();
  CHECK_NOTHROW(fn.set_max_dynamic_shared(optin));
  CHECK(fn.attribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) == optin);
  CHECK_THROWS_AS(fn.set_max_dynamic_shared(optin + 1024 * 1024), CudaError);
}

TEST_CASE("GPU: bad PTX throws CudaError carrying the JIT log" * doctest::test_suite("gpu")) {
  if (!gpu_or_skip()) return;
  Context ctx(0);
  try {
    (void)Module::load_ptx(test::kBadPtx);
    FAIL("bad PTX loaded");
  } catch (const CudaError& e) {
    const std::string msg = e.what();
    MESSAGE(msg);
    CHECK(e.code() == CUDA_ERROR_INVALID_PTX);
    CHECK(msg.rfind("cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX", 0) == 0);
    CHECK(contains(msg, "JIT log: "));
    CHECK(contains(e.detail(), "line 17"));
    CHECK(contains(e.detail(), "%q9"));
  }
}

TEST_CASE("GPU: event timing" * doctest::test_suite("gpu")) {
  if (!gpu_or_skip()) return;
  Context ctx(0);
  Module mod = Module::load_ptx(test::kVaddPtx);
  Function fn = mod.get_function("vadd");
  const size_t n = 1 << 24;
  DeviceBuffer a(n * 4), b(n * 4), out(n * 4);
  a.fill_u32(0x3f800000);
  b.fill_u32(0x40000000);
  CUdeviceptr pa = a.ptr(), pb = b.ptr(), pout = out.ptr();
  unsigned un = n;
  void* params[] = {&pa, &pb, &pout, &un};
  Stream stream;
  Event start, stop;
  start.record(stream);
  for (int i = 0; i < 10; ++i) launch(fn, Dim3{unsigned(n / kBlock)}, Dim3{kBlock}, 0, stream, params);
  stop.record(stream);
  stop.synchronize();
  float ms = Event::elapsed_ms(start, stop);
  MESSAGE("10 vector adds of 2^24 floats: " << ms << " ms");
  CHECK(ms > 0.0f);
  CHECK(ms < 10000.0f);
  std::vector<float> host(n);
  out.download(host);
  CHECK(std::count(host.begin(), host.end(), 3.0f) == static_cast<long>(n));
  Event moved = std::move(start);
  CHECK(start.handle() == nullptr);
  CHECK(moved.handle() != nullptr);
}

TEST_CASE("GPU: linker turns PTX into a cubin that loads and runs" * doctest::test_suite("gpu")) {
  if (!gpu_or_skip()) return;
  Context ctx(0);
  Linker linker(/*verbose=*/true);
  linker.add_ptx(test::kVaddPtx, "vadd.ptx");
  std::vector<char> cubin = linker.complete();
  MESSAGE("cubin " << cubin.size() << " bytes; linker info: " << linker.info_log());
  REQUIRE(cubin.size() > 64);
  CHECK(std::string(cubin.data(), 4) == "\x7f" "ELF");
  CHECK_THROWS_AS(linker.complete(), std::logic_error);  // one use only

  Module mod = Module::load_cubin(cubin);
  Function fn = mod.get_function("vadd");
  CHECK(run_vadd(fn, 1000003, nullptr, 21) == 0);

  CHECK(contains(linker.info_log(), "registers"));  // verbose: ptxas' usage report

  // A cubin built without -rdc is final code: the linker refuses it, naming the input.
  Linker relink;
  try {
    relink.add_cubin(cubin, "vadd.cubin");
    (void)relink.complete();
    FAIL("a non-relocatable cubin was linked");
  } catch (const CudaError& e) {
    MESSAGE(std::string(e.what()));
    CHECK(contains(e.what(), "vadd.cubin"));
  }

  Linker bad;
  try {
    bad.add_ptx(test::kBadPtx, "broken.ptx");
    (void)bad.complete();
    FAIL("bad PTX linked");
  } catch (const CudaError& e) {
    MESSAGE(std::string(e.what()));
    CHECK(contains(e.what(), "linker log"));
    CHECK(contains(e.detail(), "%q9"));
  }
}

// The launch path's cost against a raw cuLaunchKernel is a benchmark (tessel_bench_bundle's
// "launch call" rows, bench/RESULTS.md), not a test: a timed check fails on a loaded machine or
// under compute-sanitizer. Here: many launches through both paths, each one correct.
TEST_CASE("GPU: launch() and a raw cuLaunchKernel of the same function, many times, write nothing for n = 0" *
          doctest::test_suite("gpu")) {
  if (!gpu_or_skip()) return;
  Context ctx(0);
  Module mod = Module::load_ptx(test::kVaddPtx);
  Function fn = mod.get_function("vadd");
  DeviceBuffer out(4 * 32);
  out.fill_u32(kNanPoison);
  CUdeviceptr p = out.ptr();
  unsigned n = 0;  // every thread exits at once
  void* params[] = {&p, &p, &p, &n};
  Stream stream;
  CUfunction raw = fn.handle();
  auto raw_launch = cu().LaunchKernel;
  for (int i = 0; i < 2000; ++i) {
    REQUIRE(raw_launch(raw, 1, 1, 1, 32, 1, 1, 0, stream, params, nullptr) == CUDA_SUCCESS);
    launch(fn, Dim3{1}, Dim3{32}, 0, stream, params);
  }
  stream.synchronize();
  std::vector<uint32_t> host(32);
  out.download(host);
  CHECK(std::count(host.begin(), host.end(), kNanPoison) == 32);  // n = 0: nothing written
}
