// What the lowering refuses before planning (checks.hpp).
#include "plan/checks.hpp"

#include <fmt/format.h>

#include "tessel/ir/error.hpp"

namespace tessel::lowering {
namespace {

// Layouts need power-of-two tile dims; the DSL enforces it, but IR can come from anywhere.
void check_shapes(const ir::Function& f) {
  auto check = [&](const ir::Value* v, SrcLoc loc) {
    for (int64_t d : v->type.shape)
      if (d <= 0 || (d & (d - 1)) != 0)
        throw CompileError(loc, fmt::format("kernel '{}': tile dims must be powers of two, got {}", f.name,
                                            v->type.str()));
  };
  ir::walk(f.body, [&](const ir::Op& op) {
    for (const ir::Value* r : op.results) check(r, op.loc);
    for (const auto& region : op.regions)
      for (const ir::Value* a : region->args) check(a, op.loc);
  });
}

// A thread holds each tile it computes as an array of registers (DESIGN.md, "Registers"): at least
// numel / threads elements of every value, whatever the layout (a layout may replicate, never
// share). A thread has at most 255 registers; ptxas spills the rest to local memory, slowly, and
// past a few thousand live values takes minutes to hours to do so (a 2^20-element f32 tile on 4
// warps, 8192 registers per thread, ran ptxas past 300 s). 2048 32-bit registers (8 KiB) per
// thread for one value is 8 times the register file, a kernel that cannot run well however it is
// assembled. Nor could shared memory hold such a value instead of registers (a value staged there,
// e.g. by cp.async, is counted the same): it is over 2048 * 4 bytes * 32 threads = 256 KiB even
// for one warp, and an SM has at most 228 KiB. The samples' largest tuned value is a
// 128x256 f32 accumulator on 8 warps: 128 registers per thread.
constexpr int64_t kMaxRegistersPerValue = 2048;

// Rejects, before any IR is emitted, a kernel with a value whose per-thread share cannot fit.
void check_register_footprint(const ir::Function& f, const Options& o) {
  const int64_t threads = 32 * int64_t{o.num_warps};  // one program's threads (its tiles' owners)
  auto check = [&](const ir::Value* v, SrcLoc loc) {
    if (v->type.is_scalar()) return;
    const int64_t per_thread = (v->type.numel() + threads - 1) / threads;
    const int64_t registers = (per_thread * v->type.dtype.bytes() + 3) / 4;
    if (registers <= kMaxRegistersPerValue) return;
    throw ResourceLimitError(
        loc, fmt::format("kernel '{}': the tile {} on {} warp{} needs {} 32-bit registers per thread (a thread has "
                         "at most 255; tessel refuses more than {} for one tile): use more warps (num_warps up to "
                         "32) or smaller blocks",
                         f.name, v->type.str(), o.num_warps, o.num_warps == 1 ? "" : "s", registers,
                         kMaxRegistersPerValue));
  };
  ir::walk(f.body, [&](const ir::Op& op) {
    for (const ir::Value* r : op.results) check(r, op.loc);
    for (const auto& region : op.regions)
      for (const ir::Value* a : region->args) check(a, op.loc);
  });
}

}  // namespace

void check_kernel(const ir::Function& f, const Options& o) {
  const int w = o.num_warps;
  if (std::string why = option_problem(o); !why.empty())
    throw CompileError({}, fmt::format("kernel '{}': {}", f.name, why));
  if (o.warp_specialize) {
    const std::string why = !o.target.has_wgmma()           ? "a target with wgmma (sm_90a)"
                            : o.num_stages < 2              ? "num_stages >= 2"
                            : w != 4 && w != 8              ? "num_warps 4 or 8"
                            : w * o.programs_per_cta > 8    ? "num_warps * programs_per_cta <= 8"
                                                            : "";
    if (!why.empty())
      throw CompileError({}, fmt::format("kernel '{}': warp_specialize needs {} (got {}, num_warps {}, num_stages {}, "
                                         "programs_per_cta {})",
                                         f.name, why, o.target.arch(), w, o.num_stages, o.programs_per_cta));
  }
  if (o.opt_level < 0 || o.opt_level > 3)
    throw CompileError({}, fmt::format("kernel '{}': opt_level must be 0..3, got {}", f.name, o.opt_level));
  int ptx = o.target.resolved_ptx();
  if (ptx < 70 || ptx > max_ptx_version())
    throw CompileError({}, fmt::format("PTX ISA version {}.{} is not supported (7.0 .. {}.{})", ptx / 10, ptx % 10,
                                       max_ptx_version() / 10, max_ptx_version() % 10));
  if (ptx < o.target.min_ptx())
    throw CompileError({}, fmt::format("{} needs PTX ISA {}.{} or newer", o.target.arch(), o.target.min_ptx() / 10,
                                       o.target.min_ptx() % 10));
  check_shapes(f);
  check_register_footprint(f, o);
}

}  // namespace tessel::lowering
