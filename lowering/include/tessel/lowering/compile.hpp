// The lowering's entry point: a verified tile-IR kernel to LLVM IR and PTX.
#pragma once
#include <string>
#include <vector>

#include "tessel/ir/ir.hpp"
#include "tessel/lowering/target.hpp"
#include "tessel/options/compile_options.hpp"
#include "tessel/options/launch_spec.hpp"

namespace tessel::lowering {

// The compile options (tessel/options/compile_options.def) plus what only the lowering takes.
// What each option does here:
// - num_warps: a power of two, 1..32; the CTA has 32 * num_warps threads (x only).
// - programs_per_cta (1 or 2; programs_per_cta * num_warps <= 32). With 2, a CTA runs two
//   consecutive programs side by side, each on its own num_warps warps, shared memory and
//   barriers: program_id(0) = 2 * ctaid.x + (which half), num_programs(0) = 2 * nctaid.x, and
//   the launch has 32 * num_warps * 2 threads and half as many CTAs along x (the program count
//   along x must be even). On sm_90a the two programs' wgmma K loops take turns (one runs while
//   the other is in its epilogue: "ping-pong"), see program_groups.cpp.
// - warp_specialize (sm_90a): the CTA gets one more warpgroup, the producers (4 warps,
//   4 / programs_per_cta per program), which issue the copies of the programs' pipelined wgmma
//   K loops into a ring of num_stages buffers per program and signal each stage on an
//   mbarrier; the programs' own warps only wait for stages, issue wgmma and release stages.
//   The launch then has 32 * (num_warps * programs_per_cta + 4) threads (producers last).
//   Needs num_stages >= 2, num_warps 4 or 8, num_warps * programs_per_cta <= 8, and a kernel
//   with a K loop that pipelines onto wgmma; anything else is a CompileError. warp_roles.cpp.
// - tma, with warp_specialize on sm_90a: the producers fill a ring by TMA (one elected lane per
//   producer warp; a tensor map per operand, built at launch from the kernel's arguments:
//   Compiled::launch.tensor_maps, passed after them) where the loads allow it (tma_plan.hpp), else by
//   cp.async. Needs warp_specialize (else a CompileError). Off by default: on the H200 it was
//   not faster than the cp.async producers (bench/RESULTS.md, run 23).
// - num_stages: software pipelining depth of K loops (1..8): with S >= 2 the operand copies of
//   a loop's dot run S - 1 trips ahead through S shared-memory buffers (cp.async); 1 is
//   single-stage. Loops that do not match the pattern (lower_control.cpp) stay single-stage.
// - precise_math: every transcendental op (sin, cos, tan, exp, exp2, log, log2, sqrt, rsqrt,
//   tanh) of f32 calls libdevice's IEEE-accurate version instead of the approximate PTX
//   instruction, as an op's own `precise` attribute does (lower_math.cpp, libdevice.cpp).
struct Options : CompileOptions {
  Target target;
  int opt_level = 3;   // 0..3: LLVM's O-level for both the IR pipeline and code generation
  // Let LLVM contract a*b+c into fma. Off by default so results match the interpreter
  // bit for bit on plain arithmetic (Triton turns it on).
  bool fp_fusion = false;
};

struct Compiled {
  std::string kernel_name;  // the kernel's name (the IR function's, as an identifier)
  std::string plan;         // the kernel plan, printed (plan_text)
  std::string llvm_ir;      // the optimised module, textual
  std::string ptx;
  // How to launch it (options/launch_spec.hpp), from the plan: the PTX .entry name
  // (entry_symbol), threads per CTA (the one formula, options/launch.hpp; the producer
  // warpgroup included), programs per CTA (grid.x counts programs), CTAs per cluster (1, or 2
  // when a ring loop multicasts an operand, lang::multicast: the grid's x extent in CTAs must be
  // a multiple of it), the dynamic shared memory the emitter laid out (reductions, layout
  // conversions, stages), and the tensor maps the kernel takes after its own parameters
  // (Options::tma: the launch builds each from the arguments, cuTensorMapEncodeTiled, and
  // passes its 128 bytes).
  LaunchSpec launch;
  double ms_to_llvm = 0;    // tile IR -> LLVM IR
  double ms_to_ptx = 0;     // LLVM optimisation + NVPTX code generation
};

// `f` must have been through the IR passes and verified. Throws CompileError for kernels
// the lowering cannot handle (unsupported options, shared memory over the limit; a tile whose
// share per thread is far past a thread's registers for num_warps: a ResourceLimitError at the
// tile's line, before any code is generated) and InternalError for broken invariants.
//
// The PTX kernel takes one parameter per IR parameter, in order: pointers as .u64 global
// addresses, integers and floats by value (i1 as one byte). Parameters specialised equal1
// stay in the signature but the kernel uses the constant 1 instead. Launch it with
// launch.threads threads along x, launch.shared_bytes of dynamic shared memory
// (above 48 KiB the function must opt in), and a grid of program ids along x, y, z (along x
// divided by launch.programs_per_cta).
Compiled compile(const ir::Function& f, const Options& o);

// The PTX .entry name of `f` compiled with `o`: the kernel's name, then each meta-parameter it
// was traced with as NAMEvalue (sorted by name; a negative value as NAMEm5), then _w<num_warps>
// _s<num_stages> and, when not 1, _p<programs_per_cta> (not warp_specialize or tma: a bundle's
// images of one variant, with and without producers, share one entry name):
// "matmul_BLOCK_K64_BLOCK_M128_BLOCK_N256_GROUP_M8_w8_s4". Only [A-Za-z0-9_]; over
// kMaxEntrySymbol characters, the first ones and _h<16 hex digits> hashing the whole.
inline constexpr size_t kMaxEntrySymbol = 120;
std::string entry_symbol(const ir::Function& f, const Options& o);

// The kernel plan (layouts, tensor-core plans, each loop's schedule and why a loop with a dot is
// not pipelined, rings, tensor maps, producer warps, the launch record) as text; the same checks
// and errors as compile(). `tessel compile K --emit plan`.
std::string plan_text(const ir::Function& f, const Options& o);

// The LLVM IR before optimisation (for tests and dumps); no PTX generation.
std::string lower_to_llvm_ir(const ir::Function& f, const Options& o);

// The version of the LLVM this lowering was built with ("19.1.7"): part of the disk cache key,
// since a different LLVM may emit different PTX for the same IR.
std::string llvm_version();

}  // namespace tessel::lowering
