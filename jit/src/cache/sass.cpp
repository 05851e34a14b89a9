// Cubin to SASS text with nvdisasm (else cuobjdump -sass), run without a shell under a time limit.
#include "tessel/jit/sass.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>

#include "cache_io.hpp"
#include "tessel/ir/error.hpp"
#include "tessel/runtime/ptxas.hpp"
#include "tool_process.hpp"

namespace tessel::jit {
namespace {
// Disassembling takes well under a second; a minute means the tool hangs.
constexpr int kDisasmTimeoutS = 60;
}  // namespace

std::string find_disassembler() {
  std::string tool = rt::find_cuda_tool("nvdisasm");
  return tool.empty() ? rt::find_cuda_tool("cuobjdump") : tool;
}

std::string require_disassembler() {
  std::string exe = find_disassembler();
  if (exe.empty())
    throw UserError(fmt::format("cannot disassemble to SASS: neither nvdisasm nor cuobjdump was found {}; install "
                                "the CUDA toolkit or put its bin directory on PATH",
                                rt::cuda_tool_search_text()));
  return exe;
}

std::string disassemble(const std::vector<char>& cubin) {
  const std::string exe = require_disassembler();
  detail::TempDir tmp("sass");
  const std::filesystem::path in = tmp.path / "kernel.cubin", log = tmp.path / "sass.txt";
  cache::io::write_new(in, std::string_view(cubin.data(), cubin.size()));
  const bool nvdisasm = std::filesystem::path(exe).filename() == "nvdisasm";
  // nvdisasm -c: code sections only (no ELF headers), the SASS a profiler's source view shows.
  std::vector<std::string> argv = nvdisasm ? std::vector<std::string>{exe, "-c", in.string()}
                                           : std::vector<std::string>{exe, "-sass", in.string()};
  const detail::RunResult run = detail::run_bounded(argv, log, kDisasmTimeoutS);
  std::string text = cache::io::read(log).value_or("");
  // The toolkit's tool misbehaving is the environment's problem (a UserError), not tessel's.
  if (run.timed_out) throw UserError(fmt::format("{} did not finish within {} s and was stopped", exe, kDisasmTimeoutS));
  if (run.exit_status != 0) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    throw UserError(fmt::format("{} failed ({}): {}", exe, detail::describe_failure(run), text));
  }
  return text;
}

}  // namespace tessel::jit
