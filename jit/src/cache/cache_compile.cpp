// Kernels into cache entries: the lowering's outputs plus metadata, and offline warming with ptxas.
#include "cache_compile.hpp"

#include <stdexcept>

#include "tessel/jit/cache.hpp"
#include "tessel/jit/cubin.hpp"
#include "tessel/runtime/ptxas.hpp"

namespace tessel::jit::cache {

#ifdef TESSEL_HAS_LOWERING

KeyInputs gpu_key_inputs(const ir::Function& f, const CompileOptions& opts, const lowering::Target& target) {
  return key_inputs(f, opts, target.arch(), target.resolved_ptx(), lowering::llvm_version());
}

Entry lower_to_entry(const ir::Function& f, const CompileOptions& opts, const lowering::Target& target) {
  KeyInputs in = gpu_key_inputs(f, opts, target);
  lowering::Options lo;
  static_cast<CompileOptions&>(lo) = opts;
  lo.target = target;
  lowering::Compiled c = lowering::compile(f, lo);
  Entry e;
  e.meta = describe(f, in, make_key(in));
  e.meta.kernel = c.kernel_name;
  e.meta.launch = std::move(c.launch);
  e.tir = std::move(in.ir_text);
  e.plan = std::move(c.plan);
  e.llvm_ir = std::move(c.llvm_ir);
  e.ptx = std::move(c.ptx);
  return e;
}

Entry compile_entry(const ir::Function& f, const CompileOptions& opts, std::string_view arch, bool with_cubin) {
  lowering::Target target = lowering::Target::parse(arch);
  Entry e = lower_to_entry(f, opts, target);
  if (with_cubin) {
    std::optional<Cubin> c = driver_cubin(e.ptx, target.arch());
    if (!c && !rt::find_ptxas().empty()) c = ptxas_cubin(e.ptx, target.arch());
    if (c) {
      e.cubin = std::move(c->image);
      e.meta.cubin_arch = c->arch;
      e.meta.cubin_tool = c->tool;
      e.meta.registers = c->registers;
      e.meta.spill_bytes = c->spill_bytes;
      e.meta.local_bytes = c->stack_bytes;  // the stack frame holds the spills
    }
  }
  return e;
}

#else

Entry compile_entry(const ir::Function&, const CompileOptions&, std::string_view, bool) {
  throw std::runtime_error("this build of tessel has no LLVM lowering (configured with TESSEL_WITH_LLVM=OFF)");
}

#endif

}  // namespace tessel::jit::cache
