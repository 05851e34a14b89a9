// PTX to cubin with NVIDIA's ptxas (run without a shell, under a time limit), or the driver when one is present.
#include "tessel/jit/cubin.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
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
#include <thread>

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
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

// How a ptxas run ended.
struct RunResult {
  bool timed_out = false;
  int exit_status = -1;  // when it exited
  int signal = 0;        // when a signal ended it
};

// Runs argv with stdout and stderr into `log_path`, killed after `timeout_s` seconds (0: never).
// The child leads a process group of its own, so a timeout kills whatever it started too, and
// dies with this process (PR_SET_PDEATHSIG), so an interrupted tessel leaves no ptxas running.
RunResult run_bounded(const std::vector<std::string>& argv, const fs::path& log_path, int timeout_s) {
  // Everything the child needs is built before fork: between fork and exec it may call only
  // async-signal-safe functions (no allocation: another thread may hold malloc's lock).
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::system_error(errno, std::generic_category(), "fork for ptxas");
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl took effect
    const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || ::dup2(fd, 1) < 0 || ::dup2(fd, 2) < 0) ::_exit(127);
    ::execve(args[0], args.data(), environ);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here, so a kill below never precedes the child's own setpgid
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::seconds(timeout_s);
  auto nap = std::chrono::milliseconds(1);
  RunResult r;
  int status = 0;
  while (true) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) return r;
    if (timeout_s > 0 && Clock::now() >= deadline) {
      ::kill(-pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      r.timed_out = true;
      return r;
    }
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::milliseconds(50));  // quick for small kernels, cheap for long ones
  }
  if (WIFEXITED(status)) r.exit_status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
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
    const std::string how = run.signal ? fmt::format("killed by signal {}", run.signal)
                            : run.exit_status < 0 ? std::string("could not be waited for")
                                                  : fmt::format("exit status {}", run.exit_status);
    throw std::runtime_error(fmt::format("ptxas -arch={} failed ({}):\n{}", arch, how, c.log));
  }
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
