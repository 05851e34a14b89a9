// Device memory at the edges of size_t: sizes and ranges whose arithmetic would wrap are refused,
// never turned into a small allocation or a passing range check.
#include <doctest/doctest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "../common/child_process.hpp"
#include "tessel/jit/device.hpp"

using namespace tessel;

TEST_CASE("an allocation whose size wraps is refused on every device") {
  jit::Device& d = jit::Device::current();
  // The interpreter rounded SIZE_MAX up to a multiple of 256, which wrapped to 0 bytes: a valid,
  // empty block every range check then trusted with SIZE_MAX bytes. (The GPU: cuMemAlloc refuses.)
  CHECK_THROWS(d.alloc(SIZE_MAX));
  CHECK_THROWS(d.alloc(SIZE_MAX - 100));
  // An element count whose byte size wraps is refused before anything is allocated.
  CHECK_THROWS_AS(jit::Array<double>(SIZE_MAX / 4), std::length_error);
  CHECK_THROWS_AS(jit::Array<uint16_t>(SIZE_MAX / 2 + 1), std::length_error);
  jit::Array<double> fine(SIZE_MAX / (uint64_t{1} << 50));  // 16383 elements: no false alarm
  CHECK(fine.size() == 16383);
}

TEST_CASE("the interpreter's range check cannot be passed by a length that wraps the address") {
  jit::Device& d = jit::Device::current();
  if (d.kind() != jit::BackendKind::Interpreter) {
    MESSAGE("not applicable: the current device is " << d.describe() << " (the driver checks ranges on the GPU)");
    return;
  }
  jit::Array<float> a(16);
  // addr + bytes wraps to a small number: the old check (addr + bytes > end) passed it, and the
  // copy ran off the allocation. In a child process, so that regression cannot crash this one.
  const std::string how = tessel_test::run_in_child([&] {
    const uint64_t addr = a.address();
    const size_t wrapping = SIZE_MAX - addr + 2;  // addr + wrapping == 1 (mod 2^64)
    std::vector<char> host(64);
    auto refused = [](auto&& f) {
      try {
        f();
      } catch (const std::out_of_range&) {
        return true;
      }
      return false;
    };
    return refused([&] { d.upload(addr, host.data(), wrapping); }) &&
           refused([&] { d.download(host.data(), addr, wrapping); }) &&
           refused([&] { d.fill_bytes(addr, 0, wrapping); }) && refused([&] { d.copy(addr, addr, wrapping); });
  });
  CHECK(how == "exit 0");
  // In range still works.
  std::vector<float> in(16, 2.5f);
  a.upload(in);
  CHECK(a.download() == in);
}
