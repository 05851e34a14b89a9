// Runs a test body in a child process, bounded, so a crash, a hang or an endless read in the code
// under test fails that child and the test reports it, instead of taking the test process down.
#pragma once
#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <functional>
#include <string>

namespace tessel_test {

// AddressSanitizer reserves terabytes of address space up front, so an address-space limit
// (RLIMIT_AS, ulimit -v) breaks a sanitized process: under ASan only the time limit applies.
// Test code itself is not instrumented in a -DTESSEL_SANITIZE build (cmake/sanitize.cmake), which
// says so by TESSEL_SANITIZE_ADDRESS.
#if defined(__SANITIZE_ADDRESS__) || defined(TESSEL_SANITIZE_ADDRESS)
inline constexpr bool kUnderAsan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kUnderAsan = true;
#else
inline constexpr bool kUnderAsan = false;
#endif
#else
inline constexpr bool kUnderAsan = false;
#endif

// How `body` ended in a child process: "exit 0" when it returned true, "exit 1" when it returned
// false or threw, "signal N" when it died (a destructor that throws terminates: SIGABRT, 6; the
// alarm: SIGALRM, 14). The child has `seconds` to finish and an address space of `memory_bytes`
// (none under ASan, see kUnderAsan).
inline std::string run_in_child(const std::function<bool()>& body, unsigned seconds = 60,
                                rlim_t memory_bytes = rlim_t{8} << 30) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL})
      std::signal(sig, SIG_DFL);  // the test framework's crash report belongs to the parent
    ::alarm(seconds);
    if (!kUnderAsan) {
      const rlimit mem{memory_bytes, memory_bytes};
      ::setrlimit(RLIMIT_AS, &mem);
    }
    bool ok = false;
    try {
      ok = body();
    } catch (...) {
    }
    std::fflush(nullptr);
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  return "signal " + std::to_string(WIFSIGNALED(status) ? WTERMSIG(status) : -1);
}

}  // namespace tessel_test
