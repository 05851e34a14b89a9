// PTX to cubin with NVIDIA's ptxas (run without a shell, under a time limit), or the driver when one is present.
#include "tessel/jit/cubin.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <regex>
#include <stdexcept>
#include <system_error>

#include "cache_io.hpp"
#include "tool_process.hpp"
#include "tessel/runtime/log.hpp"
#include "tessel/runtime/ptxas.hpp"

namespace tessel::jit {
namespace {

namespace fs = std::filesystem;
using detail::run_bounded;
using detail::RunResult;
using detail::TempDir;

void check_arch(std::string_view arch) {
  static const std::regex re("sm_[0-9]{2,3}a?");
  if (!std::regex_match(arch.begin(), arch.end(), re))
    throw std::invalid_argument(fmt::format("'{}' is not a GPU architecture (sm_80, sm_90a, ...)", arch));
}

// The .entry name in `ptx`, for messages ("" when there is none).
std::string entry_name(std::string_view ptx) {
  static const std::regex re(R"(\.entry\s+([A-Za-z_$][A-Za-z0-9_$]*))");
  std::match_results<std::string_view::const_iterator> m;
  return std::regex_search(ptx.begin(), ptx.end(), m, re) ? m[1].str() : std::string();
}

int match_int(const std::string& text, const char* pattern) {
  std::smatch m;
  if (std::regex_search(text, m, std::regex(pattern))) return std::stoi(m[1]);
  return -1;
}

}  // namespace

int ptxas_timeout_seconds() {
  const char* v = std::getenv("TESSEL_PTXAS_TIMEOUT");
  if (!v || !*v) return kDefaultPtxasTimeoutS;
  int s = -1;
  const char* end = v + std::strlen(v);
  auto [p, ec] = std::from_chars(v, end, s);
  if (ec != std::errc() || p != end || s < 0)
    throw PtxasTimeoutError(fmt::format(
        "TESSEL_PTXAS_TIMEOUT='{}' is not a whole number of seconds (0 for no limit; unset: {})", v,
        kDefaultPtxasTimeoutS));
  return s;
}

Cubin ptxas_cubin(std::string_view ptx, std::string_view arch) {
  check_arch(arch);
  std::string exe = rt::find_ptxas();
  if (exe.empty()) throw std::runtime_error(fmt::format("ptxas not found ({})", rt::ptxas_not_found_hint()));
  const int timeout_s = ptxas_timeout_seconds();
  TempDir tmp;  // removed on every way out below, a timeout and a throw included
  fs::path in = tmp.path / "kernel.ptx", out = tmp.path / "kernel.cubin", log = tmp.path / "ptxas.log";
  cache::io::write_new(in, ptx);
  const RunResult run = run_bounded({exe, "-arch=" + std::string(arch), "-v", in.string(), "-o", out.string()}, log,
                                    timeout_s);
  if (run.timed_out) {
    const std::string name = entry_name(ptx);
    throw PtxasTimeoutError(fmt::format(
        "ptxas did not finish within {} s compiling kernel {} for {} and was stopped; a kernel this slow to "
        "assemble usually holds tiles too large for its threads' registers (use more warps or smaller blocks), "
        "or set TESSEL_PTXAS_TIMEOUT to more seconds (0: no limit)",
        timeout_s, name.empty() ? "(unnamed)" : "'" + name + "'", arch));
  }
  Cubin c;
  c.arch = arch;
  c.tool = "ptxas";
  c.log = cache::io::read(log).value_or("");
  if (run.exit_status != 0) {
    throw std::runtime_error(fmt::format("ptxas -arch={} failed ({}):\n{}", arch, detail::describe_failure(run), c.log));
  }
  std::optional<std::string> bytes = cache::io::read(out);
  if (!bytes || bytes->empty()) throw std::runtime_error("ptxas wrote no cubin");
  c.image.assign(bytes->begin(), bytes->end());
  c.registers = match_int(c.log, R"(Used (\d+) registers)");
  c.stack_bytes = match_int(c.log, R"((\d+) bytes stack frame)");
  c.spill_bytes = match_int(c.log, R"((\d+) bytes spill stores)");
  const std::string kernel = entry_name(ptx);
  const std::string named = kernel.empty() ? "(unnamed)" : "'" + kernel + "'";
  for (const std::string& a : ptxas_advisories(c.log))
    rt::log_once(rt::LogLevel::Warn, "ptxas advisory " + kernel + " " + std::string(arch) + " " + a,
                 fmt::format("ptxas, kernel {} for {}: {}", named, arch, a));
  return c;
}

std::vector<std::string> ptxas_advisories(std::string_view log) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < log.size()) {
    size_t end = log.find('\n', at);
    if (end == std::string_view::npos) end = log.size();
    std::string_view line = log.substr(at, end - at);
    at = end + 1;
    if (line.find("Potential Performance Loss") == std::string_view::npos) continue;
    size_t from = line.find("(C");
    if (from == std::string_view::npos) from = line.find("Potential Performance Loss");
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    out.emplace_back(line.substr(from));
  }
  return out;
}

CubinTool jit_cubin_tool() {
  const char* v = std::getenv("TESSEL_CUBIN_TOOL");
  std::string_view s = v ? v : "";
  if (s == "ptxas") return CubinTool::Ptxas;
  if (s == "driver") return CubinTool::Driver;
  if (!s.empty())
    throw std::invalid_argument(
        fmt::format("TESSEL_CUBIN_TOOL='{}' is not a cubin tool (ptxas, driver; unset: ptxas when found)", s));
  return rt::find_ptxas().empty() ? CubinTool::Driver : CubinTool::Ptxas;
}

bool cubin_tool_forced() {
  const char* v = std::getenv("TESSEL_CUBIN_TOOL");
  return v && *v;
}

Cubin make_cubin(std::string_view ptx, std::string_view arch) {
  check_arch(arch);
  if (std::optional<Cubin> c = driver_cubin(ptx, arch)) return std::move(*c);
  if (!rt::find_ptxas().empty()) return ptxas_cubin(ptx, arch);
  throw std::runtime_error(fmt::format("cannot make a cubin for {}: no CUDA driver with such a GPU and no ptxas ({})",
                                       arch, rt::ptxas_not_found_hint()));
}

}  // namespace tessel::jit
