// find_ptxas, find_cuda_tool: one documented search order for NVIDIA's PTX assembler and tools (see ptxas.hpp).
#include "tessel/runtime/ptxas.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace tessel::rt {
namespace {

namespace fs = std::filesystem;

bool executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

}  // namespace

std::string find_cuda_tool(std::string_view tool) {
  const std::string name(tool);
  if (const char* path = env("PATH")) {
    std::string_view rest(path);
    while (true) {
      const size_t colon = rest.find(':');
      const std::string_view dir = rest.substr(0, colon);
      // An empty PATH entry means the working directory; a compiler tool is never taken from there.
      if (!dir.empty() && executable(fs::path(dir) / name)) return (fs::path(dir) / name).string();
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  for (const char* var : {"CUDA_PATH", "CUDA_HOME"})
    if (const char* root = env(var); root && executable(fs::path(root) / "bin" / name))
      return (fs::path(root) / "bin" / name).string();
  const fs::path fallback = fs::path("/usr/local/cuda/bin") / name;
  return executable(fallback) ? fallback.string() : std::string();
}

std::string cuda_tool_search_text() {
  auto root = [](const char* var) {
    const char* v = env(var);
    return v ? fmt::format("${}/bin ({}/bin)", var, v) : fmt::format("${}/bin (unset)", var);
  };
  return fmt::format("on PATH, in {}, {} or /usr/local/cuda/bin", root("CUDA_PATH"), root("CUDA_HOME"));
}

std::string find_ptxas() {
  if (const char* e = env("TESSEL_PTXAS")) return executable(e) ? std::string(e) : std::string();
  return find_cuda_tool("ptxas");
}

std::string_view ptxas_not_found_hint() {
  return "set TESSEL_PTXAS to its path, put it on PATH, or set CUDA_PATH to the CUDA toolkit";
}

}  // namespace tessel::rt
