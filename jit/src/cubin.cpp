// PTX to cubin with NVIDIA's ptxas (spawned without a shell), or the driver when one is present.
#include "tessel/jit/cubin.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <stdexcept>

#include "cache_io.hpp"
#include "tessel/runtime/ptxas.hpp"

extern char** environ;

namespace tessel::jit {
namespace {

namespace fs = std::filesystem;

void check_arch(std::string_view arch) {
  static const std::regex re("sm_[0-9]{2,3}a?");
  if (!std::regex_match(arch.begin(), arch.end(), re))
    throw std::invalid_argument(fmt::format("'{}' is not a GPU architecture (sm_80, sm_90a, ...)", arch));
}

// A private temporary directory, removed with everything in it.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "tessel-ptxas-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::system_error(errno, std::generic_category(), "mkdtemp");
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// Runs argv with stdout and stderr into `log_path`; the exit status (-1 when it did not run).
int spawn(const std::vector<std::string>& argv, const fs::path& log_path) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int match_int(const std::string& text, const char* pattern) {
  std::smatch m;
  if (std::regex_search(text, m, std::regex(pattern))) return std::stoi(m[1]);
  return -1;
}

}  // namespace

Cubin ptxas_cubin(std::string_view ptx, std::string_view arch) {
  check_arch(arch);
  std::string exe = rt::find_ptxas();
  if (exe.empty()) throw std::runtime_error(fmt::format("ptxas not found ({})", rt::ptxas_not_found_hint()));
  TempDir tmp;
  fs::path in = tmp.path / "kernel.ptx", out = tmp.path / "kernel.cubin", log = tmp.path / "ptxas.log";
  cache::io::write_new(in, ptx);
  int status = spawn({exe, "-arch=" + std::string(arch), "-v", in.string(), "-o", out.string()}, log);
  Cubin c;
  c.arch = arch;
  c.tool = "ptxas";
  c.log = cache::io::read(log).value_or("");
  if (status != 0)
    throw std::runtime_error(fmt::format("ptxas -arch={} failed (exit status {}):\n{}", arch, status, c.log));
  std::optional<std::string> bytes = cache::io::read(out);
  if (!bytes || bytes->empty()) throw std::runtime_error("ptxas wrote no cubin");
  c.image.assign(bytes->begin(), bytes->end());
  c.registers = match_int(c.log, R"(Used (\d+) registers)");
  c.stack_bytes = match_int(c.log, R"((\d+) bytes stack frame)");
  c.spill_bytes = match_int(c.log, R"((\d+) bytes spill stores)");
  return c;
}

Cubin make_cubin(std::string_view ptx, std::string_view arch) {
  check_arch(arch);
  if (std::optional<Cubin> c = driver_cubin(ptx, arch)) return std::move(*c);
  if (!rt::find_ptxas().empty()) return ptxas_cubin(ptx, arch);
  throw std::runtime_error(fmt::format("cannot make a cubin for {}: no CUDA driver with such a GPU and no ptxas ({})",
                                       arch, rt::ptxas_not_found_hint()));
}

}  // namespace tessel::jit
