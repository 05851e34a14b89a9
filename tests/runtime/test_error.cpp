// CudaError formatting, CUresult names and checks that need no GPU.
#include <doctest/doctest.h>

#include <array>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessel/runtime/runtime.hpp"

using namespace tessel::rt;

static bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST_CASE("builtin_result_name maps CUresult codes without the driver") {
  CHECK(std::string(builtin_result_name(CUDA_SUCCESS)) == "CUDA_SUCCESS");
  CHECK(std::string(builtin_result_name(CUDA_ERROR_INVALID_VALUE)) == "CUDA_ERROR_INVALID_VALUE");
  CHECK(std::string(builtin_result_name(CUDA_ERROR_OUT_OF_MEMORY)) == "CUDA_ERROR_OUT_OF_MEMORY");
  CHECK(std::string(builtin_result_name(CUDA_ERROR_NO_DEVICE)) == "CUDA_ERROR_NO_DEVICE");
  CHECK(std::string(builtin_result_name(CUDA_ERROR_INVALID_PTX)) == "CUDA_ERROR_INVALID_PTX");
  CHECK(std::string(builtin_result_name(CUDA_ERROR_ILLEGAL_ADDRESS)) == "CUDA_ERROR_ILLEGAL_ADDRESS");
  CHECK(std::string(builtin_result_name(CUDA_ERROR_UNKNOWN)) == "CUDA_ERROR_UNKNOWN");
  // The numbers are part of the driver ABI; the table must agree with them.
  CHECK(std::string(builtin_result_name(static_cast<CUresult>(100))) == "CUDA_ERROR_NO_DEVICE");
  CHECK(std::string(builtin_result_name(static_cast<CUresult>(218))) == "CUDA_ERROR_INVALID_PTX");
  CHECK(builtin_result_name(static_cast<CUresult>(12345)) == nullptr);
}

TEST_CASE("error_name agrees with the builtin table and names unknown codes by number") {
  // With a driver present this goes through cuGetErrorName; the names must be identical.
  const std::array codes = {CUDA_SUCCESS, CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_NOT_FOUND,
                            CUDA_ERROR_INVALID_IMAGE, CUDA_ERROR_LAUNCH_FAILED};
  for (CUresult c : codes) CHECK(error_name(c) == builtin_result_name(c));
  CHECK(error_name(static_cast<CUresult>(12345)) == "CUresult(12345)");
}

TEST_CASE("CudaError message names the call, the error and the detail") {
  CudaError e(CUDA_ERROR_INVALID_PTX, "cuModuleLoadDataEx", "JIT log: line 3; error: bad");
  const std::string msg = e.what();
  CHECK(msg.rfind("cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX", 0) == 0);
  CHECK(contains(msg, " — JIT log: line 3; error: bad"));
  CHECK(e.code() == CUDA_ERROR_INVALID_PTX);
  CHECK(e.call() == "cuModuleLoadDataEx");
  CHECK(e.name() == "CUDA_ERROR_INVALID_PTX");
  CHECK(e.detail() == "JIT log: line 3; error: bad");
  if (Driver::get().available())  // the driver adds its description in parentheses
    CHECK(contains(msg, "CUDA_ERROR_INVALID_PTX (") );

  CudaError plain(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc");
  CHECK(std::string(plain.what()).rfind("cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY", 0) == 0);
  CHECK_FALSE(contains(plain.what(), "—"));
}

TEST_CASE("check passes success through and throws CudaError otherwise") {
  CHECK_NOTHROW(check(CUDA_SUCCESS, "cuNothing"));
  try {
    check(CUDA_ERROR_INVALID_HANDLE, "cuStreamSynchronize");
    FAIL("check did not throw");
  } catch (const CudaError& e) {
    CHECK(e.code() == CUDA_ERROR_INVALID_HANDLE);
    CHECK(e.call() == "cuStreamSynchronize");
    CHECK(contains(e.what(), "cuStreamSynchronize failed: CUDA_ERROR_INVALID_HANDLE"));
  }
  CHECK_THROWS_AS(check(CUDA_ERROR_NO_DEVICE, "cuInit"), std::runtime_error);  // CudaError is one
}

TEST_CASE("DeviceBuffer range checks need no driver") {
  DeviceBuffer empty;  // zero bytes, never allocated
  CHECK(empty.size() == 0);
  CHECK(empty.ptr() == 0);
  std::vector<float> host(3, 1.5f);
  CHECK_THROWS_AS(empty.upload(host), std::out_of_range);
  CHECK_THROWS_AS(empty.download(host), std::out_of_range);
  CHECK_THROWS_WITH_AS(empty.upload(host.data(), 4, 1),
                       "DeviceBuffer::upload: 4 bytes at offset 1 exceed the 0-byte buffer",
                       std::out_of_range);
  CHECK_NOTHROW(empty.upload(host.data(), 0));  // an empty copy of an empty buffer is fine
  CHECK_NOTHROW(empty.memset(7));
  DeviceBuffer moved = std::move(empty);
  CHECK(moved.size() == 0);
}

TEST_CASE("load_cubin rejects images the driver would read past the end") {
  auto expect_invalid = [](std::vector<char> bytes, const char* why) {
    INFO(why);
    try {
      (void)Module::load_cubin(bytes);
      FAIL("load_cubin accepted a bad image");
    } catch (const CudaError& e) {
      CHECK(e.code() == CUDA_ERROR_INVALID_IMAGE);
      CHECK(contains(e.what(), why));
    }
  };
  expect_invalid({}, "empty image");
  expect_invalid({'.', 'v', 'e', 'r', 's'}, "neither a cubin (ELF) nor a fatbin");
  std::vector<char> elf(40, 0);
  elf[0] = 0x7f, elf[1] = 'E', elf[2] = 'L', elf[3] = 'F', elf[4] = 2;
  expect_invalid(elf, "truncated ELF: 40 bytes");
  // A full header whose section table (at 0x1000, 3 entries of 64 bytes) lies outside.
  elf.assign(64, 0);
  elf[0] = 0x7f, elf[1] = 'E', elf[2] = 'L', elf[3] = 'F', elf[4] = 2;
  elf[0x29] = 0x10;          // e_shoff = 0x1000
  elf[0x3A] = 64;            // e_shentsize
  elf[0x3C] = 3;             // e_shnum
  expect_invalid(elf, "headers end at byte 4288 of a 64-byte image");
  std::vector<char> fatbin = {'\x50', '\xed', '\x55', '\xba', 1, 0, 16, 0, 100, 0, 0, 0, 0, 0, 0, 0};
  expect_invalid(fatbin, "truncated fatbin: declares 116 bytes, image has 16");
}
