// NVPTX code generation: target machine setup, optimisation pipeline, PTX text.
#include "nvptx_codegen.hpp"

#include <fmt/format.h>
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/PassManager.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/CodeGen.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetOptions.h>

#include <mutex>

#include "demand_order.hpp"
#include "tessel/ir/error.hpp"

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

namespace tessel::lowering {

namespace {
constexpr const char* kTriple = "nvptx64-nvidia-cuda";

llvm::CodeGenOptLevel cg_level(int o) {
  switch (o) {
    case 0: return llvm::CodeGenOptLevel::None;
    case 1: return llvm::CodeGenOptLevel::Less;
    case 2: return llvm::CodeGenOptLevel::Default;
    default: return llvm::CodeGenOptLevel::Aggressive;
  }
}

llvm::OptimizationLevel ir_level(int o) {
  switch (o) {
    case 0: return llvm::OptimizationLevel::O0;
    case 1: return llvm::OptimizationLevel::O1;
    case 2: return llvm::OptimizationLevel::O2;
    default: return llvm::OptimizationLevel::O3;
  }
}
}  // namespace

void init_nvptx() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    // Shared-memory pointers in 32 bits (the state space is 228 KiB): every address the
    // lowering keeps for its stagings, rings and conversion buffers takes one register
    // instead of two, and their arithmetic no carry chains. NVPTX reads this only as a
    // command-line option; it is process-wide, set once here before any target machine.
    const char* argv[] = {"tessel", "--nvptx-short-ptr"};
    llvm::cl::ParseCommandLineOptions(2, argv);
  });
}

std::unique_ptr<llvm::TargetMachine> make_target_machine(const Options& o) {
  init_nvptx();
  std::string err;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(kTriple, err);
  TESSEL_ASSERT(t != nullptr, "NVPTX target not registered: " + err);
  llvm::TargetOptions to;
  to.AllowFPOpFusion = o.fp_fusion ? llvm::FPOpFusion::Fast : llvm::FPOpFusion::Strict;
  std::unique_ptr<llvm::TargetMachine> tm(t->createTargetMachine(
      kTriple, o.target.arch(), o.target.ptx_feature(), to, std::nullopt, std::nullopt, cg_level(o.opt_level)));
  TESSEL_ASSERT(tm != nullptr, "could not create the NVPTX target machine for " + o.target.arch());
  return tm;
}

void optimize(llvm::Module& m, llvm::TargetMachine& tm, int opt_level) {
  m.setDataLayout(tm.createDataLayout());
  m.setTargetTriple(kTriple);
  if (opt_level <= 0) return;
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(ir_level(opt_level));
  mpm.run(m, mam);
  for (llvm::Function& f : m)
    if (!f.isDeclaration()) order_by_demand(f);
}

std::string emit_ptx(llvm::Module& m, llvm::TargetMachine& tm) {
  llvm::SmallString<16384> buf;
  llvm::raw_svector_ostream os(buf);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile))
    internal_error(__FILE__, __LINE__, "NVPTX cannot emit assembly");
  pm.run(m);
  return std::string(buf.str());
}

}  // namespace tessel::lowering
