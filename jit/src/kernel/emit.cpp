// Stage text for the CLI: tile IR here, LLVM IR and PTX through the lowering when built.
#include "tessel/jit/emit.hpp"

#include <stdexcept>
#include <string>

#include "tessel/ir/printer.hpp"
#ifdef TESSEL_HAS_LOWERING
#include "tessel/lowering/compile.hpp"
#endif

namespace tessel::jit {

Stage parse_stage(std::string_view s) {
  if (s == "tir") return Stage::TileIR;
  if (s == "plan") return Stage::Plan;
  if (s == "llir") return Stage::LlvmIR;
  if (s == "ptx") return Stage::Ptx;
  throw std::invalid_argument("unknown stage '" + std::string(s) + "' (tir, plan, llir, ptx)");
}

bool has_lowering() {
#ifdef TESSEL_HAS_LOWERING
  return true;
#else
  return false;
#endif
}

std::string emit(const ir::Function& f, Stage stage, std::string_view arch, const CompileOptions& opts) {
  if (stage == Stage::TileIR) return ir::print(f);
#ifdef TESSEL_HAS_LOWERING
  lowering::Options lo;
  static_cast<CompileOptions&>(lo) = opts;
  lo.target = lowering::Target::parse(arch);
  if (stage == Stage::Plan) return lowering::plan_text(f, lo);
  if (stage == Stage::LlvmIR) return lowering::compile(f, lo).llvm_ir;
  return lowering::compile(f, lo).ptx;
#else
  throw std::runtime_error("this build of tessel has no LLVM lowering (configured with TESSEL_WITH_LLVM=OFF)");
#endif
}

}  // namespace tessel::jit
