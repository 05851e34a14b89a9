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

#include <cstdint>
#include <mutex>
#include <string_view>
#include <vector>

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

// ptxas (CUDA 13.0's, and the 580 driver's PTX JIT; seen on an H100) mistranslates some 16-bit
// integer instructions, which hold their values in 32-bit registers: the sign extension of a
// neg.s16 or abs.s16 result of -32768 is lost (a later cvt.s32.s16 gives +32768 where i16
// arithmetic wraps to -32768), and `min.s16 m, 0, x` / `max.s16` compared with 0 by setp
// gives the inverted answer. The same instructions on 32-bit values, narrowed after, come out
// right, so each such line of LLVM's PTX is rewritten as that (LLVM emits neg.s16 for every
// i16 `0 - x`). And abs.s32 of INT_MIN (which stays INT_MIN) followed by rem.s32 gives the
// remainder of +2^31 (41 for -41 by 57), so abs.s32 becomes a compare, a negation and a select.
// Found by tests/fuzz; tests/interp/fuzz_found_test.cpp checks them on the GPU.
std::string widen_16bit_ops(const std::string& ptx) {
  struct Rule {
    std::string_view op;  // "neg.s16 "
    bool binary, is_signed;
  };
  static constexpr Rule kRules[] = {{"neg.s16", false, true},  {"abs.s16", false, true}, {"min.s16", true, true},
                                    {"max.s16", true, true},   {"min.u16", true, false}, {"max.u16", true, false}};
  auto trim = [](std::string_view v) {
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
    return std::string(v);
  };
  // A 16-bit operand into a 32-bit register: cvt from a register, mov of an immediate.
  auto widen = [](const std::string& reg, const std::string& x, bool is_signed) {
    if (!x.empty() && x[0] == '%') return fmt::format("cvt.{}32.{}16 {}, {}; ", is_signed ? 's' : 'u', is_signed ? 's' : 'u', reg, x);
    const long long v = std::stoll(x, nullptr, 0);
    return fmt::format("mov.b32 {}, {}; ", reg, is_signed ? static_cast<long long>(static_cast<int16_t>(v))
                                                         : static_cast<long long>(static_cast<uint16_t>(v)));
  };
  std::string out;
  out.reserve(ptx.size());
  size_t pos = 0;
  while (pos < ptx.size()) {
    size_t end = ptx.find('\n', pos);
    if (end == std::string::npos) end = ptx.size();
    const std::string_view line(ptx.data() + pos, end - pos);
    std::string_view rest = line;
    while (!rest.empty() && (rest.front() == '\t' || rest.front() == ' ')) rest.remove_prefix(1);
    const Rule* rule = nullptr;
    for (const Rule& r : kRules)
      if (rest.starts_with(r.op) && rest.size() > r.op.size() && (rest[r.op.size()] == ' ' || rest[r.op.size()] == '\t'))
        rule = &r;
    const size_t semi = rest.find(';');
    if (rest.starts_with("abs.s32") && rest.size() > 7 && (rest[7] == ' ' || rest[7] == '\t') &&
        semi != std::string_view::npos && rest.find(',') < semi) {
      const std::string d = trim(rest.substr(7, rest.find(',') - 7)), a = trim(rest.substr(rest.find(',') + 1, semi - rest.find(',') - 1));
      out += fmt::format("\t{{ .reg .b32 %tessel_n; .reg .pred %tessel_p; setp.lt.s32 %tessel_p, {1}, 0; neg.s32 %tessel_n, {1}; "
                         "selp.b32 {0}, %tessel_n, {1}, %tessel_p; }}",
                         d, a);
    } else if (rule && semi != std::string_view::npos) {
      std::vector<std::string> args;  // d, a[, b]
      std::string_view list = rest.substr(rule->op.size(), semi - rule->op.size());
      for (size_t comma; (comma = list.find(',')) != std::string_view::npos; list.remove_prefix(comma + 1))
        args.push_back(trim(list.substr(0, comma)));
      args.push_back(trim(list));
      const std::string_view name = rule->op.substr(0, 3);
      const char sign = rule->is_signed ? 's' : 'u';
      if (args.size() == (rule->binary ? 3u : 2u)) {
        out += "\t{ .reg .b32 %tessel_a, %tessel_b; " + widen("%tessel_a", args[1], rule->is_signed);
        if (rule->binary) out += widen("%tessel_b", args[2], rule->is_signed);
        out += fmt::format("{}.{}32 %tessel_a, %tessel_a{}; cvt.u16.u32 {}, %tessel_a; }}", name, sign,
                           rule->binary ? ", %tessel_b" : "", args[0]);
      } else {
        out += line;
      }
    } else {
      out += line;
    }
    if (end < ptx.size()) out += '\n';
    pos = end + 1;
  }
  return out;
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
  return widen_16bit_ops(std::string(buf.str()));
}

}  // namespace tessel::lowering
