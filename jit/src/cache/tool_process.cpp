// Child processes for NVIDIA's tools: no shell, a time limit, a private temporary directory.
#include "tool_process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <system_error>
#include <thread>

extern char** environ;

namespace tessel::jit::detail {

namespace fs = std::filesystem;

TempDir::TempDir(std::string_view tag) {
  std::string tmpl = (fs::temp_directory_path() / fmt::format("tessel-{}-XXXXXX", tag)).string();
  if (!::mkdtemp(tmpl.data())) throw std::system_error(errno, std::generic_category(), "mkdtemp");
  path = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path, ec);
}

RunResult run_bounded(const std::vector<std::string>& argv, const fs::path& log_path, int timeout_s) {
  // Everything the child needs is built before fork: between fork and exec it may call only
  // async-signal-safe functions (no allocation: another thread may hold malloc's lock).
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::system_error(errno, std::generic_category(), fmt::format("fork for {}", argv.empty() ? "" : argv[0]));
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

std::string describe_failure(const RunResult& r) {
  return r.signal ? fmt::format("killed by signal {}", r.signal)
         : r.exit_status < 0 ? std::string("could not be waited for")
                             : fmt::format("exit status {}", r.exit_status);
}

}  // namespace tessel::jit::detail
