// Runs a tile-IR kernel on the GPU over copies of host buffers and compares what it wrote with
// the interpreter's results: integers and pointers byte for byte, floats within a Tolerance.
// Shared by tests/interp_gpu (the interpreter's test kernels on the GPU) and tests/fuzz.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tessel/interp/interpreter.hpp"
#include "tessel/ir/ir.hpp"
#include "tessel/jit/device.hpp"
#include "tessel/jit/options.hpp"

namespace tessel_test::gpu_compare {

// How close a float result must be:
//   |gpu - interp| <= rtol * |interp| + atol * max|interp| over the buffer + abs
//                     (+ the smallest normal of the type when normal_slack, for results that
//                        flush or round near zero).
// A Tolerance of all zeros without normal_slack demands equal values (NaN matches NaN; +0
// matches -0, which min/max may return for each other).
struct Tolerance {
  double rtol = 0;
  double atol = 0;
  double abs = 0;
  bool normal_slack = true;
};

// The bound for one output buffer of element type `s`, from the ops of the kernel (the model
// of tests/interp_gpu):
//  - plain arithmetic: 4 ulp of the type (the GPU contracts a*b+c into one fma, the interpreter
//    rounds twice; f16/bf16 math runs in f32 on the GPU and in double here, each rounded once);
//  - the .approx transcendentals (exp, log, sin, cos, rsqrt, tanh, erf, sigmoid, randn):
//    2^-16 relative to the value and to the buffer's largest magnitude for f32 results, 2 ulp
//    of f16/bf16, 1e-13 for f64 (f64_math.hpp's series);
//  - sums in another order (reduce_sum, cumsum, generic reduce, dot, float atomic_add): 2^-14
//    of the buffer's largest magnitude (f32; tf32 and fp8 dots 2^-9), 4 ulp of f16/bf16 times 8.
Tolerance tolerance_for(const tessel::ir::Function& f, tessel::ir::Scalar s);

// What a memory region holds, from the kernel's pointer parameters that point into it.
struct BufferView {
  size_t region = 0;
  tessel::ir::DType elem{tessel::ir::Scalar::i8, false};  // what the kernel's pointers to it point at (i8: bytes)
  bool typed = false;
};
std::vector<BufferView> buffer_views(const tessel::ir::Function& f, std::span<const tessel::interp::ArgValue> args,
                                     std::span<const tessel::interp::MemRegion> mem);

// Elements the comparison leaves out (results the contract leaves unspecified); may be empty.
using Skip = std::function<bool(size_t region, size_t index)>;

// Compares the GPU's bytes with the interpreter's for one writable region (float views within
// `t`, everything else exactly); returns a description of the mismatches ("" when they agree):
// the count and the first `max_listed` differing elements.
std::string compare(const std::vector<std::byte>& gpu, const std::vector<std::byte>& ref, const BufferView& v,
                    const Tolerance& t, const Skip& skip, size_t max_listed = 5);

// The region an address points into (one past the end counts), or -1.
int region_of(uint64_t addr, std::span<const tessel::interp::MemRegion> mem);
bool overlapping(std::span<const tessel::interp::MemRegion> mem);

// The bytes of every region, as they are now.
std::vector<std::vector<std::byte>> snapshot(std::span<const tessel::interp::MemRegion> mem);

// What the JIT compiles: a copy of `f` (parsed back from its printed text, so `f` is left as
// it is) after the generic passes.
std::shared_ptr<const tessel::ir::Function> as_jit_compiles(const tessel::ir::Function& f);

// One launch of a compiled kernel on the GPU over copies of `before`, with pointer arguments
// moved to the device copies of the regions they point into; returns the regions afterwards.
std::vector<std::vector<std::byte>> run_compiled(tessel::jit::Device& dev, tessel::jit::Executable& exe,
                                                 tessel::interp::Grid grid,
                                                 std::span<const tessel::interp::ArgValue> args,
                                                 std::span<const tessel::interp::MemRegion> mem,
                                                 const std::vector<std::vector<std::byte>>& before);

// dev.compile(fin, opts) (`fin` already through the passes), then run_compiled.
std::vector<std::vector<std::byte>> run_gpu(tessel::jit::Device& dev, const std::shared_ptr<const tessel::ir::Function>& fin,
                                            const tessel::jit::CompileOptions& opts, tessel::interp::Grid grid,
                                            std::span<const tessel::interp::ArgValue> args,
                                            std::span<const tessel::interp::MemRegion> mem,
                                            const std::vector<std::vector<std::byte>>& before);

}  // namespace tessel_test::gpu_compare
