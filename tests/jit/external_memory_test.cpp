// Caller-owned memory on the CPU interpreter (Device::register_external, ExternalMemory):
// kernels over DevicePtrs into it, its lifetime, and every registration the device refuses.
// The interpreter's own behaviour: on a GPU (which needs no registration) these cases say they
// do not apply, except DevicePtr arithmetic.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessel/interp/interpreter.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;
using namespace tessel::lang;

namespace {

// out = x * 0.5 + 1
void half_plus_one_kernel(Ptr<f32> x, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask) * 0.5f + 1.0f, mask);
}

jit::Kernel<Ptr<f32>, Ptr<f32>, Int, const Meta&>& half_plus_one() {
  static jit::Kernel k{"half_plus_one", &half_plus_one_kernel, {"x", "out", "n"}, Meta{{"BLOCK", 256}}};
  return k;
}

// True on the interpreter; elsewhere says the case does not apply.
bool interpreter_or_skip() {
  if (jit::Device::current().kind() == jit::BackendKind::Interpreter) return true;
  MESSAGE("not applicable on the GPU: registering host memory is the interpreter's");
  return false;
}

std::string hex(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(p)));
  return buf;
}
uint64_t addr_of(const void* p) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)); }

constexpr uint32_t kPoison = 0xFFFFFFFFu;
uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

std::vector<float> random_floats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-8.0f, 8.0f);
  std::vector<float> v(n);
  for (float& f : v) f = u(rng);
  return v;
}

std::string invalid_argument_of(auto&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("external memory: DevicePtr arithmetic counts elements of T") {
  constexpr jit::DevicePtr<float> p{0x1000};
  static_assert((p + 3).addr == 0x100c && (3 + p).addr == 0x100c && (p - 2).addr == 0x0ff8);
  static_assert(p + 0 == p && (p + 5) - 5 == p);
  jit::DevicePtr<double> d{0x2000};
  d += 4;
  CHECK(d.addr == 0x2020);
  d += -1;
  CHECK(d.addr == 0x2018);
  double host[4];
  const auto of = jit::DevicePtr<double>::of(host);
  CHECK(of.get() == host);
  CHECK((of + 3).get() == host + 3);
  CHECK(jit::DevicePtr<int16_t>::of(host).addr + 2 == (jit::DevicePtr<int16_t>::of(host) + 1).addr);
}

TEST_CASE("external memory: a kernel over DevicePtrs into registered host memory, offset by arithmetic") {
  if (!interpreter_or_skip()) return;
  jit::Device& dev = jit::Device::current();
  for (int64_t n : {1, 4097}) {
    CAPTURE(n);
    const int64_t in_skip = 3, out_skip = 5, out_tail = 4;
    std::vector<float> x = random_floats(n + in_skip, 7 + n);
    std::vector<float> out(n + out_skip + out_tail);
    jit::ExternalMemory rx(dev, x.data(), x.size() * sizeof(float));
    jit::ExternalMemory rout(dev, out.data(), out.size() * sizeof(float));
    dev.fill_bytes(addr_of(out.data()), 0xFF, out.size() * sizeof(float));  // poisoned through the device
    const auto px = jit::DevicePtr<float>::of(x.data()) + in_skip;
    const auto pout = out_skip + jit::DevicePtr<float>::of(out.data());
    half_plus_one()(jit::Grid{static_cast<uint32_t>(jit::cdiv(n, 256))}, {}, px, pout, n);
    int wrong = 0;
    for (int64_t i = 0; i < static_cast<int64_t>(out.size()); ++i) {
      const bool written = i >= out_skip && i < out_skip + n;
      const uint32_t want = written ? bits_of(x[i - out_skip + in_skip] * 0.5f + 1.0f) : kPoison;
      if (bits_of(out[i]) != want && ++wrong <= 5) CHECK_MESSAGE(false, "out[" << i << "] = " << out[i]);
    }
    CHECK(wrong == 0);  // every element written from its own, and none outside [out_skip, out_skip + n)
  }
}

TEST_CASE("external memory: upload, download, fill and copy take registered regions, within their bounds") {
  if (!interpreter_or_skip()) return;
  jit::Device& dev = jit::Device::current();
  std::vector<float> host(64, 0.0f);
  const std::vector<float> src = random_floats(64, 1);
  jit::ExternalMemory reg(dev, host.data(), host.size() * sizeof(float));
  dev.upload(addr_of(host.data()), src.data(), 64 * sizeof(float));
  CHECK(host == src);
  jit::Array<float> a(64);
  dev.copy(a.address(), addr_of(host.data()), 64 * sizeof(float));  // registered -> allocation
  CHECK(a.download() == src);
  dev.fill_bytes(addr_of(host.data() + 8), 0, 8 * sizeof(float));
  dev.copy(addr_of(host.data()), addr_of(host.data() + 8), 8 * sizeof(float));  // within the region
  std::vector<float> back(64);
  dev.download(back.data(), addr_of(host.data()), 64 * sizeof(float));
  for (int i = 0; i < 16; ++i) CHECK(back[i] == 0.0f);
  for (int i = 16; i < 64; ++i) CHECK(back[i] == src[i]);
  // One byte past the region's end is outside it.
  CHECK_THROWS_WITH_AS(dev.upload(addr_of(host.data() + 1), src.data(), 64 * sizeof(float)),
                       ("upload: 256 bytes at " + hex(host.data() + 1) +
                        " are not inside one allocation or registered region")
                           .c_str(),
                       std::out_of_range);
}

TEST_CASE("external memory: a copy just past an allocation's end is refused, not taken as inside it") {
  if (!interpreter_or_skip()) return;
  jit::Device& dev = jit::Device::current();
  // An allocation is rounded up to 256 bytes: the bytes past its 64 are in no other region.
  jit::Array<float> a(16);
  float v[2] = {1.0f, 2.0f};
  CHECK_THROWS_WITH_AS(dev.upload(a.address() + 72, v, sizeof v),
                       ("upload: 8 bytes at " + hex(reinterpret_cast<const void*>(a.address() + 72)) +
                        " are not inside one allocation or registered region")
                           .c_str(),
                       std::out_of_range);
  CHECK_THROWS_AS(dev.download(v, a.address() + 64, 4), std::out_of_range);  // the first byte past it
  CHECK_NOTHROW(dev.download(v, a.address() + 56, 8));                       // its last 8 bytes
}

TEST_CASE("external memory: once its ExternalMemory ends, the memory is unknown to kernels and copies") {
  if (!interpreter_or_skip()) return;
  jit::Device& dev = jit::Device::current();
  const int64_t n = 100;
  std::vector<float> x = random_floats(n, 2), out(n);
  const auto px = jit::DevicePtr<float>::of(x.data()), pout = jit::DevicePtr<float>::of(out.data());
  {
    jit::ExternalMemory rx(dev, x.data(), n * sizeof(float)), rout(dev, out.data(), n * sizeof(float));
    half_plus_one()(jit::Grid{1}, {}, px, pout, n);
    CHECK(out[n - 1] == x[n - 1] * 0.5f + 1.0f);
  }
  try {
    half_plus_one()(jit::Grid{1}, {}, px, pout, n);
    FAIL("expected an InterpError: the memory is no longer registered");
  } catch (const interp::InterpError& e) {
    const std::string msg = e.what();
    INFO(msg);
    CHECK(msg.find("op 'load'") != std::string::npos);
    CHECK(msg.find("element 0 reads 4 bytes at " + hex(x.data()) + " which is outside every buffer") != std::string::npos);
    CHECK(msg.find("(the interpreter's buffers are its allocations and the host memory registered with it: "
                   "ExternalMemory, Device::register_external)") != std::string::npos);
  }
  CHECK_THROWS_WITH_AS(dev.download(out.data(), addr_of(x.data()), 4),
                       ("download: 4 bytes at " + hex(x.data()) + " are not inside one allocation or registered region")
                           .c_str(),
                       std::out_of_range);
  // The same memory may be registered again.
  jit::ExternalMemory again(dev, x.data(), n * sizeof(float));
  CHECK_NOTHROW(dev.download(out.data(), addr_of(x.data()), 4));
}

TEST_CASE("external memory: every registration the interpreter refuses, with its message") {
  if (!interpreter_or_skip()) return;
  jit::Device& dev = jit::Device::current();
  alignas(64) static unsigned char mem[1024];
  unsigned char* r = mem + 256;  // a region of 128 bytes in the middle
  jit::ExternalMemory reg(dev, r, 128);
  const std::string before = "overlap the region of 128 bytes at " + hex(r) + " registered before";

  CHECK(invalid_argument_of([&] { dev.register_external(nullptr, 16); }) ==
        "register_external: a null pointer (16 bytes)");
  CHECK(invalid_argument_of([&] { dev.register_external(mem, 0); }) ==
        "register_external: an empty region at " + hex(mem) + " (0 bytes)");
  // Overlaps with the registered region: the same, its start, its end, inside it, around it.
  CHECK(invalid_argument_of([&] { dev.register_external(r, 128); }) ==
        "register_external: 128 bytes at " + hex(r) + " " + before);
  CHECK(invalid_argument_of([&] { dev.register_external(r - 16, 17); }) ==
        "register_external: 17 bytes at " + hex(r - 16) + " " + before);
  CHECK(invalid_argument_of([&] { dev.register_external(r + 127, 64); }) ==
        "register_external: 64 bytes at " + hex(r + 127) + " " + before);
  CHECK(invalid_argument_of([&] { dev.register_external(r + 8, 8); }) ==
        "register_external: 8 bytes at " + hex(r + 8) + " " + before);
  CHECK(invalid_argument_of([&] { dev.register_external(mem, 1024); }) ==
        "register_external: 1024 bytes at " + hex(mem) + " " + before);
  // Regions that only touch it are not overlaps.
  {
    jit::ExternalMemory left(dev, r - 16, 16), right(dev, r + 128, 16);
  }
  // An allocation of the interpreter's own.
  jit::Array<float> a(10);
  const void* pa = reinterpret_cast<const void*>(static_cast<uintptr_t>(a.address()));
  CHECK(invalid_argument_of([&] { dev.register_external(static_cast<const char*>(pa) + 4, 4); }) ==
        "register_external: 4 bytes at " + hex(static_cast<const char*>(pa) + 4) +
            " overlap the interpreter's allocation of 40 bytes at " + hex(pa));
  // A region past the end of the address space.
  const void* top = reinterpret_cast<const void*>(UINTPTR_MAX - 7);
  CHECK(invalid_argument_of([&] { dev.register_external(top, 16); }) ==
        "register_external: 16 bytes at " + hex(top) + " wrap around the address space");

  // Unregistering what is not registered, or an address inside a region rather than its start.
  CHECK(invalid_argument_of([&] { dev.unregister_external(mem); }) ==
        "unregister_external: no region is registered at " + hex(mem) +
            " (give the address register_external was given)");
  CHECK(invalid_argument_of([&] { dev.unregister_external(r + 4); }).find("no region is registered at " + hex(r + 4)) !=
        std::string::npos);
  // free() is for the device's allocations: registered memory is its owner's to free.
  CHECK(invalid_argument_of([&] { dev.free(addr_of(r)); }) ==
        "free of " + hex(r) +
            ": the address is registered external memory, which its owner frees (unregister it: "
            "unregister_external, or end the ExternalMemory)");
  CHECK_NOTHROW(dev.download(mem, addr_of(r), 128));  // still registered after the refused free
}

TEST_CASE("external memory: an ExternalMemory whose region was unregistered by hand ends without throwing") {
  if (!interpreter_or_skip()) return;
  jit::Device& dev = jit::Device::current();
  alignas(16) static float mem[8];
  std::optional<jit::ExternalMemory> reg;
  reg.emplace(dev, mem, sizeof mem);
  dev.unregister_external(mem);
  CHECK_NOTHROW(reg.reset());  // its unregister fails (unknown pointer), silently
  CHECK(invalid_argument_of([&] { dev.unregister_external(mem); }).find("no region is registered") !=
        std::string::npos);
}
