// Devices, launch options and the thread's current device and stream, on whichever backend the
// process has (the interpreter here, the GPU on the device): the API's rules, not its speed.
#include <doctest/doctest.h>

#include <thread>

#include "embed_common.hpp"
#include "tessel/jit/kernel.hpp"
#include "tessel/samples/elementwise_kernels.hpp"

namespace jit = tessel::jit;
namespace samples = tessel::samples;
using namespace embed_test;

namespace {
// A stream handle that is only stored, never launched on.
CUstream_st* fake_stream(uintptr_t v) { return reinterpret_cast<CUstream_st*>(v); }
}  // namespace

TEST_CASE("devices are numbered 0 to count() - 1; another ordinal is an out_of_range naming the count") {
  const int n = jit::Device::count();
  REQUIRE(n >= 1);
  for (int i = 0; i < n; ++i) CHECK(jit::Device::get(i).ordinal() == i);
  CHECK(&jit::Device::get(0) == &jit::Device::current());
  const std::string range = n == 1 ? "there is 1 device (ordinals 0 to 0)" : "there are " + std::to_string(n) + " devices";
  CHECK_THROWS_WITH_AS(jit::Device::get(n), doctest::Contains(range.c_str()), std::out_of_range);
  CHECK_THROWS_WITH_AS(jit::Device::get(-1), doctest::Contains("Device::get(-1)"), std::out_of_range);
}

TEST_CASE("the current device and stream are per thread; the guards put back what they found") {
  jit::Device& d0 = jit::Device::current();
  CHECK(jit::Device::current_stream(d0) == jit::StreamRef{});
  {
    jit::StreamGuard g(fake_stream(0x1000));
    CHECK(jit::Device::current_stream(d0).handle == fake_stream(0x1000));
    {
      jit::StreamGuard inner(d0, fake_stream(0x2000));
      CHECK(jit::Device::current_stream(d0).handle == fake_stream(0x2000));
      // Another thread has its own: the legacy default stream until it sets one.
      std::thread([&] { CHECK(jit::Device::current_stream(d0) == jit::StreamRef{}); }).join();
    }
    CHECK(jit::Device::current_stream(d0).handle == fake_stream(0x1000));
  }
  CHECK(jit::Device::current_stream(d0) == jit::StreamRef{});
  {
    jit::DeviceGuard g(jit::Device::count() - 1);
    CHECK(&jit::Device::current() == &jit::Device::get(jit::Device::count() - 1));
    std::thread([&] { CHECK(&jit::Device::current() == &jit::Device::get(0)); }).join();
  }
  CHECK(&jit::Device::current() == &d0);
}

TEST_CASE("every launch form runs the kernel: default, a stream, a jit::Stream, LaunchOptions, the thread's stream") {
  jit::Device& dev = jit::Device::current();
  const size_t n = 4097;
  const std::vector<float> hx = random_floats(n, 40);
  jit::Array<float> x(hx), y(n);
  jit::Stream own(dev);
  const jit::Grid grid{jit::cdiv(n, 1024)};
  const jit::Meta block{{"BLOCK", 1024}};
  auto check = [&](float s) {
    own.synchronize();
    dev.synchronize();
    const std::vector<float> got = y.download();
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) bad += got[i] != hx[i] * s;
    CHECK(bad == 0);
    y.poison();
  };
  y.poison();
  samples::k_scale(grid, block, x, y, static_cast<int64_t>(n), 1.5f);
  check(1.5f);
  samples::k_scale(grid, block, own, x, y, static_cast<int64_t>(n), 2.5f);
  check(2.5f);
  samples::k_scale(grid, block, own.ref(), x, y, static_cast<int64_t>(n), 3.5f);
  check(3.5f);
  samples::k_scale(grid, block, jit::LaunchOptions{dev, own}, x, y, static_cast<int64_t>(n), 4.5f);
  check(4.5f);
  samples::k_scale.launch(grid, block, jit::CompileOptions{2}, jit::LaunchOptions(dev), x, y, static_cast<int64_t>(n), 5.5f);
  check(5.5f);
  {
    jit::StreamGuard g(own);
    samples::k_scale(grid, block, x, y, static_cast<int64_t>(n), 6.5f);
    check(6.5f);
  }
}

TEST_CASE("DevicePtr: element arithmetic, from a pointer, back to a pointer") {
  float buf[8];
  auto p = jit::DevicePtr<float>::of(buf);
  CHECK(p.get() == buf);
  CHECK((p + 3).get() == buf + 3);
  CHECK((3 + p).get() == buf + 3);
  CHECK(((p + 5) - 2).get() == buf + 3);
  p += 2;
  CHECK(p.get() == buf + 2);
  CHECK(jit::DevicePtr<double>{16} + 1 == jit::DevicePtr<double>{24});
}

TEST_CASE("launch_tuned on a stream and a device: the right values, one choice per device") {
  jit::Device& dev = jit::Device::current();
  if (dev.kind() != jit::BackendKind::Interpreter) {
    MESSAGE("interpreter only: on the GPU launch_tuned tunes (tests/tune covers that)");
    return;
  }
  namespace tune = jit::tune;
  const std::vector<tune::Config> configs{tune::Config{jit::Meta{{"BLOCK", 64}}, {}},
                                          tune::Config{jit::Meta{{"BLOCK", 256}}, {}}};
  jit::Kernel k{"add", &samples::add_kernel, {"x", "y", "out", "n"}, jit::Meta{{"BLOCK", 1024}},
                tune::Autotune{configs, tune::KeySpec{{{"n"}}}}};
  const size_t n = 1000;
  const std::vector<float> hx = random_floats(n, 50), hy = random_floats(n, 51);
  jit::Array<float> x(hx), y(hy), out(n);
  jit::Stream s(dev);
  auto grid = [&](const jit::Meta& m) { return jit::Grid{jit::cdiv(n, m["BLOCK"])}; };
  out.poison();
  const tune::Config& c = k.launch_tuned(s, grid, x, y, out, static_cast<int64_t>(n));
  s.synchronize();
  CHECK(c == configs[0]);  // untuned on the interpreter: the first config
  std::vector<float> got = out.download();
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) bad += got[i] != hx[i] + hy[i];
  CHECK(bad == 0);
  out.poison();
  CHECK(k.launch_tuned(jit::LaunchOptions{dev, s}, jit::Meta{}, grid, x, y, out, static_cast<int64_t>(n)) == configs[0]);
  got = out.download();
  bad = 0;
  for (size_t i = 0; i < n; ++i) bad += got[i] != hx[i] + hy[i];
  CHECK(bad == 0);
}
