// Linking NVIDIA's libdevice for the precise math functions (lower_math.cpp).
#include "libdevice.hpp"

#include <fmt/format.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/MemoryBuffer.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "tessel/ir/error.hpp"

namespace tessel::lowering {
namespace {

constexpr const char* kRelative = "nvvm/libdevice/libdevice.10.bc";

bool calls_libdevice(const llvm::Module& m) {
  for (const llvm::Function& f : m)
    if (f.isDeclaration() && f.getName().starts_with("__nv_") && !f.use_empty()) return true;
  return false;
}

}  // namespace

llvm::Value* call_libdevice(llvm::Module& m, llvm::IRBuilder<>& b, const char* name, llvm::Value* x) {
  llvm::Type* t = x->getType();
  llvm::FunctionCallee fn = m.getOrInsertFunction(name, llvm::FunctionType::get(t, {t}, false));
  if (auto* f = llvm::dyn_cast<llvm::Function>(fn.getCallee())) {
    // Pure: calls on equal arguments may be merged or dropped before libdevice is linked.
    f->setDoesNotThrow();
    f->setDoesNotAccessMemory();
  }
  return b.CreateCall(fn, {x});
}

std::vector<std::string> libdevice_candidates() {
  // An explicit TESSEL_LIBDEVICE is the only place looked: a wrong one is an error, not a
  // silent fallback to another CUDA's libdevice.
  if (const char* env = std::getenv("TESSEL_LIBDEVICE"); env && *env) return {env};
  std::vector<std::string> out;
  if (const char* home = std::getenv("CUDA_HOME"); home && *home)
    out.push_back((std::filesystem::path(home) / kRelative).string());
  out.push_back(std::string("/usr/local/cuda/") + kRelative);
  return out;
}

std::string find_libdevice() {
  const std::vector<std::string> paths = libdevice_candidates();
  for (const std::string& p : paths) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(p, ec)) return p;
  }
  throw CompileError({}, fmt::format("precise math (Precision::ieee, precise_math) needs NVIDIA's libdevice, "
                                     "not found at {} (set TESSEL_LIBDEVICE to libdevice.10.bc, or CUDA_HOME)",
                                     fmt::join(paths, ", ")));
}

void link_libdevice(llvm::Module& m) {
  if (!calls_libdevice(m)) return;
  const std::string path = find_libdevice();
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf) throw CompileError({}, fmt::format("cannot read libdevice {}: {}", path, buf.getError().message()));
  auto lib = llvm::parseBitcodeFile((*buf)->getMemBufferRef(), m.getContext());
  if (!lib) {
    const std::string why = llvm::toString(lib.takeError());
    throw CompileError({}, fmt::format("libdevice {} is not LLVM bitcode this LLVM reads: {}", path, why));
  }
  (*lib)->setDataLayout(m.getDataLayout());  // libdevice's own triple is nvptx64-nvidia-gpulibs
  (*lib)->setTargetTriple(m.getTargetTriple());
  // What the module defines before linking stays as it is; everything linked in becomes internal.
  std::set<std::string> own;
  for (const llvm::GlobalValue& g : m.global_values())
    if (!g.isDeclaration()) own.insert(g.getName().str());
  if (llvm::Linker::linkModules(m, std::move(*lib), llvm::Linker::LinkOnlyNeeded))
    internal_error(__FILE__, __LINE__, "linking libdevice failed: " + path);
  for (llvm::GlobalValue& g : m.global_values())
    if (!g.isDeclaration() && !own.count(g.getName().str())) g.setLinkage(llvm::GlobalValue::InternalLinkage);
}

}  // namespace tessel::lowering
