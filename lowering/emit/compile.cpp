// compile(): tile IR -> LLVM IR -> PTX, timing each stage.
#include "tessel/lowering/compile.hpp"

#include <fmt/format.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <chrono>

#include "libdevice.hpp"
#include "lowerer.hpp"
#include "nvptx_codegen.hpp"
#include "plan/kernel_plan.hpp"

namespace tessel::lowering {
namespace {

std::string to_text(const llvm::Module& m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m.print(os, nullptr);
  return s;
}

void verify_module(const llvm::Module& m) {
  std::string err;
  llvm::raw_string_ostream os(err);
  if (llvm::verifyModule(m, &os)) internal_error(__FILE__, __LINE__, "lowering produced invalid LLVM IR: " + err);
}

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

std::string lower_to_llvm_ir(const ir::Function& f, const Options& o) {
  const KernelPlan plan = plan_kernel(f, o);
  llvm::LLVMContext ctx;
  Lowerer L(plan, ctx);
  auto m = L.run();
  verify_module(*m);
  return to_text(*m);
}

namespace {
// The entry's CTAs per cluster (.reqnctapercluster, which LLVM 19 cannot emit), written after
// its other performance directives: a plain cuLaunchKernel then runs clusters of `ctas`
// consecutive CTAs along x.
std::string with_cluster_directive(const std::string& ptx, const std::string& entry, int ctas) {
  const size_t at = ptx.find(".entry " + entry + "(");
  const size_t body = at == std::string::npos ? at : ptx.find("\n{", at);
  if (body == std::string::npos) internal_error(__FILE__, __LINE__, "no .entry body for the cluster directive");
  return ptx.substr(0, body) + fmt::format("\n.reqnctapercluster {}, 1, 1", ctas) + ptx.substr(body);
}
}  // namespace

std::string plan_text(const ir::Function& f, const Options& o) { return print_plan(plan_kernel(f, o)); }

Compiled compile(const ir::Function& f, const Options& o) {
  auto t0 = std::chrono::steady_clock::now();
  const KernelPlan plan = plan_kernel(f, o);
  Compiled c;
  c.plan = print_plan(plan);
  llvm::LLVMContext ctx;
  Lowerer L(plan, ctx);
  std::unique_ptr<llvm::Module> m = L.run();
  verify_module(*m);
  c.kernel_name = m->getName().str();  // the module is named for the kernel, the entry for the variant
  c.launch = plan.launch;
  c.ms_to_llvm = ms_since(t0);

  auto t1 = std::chrono::steady_clock::now();
  auto tm = make_target_machine(o);
  m->setDataLayout(tm->createDataLayout());
  m->setTargetTriple(tm->getTargetTriple().str());
  link_libdevice(*m);  // only when a precise math op calls it
  optimize(*m, *tm, o.opt_level);
  c.llvm_ir = to_text(*m);
  c.ptx = emit_ptx(*m, *tm);
  if (c.launch.cluster_ctas > 1) c.ptx = with_cluster_directive(c.ptx, c.launch.symbol, c.launch.cluster_ctas);
  c.ms_to_ptx = ms_since(t1);
  return c;
}

std::string llvm_version() { return LLVM_VERSION_STRING; }

}  // namespace tessel::lowering
