// The interpreter's test kernels run again on the GPU: each run_kernel() call of tests/interp
// runs the interpreter (whose results the test then checks against its host reference), then
// the same IR through the passes, the lowering and the driver, with the same inputs and poisoned
// outputs, and compares every written byte with the interpreter's result: integers and
// pointers exactly, floats within a bound chosen from the kernel's ops (tolerance_for, in
// tests/common/gpu_compare.hpp, which holds the comparison; tests/fuzz shares it).
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "../common/gpu_compare.hpp"
#include "../common/gpu_gate.hpp"
#include "../interp/interp_test_util.hpp"
#include "tessel/ir/printer.hpp"
#include "tessel/jit/device.hpp"

namespace interp_test {

thread_local const char* g_interpreter_only = nullptr;
thread_local const GpuUnspecified* g_unspecified = nullptr;

struct GpuUnspecifiedAccess {
  // Whether any GpuUnspecified in scope leaves element `index` of `region` unspecified.
  static bool skipped(size_t region, size_t index) {
    for (const GpuUnspecified* u = g_unspecified; u; u = u->prev_)
      if (u->skip_(region, index)) return true;
    return false;
  }
};

namespace gc = tessel_test::gpu_compare;  // the comparison itself: tests/common/gpu_compare.hpp

InterpreterOnly::InterpreterOnly(const char* why) : prev_(g_interpreter_only) { g_interpreter_only = why; }
InterpreterOnly::~InterpreterOnly() { g_interpreter_only = prev_; }

GpuUnspecified::GpuUnspecified(const char* why, Skip skip) : prev_(g_unspecified), why_(why), skip_(std::move(skip)) {
  g_unspecified = this;
}
GpuUnspecified::~GpuUnspecified() { g_unspecified = prev_; }


void run_checked_on_gpu(const Function& f, Grid grid, std::span<const ArgValue> args,
                        std::span<const MemRegion> mem) {
  std::vector<std::vector<std::byte>> before = gc::snapshot(mem);
  tessel::interp::run(f, grid, args, mem);  // throws for the tests of interpreter errors
  if (g_interpreter_only) {
    MESSAGE("interpreter only (" << g_interpreter_only << "): " << f.name);
    return;
  }
  if (grid.x * grid.y * grid.z == 0) return;  // no program runs: nothing to compare
  tessel::jit::Device& dev = tessel::jit::Device::current();
  if (dev.kind() != tessel::jit::BackendKind::Cuda) {
    static bool said = false;
    if (!said || tessel_test::require_gpu()) tessel_test::skip_gpu_case("interpreter kernels on the GPU: " + dev.describe());
    else ++tessel_test::skipped_gpu_cases();
    said = true;
    return;
  }
  REQUIRE_MESSAGE(!gc::overlapping(mem), "kernel " << f.name << ": overlapping memory regions are not mirrored on the GPU");
  // What each region holds, from the pointer parameters that point into it.
  std::vector<gc::BufferView> views = gc::buffer_views(f, args, mem);
  // The GPU compiles what the JIT compiles: the IR after the generic passes (a copy, parsed
  // back from the printed text, so the test's own Function is left as it is).
  std::shared_ptr<const Function> fin = gc::as_jit_compiles(f);
  for (int warps : {1, 4}) {
    tessel::jit::CompileOptions opts;
    opts.num_warps = warps;
    std::vector<std::vector<std::byte>> gpu = gc::run_gpu(dev, fin, opts, grid, args, mem, before);
    for (size_t r = 0; r < mem.size(); ++r) {
      if (!mem[r].writable) continue;
      const auto* p = static_cast<const std::byte*>(mem[r].base);
      std::vector<std::byte> ref(p, p + mem[r].bytes);
      std::string diff = gc::compare(gpu[r], ref, views[r], gc::tolerance_for(f, views[r].elem.scalar),
                                     GpuUnspecifiedAccess::skipped);
      if (!diff.empty())
        FAIL_CHECK("kernel '" << f.name << "' (num_warps " << warps << ", grid " << grid.x << "x" << grid.y << "x"
                              << grid.z << "): buffer " << r << " differs from the interpreter\n"
                              << diff << "  IR:\n" << tessel::ir::print(f));
    }
  }
}

}  // namespace interp_test
