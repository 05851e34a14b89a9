// Tiles too large for a thread's registers are refused at the user's line before any code is generated.
#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "kernels.hpp"
#include "tessel/ir/verify.hpp"
#include "tessel/lowering/compile.hpp"

using namespace lowering_test;
using tessel::lowering::Options;
using tessel::ResourceLimitError;

namespace {

constexpr const char* kFile = "user/huge_tile.cpp";
constexpr uint32_t kLine = 77;

// out[offs] = x[offs] * x[offs] over one tile of `block` elements of `t`; the offsets (the first
// tile) are made at kFile:kLine, the rest on the lines after it.
std::unique_ptr<Function> square_kernel(int64_t block, Scalar t) {
  auto f = std::make_unique<Function>("square");
  Builder b(*f);
  Value* x = f->add_param("x", ptr_t(t), div16());
  Value* out = f->add_param("out", ptr_t(t), div16());
  b.loc = tessel::SrcLoc{kFile, kLine};
  Value* offs = b.arange(0, block);
  b.loc = tessel::SrcLoc{kFile, kLine + 1};
  Value* v = b.value(OpKind::Load, {at(b, x, offs)});
  b.loc = tessel::SrcLoc{kFile, kLine + 2};
  b.create(OpKind::Store, {at(b, out, offs), b.value(OpKind::Mul, {v, v})});
  tessel::ir::verify(*f);
  return f;
}

Options warps(int w) {
  Options o;
  o.num_warps = w;
  return o;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("a 2^20-element tile on 4 warps is a CompileError at its line, raised before any code is generated") {
  auto f = square_kernel(int64_t{1} << 20, Scalar::f32);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    (void)tessel::lowering::compile(*f, warps(4));
    FAIL("expected a ResourceLimitError");
  } catch (const ResourceLimitError& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(e.line() == kLine);
    CHECK(what.find(std::string(kFile) + ":" + std::to_string(kLine) + ": error: kernel 'square': the tile "
                    "i32[1048576] on 4 warps needs 8192 32-bit registers per thread") == 0);
    CHECK(what.find("use more warps (num_warps up to 32) or smaller blocks") != std::string::npos);
    CHECK(what.find('\n') == std::string::npos);
  }
  // lower_to_llvm_ir checks the same, and neither gets as far as LLVM: lowering this kernel takes
  // seconds, refusing it milliseconds.
  CHECK_THROWS_AS(tessel::lowering::lower_to_llvm_ir(*f, warps(4)), ResourceLimitError);
  CHECK(seconds_since(t0) < 0.5);
}

TEST_CASE("the limit is 2048 32-bit registers per thread for one value: element bytes and warps count") {
  // 1 warp: an f32 tile of 32768 has 1024 elements per thread, and its pointer tile (8 bytes an
  // element) 2048 registers: at the limit, it compiles. With twice the elements the i32 offsets
  // are at the limit and the pointers over it: the pointer tile is the one named.
  auto at_limit = square_kernel(32768, Scalar::f32);
  CHECK_NOTHROW(tessel::lowering::lower_to_llvm_ir(*at_limit, warps(1)));
  const std::string over = std::string(kFile) + ":" + std::to_string(kLine + 1) +
                           ": error: kernel 'square': the tile ptr<f32>[65536] on 1 warp needs 4096 32-bit registers";
  CHECK_THROWS_WITH_AS(tessel::lowering::lower_to_llvm_ir(*square_kernel(65536, Scalar::f32), warps(1)),
                       doctest::Contains(over.c_str()), ResourceLimitError);
  // ... more warps bring the same tiles back under it; and it is a CompileError like any other.
  CHECK_NOTHROW(tessel::lowering::lower_to_llvm_ir(*square_kernel(65536, Scalar::f32), warps(2)));
  CHECK_THROWS_AS(tessel::lowering::compile(*square_kernel(int64_t{1} << 20, Scalar::f32), warps(16)),
                  tessel::CompileError);
}
