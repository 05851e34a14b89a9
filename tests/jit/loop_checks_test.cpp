// A loop step <= 0 fails the GPU launch with an error naming the kernel and the loop's file:line (not a hang); pipelined copies stop where the loop does. Each run is a child process (tests/gpu_child): a failed device-side check leaves the CUDA context unusable.
#include <doctest/doctest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "../common/gpu_gate.hpp"
#include "tessel/jit/device.hpp"
#include "tessel/jit/emit.hpp"
#include "tessel/tessel.hpp"
#include "tessel/runtime/error.hpp"
#include "../../jit/src/device/device_checks.hpp"  // private to the jit: its host-side half is tested here

extern char** environ;

#ifndef TESSEL_LOOP_CHECKS_CHILD
#error "TESSEL_LOOP_CHECKS_CHILD (the child executable's path) is set by tests/CMakeLists.txt"
#endif

namespace {

struct ChildRun {
  bool timed_out = false;
  int exit_code = -1;  // -1: killed by a signal
  std::string output;  // stdout and stderr together
};

// Runs the child with `args`, the environment with `env` ("NAME=VALUE") overriding, and kills it
// after `timeout_s`: a hang (the old GPU loop with step 0 never ended) is a failure, not a stuck test.
// The child executable: built next to this test (a build tree moved elsewhere still finds it),
// else where CMake put it.
std::string child_path() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path compiled = TESSEL_LOOP_CHECKS_CHILD;
  if (!ec && std::filesystem::exists(self.parent_path() / compiled.filename(), ec))
    return (self.parent_path() / compiled.filename()).string();
  return compiled.string();
}

ChildRun run_child(const std::vector<std::string>& args, const std::vector<std::string>& env, int timeout_s) {
  // Everything the child needs is built before fork: between fork and exec only async-signal-safe calls.
  std::vector<std::string> argv_s{child_path()};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_s(env);
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    bool overridden = false;
    for (const std::string& o : env) overridden = overridden || kv.compare(0, o.find('=') + 1, o, 0, o.find('=') + 1) == 0;
    if (!overridden) env_s.push_back(kv);
  }
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);

  ChildRun r;
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    ::close(fds[0]);
    ::close(fds[1]);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    r.output.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  return r;
}

bool has(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

int count_of(const std::string& hay, const std::string& needle) {
  int n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

// The line the child printed as its range() call's ("range line: N"), or -1.
int range_line(const std::string& out) {
  const size_t p = out.find("range line: ");
  return p == std::string::npos ? -1 : std::atoi(out.c_str() + p + 12);
}

const std::vector<std::string> kInterpreter{"TESSEL_INTERPRET=1", "TESSEL_REQUIRE_GPU=0"};
const std::vector<std::string> kGpu{"TESSEL_INTERPRET=0", "TESSEL_REQUIRE_GPU=1"};
constexpr int kTimeout = 180;

bool gpu_or_skip() {
  if (tessel::jit::Device::current().kind() == tessel::jit::BackendKind::Cuda) return true;
  tessel_test::skip_gpu_case("no GPU in use (" + tessel::jit::Device::current().describe() + "): loop checks on the GPU");
  return false;
}

}  // namespace

TEST_CASE("loop checks child on the interpreter: step <= 0 raises, a positive step and the near-INT32_MAX K loop match") {
  for (const char* step : {"0", "-3"}) {
    CAPTURE(step);
    ChildRun r = run_child({"step", step}, kInterpreter, kTimeout);
    INFO("child output:\n" << r.output);
    CHECK_FALSE(r.timed_out);
    CHECK(r.exit_code == 3);
    CHECK(has(r.output, std::string("loop step is ") + step + " (from 0 to 1000); it must be positive"));
    CHECK(has(r.output, "device: CPU interpreter"));
  }
  {
    ChildRun r = run_child({"step", "7"}, kInterpreter, kTimeout);
    INFO("child output:\n" << r.output);
    CHECK(r.exit_code == 0);
    CHECK(has(r.output, "ok: 3 programs summed 71071"));  // 0 + 7 + ... + 994
  }
  ChildRun r = run_child({"pipeline", "3"}, kInterpreter, kTimeout);
  INFO("child output:\n" << r.output);
  CHECK(r.exit_code == 0);
  CHECK(has(r.output, "ok: 64x64 result"));
}

TEST_CASE("loop checks child: its K loop is pipelined on the GPU (so the GPU case tests the copies ahead)") {
  if (!tessel::jit::has_lowering()) {
    MESSAGE("SKIPPED: built without the lowering");
    return;
  }
  for (const char* stages : {"2", "3", "4"}) {
    CAPTURE(stages);
    ChildRun r = run_child({"ptx", stages}, kInterpreter, kTimeout);
    CHECK(r.exit_code == 0);
    INFO("PTX:\n" << r.output);
    // S - 2 groups pending at each trip's wait, the copies by cp.async, on wgmma.
    CHECK(has(r.output, "cp.async.wait_group " + std::to_string(std::atoi(stages) - 2) + ";"));
    CHECK(has(r.output, "cp.async.cg.shared.global"));
    CHECK(has(r.output, "wgmma.mma_async"));
  }
}

namespace {
int g_step_line = 0;
void runtime_step_kernel(tessel::lang::Ptr<tessel::lang::i32> out, tessel::lang::Int n, tessel::lang::Int step,
                         const tessel::lang::Meta&) {
  using namespace tessel::lang;
  Var acc(0);
  g_step_line = __LINE__; for (auto i : range(0, n, step)) acc += i;
  store(out, acc);
}
void constant_step_kernel(tessel::lang::Ptr<tessel::lang::i32> out, tessel::lang::Int n, tessel::lang::Int step,
                          const tessel::lang::Meta&) {
  using namespace tessel::lang;
  Var acc(0);
  for (auto i : range(0, n, 4)) acc += i;
  store(out, acc);
}

std::string rethrown_text(const tessel::jit::detail::LaunchLog& log, CUresult code) {
  try {
    log.rethrow(tessel::rt::CudaError(code, "cuCtxSynchronize"));
  } catch (const tessel::rt::CudaError& e) {
    CHECK(e.code() == code);
    CHECK(e.call() == "cuCtxSynchronize");
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("the host names the kernels with device-side checks, and their lines, when the driver reports one failed") {
  using tessel::jit::detail::device_checks_of;
  tessel::jit::Kernel k_runtime{"runtime_step", &runtime_step_kernel, {"out", "n", "step"}};
  tessel::jit::Kernel k_constant{"constant_step", &constant_step_kernel, {"out", "n", "step"}};
  auto checks = device_checks_of(*k_runtime.build_ir({}));
  REQUIRE(checks != nullptr);
  CHECK(checks->kernel == "runtime_step");
  REQUIRE(checks->checks.size() == 1);
  CHECK(has(checks->checks[0], "loop_checks_test.cpp:" + std::to_string(g_step_line) +
                                   ": range(): the loop step must be positive"));
  CHECK(device_checks_of(*k_constant.build_ir({})) == nullptr);  // nothing to note at its launches

  tessel::jit::detail::LaunchLog log;
  // Nothing with checks launched: the driver's error as it is.
  std::string text = rethrown_text(log, CUDA_ERROR_ASSERT);
  CHECK_FALSE(has(text, "device-side check"));
  log.note(checks);
  text = rethrown_text(log, CUDA_ERROR_ASSERT);
  INFO(text);
  CHECK(has(text, "cuCtxSynchronize failed: CUDA_ERROR_ASSERT"));
  CHECK(has(text, "kernel 'runtime_step' failed a device-side check"));
  CHECK(has(text, checks->checks[0]));
  CHECK(has(text, "the CUDA context is unusable after this error"));
  // The trap after the assert reads as an illegal instruction: named the same way.
  CHECK(has(rethrown_text(log, CUDA_ERROR_ILLEGAL_INSTRUCTION), "kernel 'runtime_step' failed a device-side check"));
  // Other faults are not attributed to a check.
  CHECK_FALSE(has(rethrown_text(log, CUDA_ERROR_ILLEGAL_ADDRESS), "device-side check"));
  // The bare trap of a kernel that issues wgmma: the driver reports an unspecified launch failure.
  text = rethrown_text(log, CUDA_ERROR_LAUNCH_FAILED);
  CHECK(has(text, "stopped on the device: a failed device-side check traps so"));
  CHECK(has(text, ": range(): the loop step must be positive"));
  // Two kernels with checks since the last good synchronisation: both are candidates.
  auto other = std::make_shared<tessel::jit::detail::DeviceChecks>(
      tessel::jit::detail::DeviceChecks{"other_kernel", {"k.cpp:7: range(): the loop step must be positive"}});
  log.note(other);
  log.note(checks);  // launched again: listed once
  text = rethrown_text(log, CUDA_ERROR_ASSERT);
  CHECK(has(text, "a device-side check failed in one of the kernels launched last"));
  CHECK(has(text, "kernel 'other_kernel': k.cpp:7: range(): the loop step must be positive"));
  CHECK(count_of(text, "kernel 'runtime_step': ") == 1);
  // A synchronisation that succeeded clears them: a later failure is not theirs.
  log.clear();
  CHECK_FALSE(has(rethrown_text(log, CUDA_ERROR_ASSERT), "device-side check"));
}

TEST_CASE("GPU: a loop step of 0 or -3 fails the launch (no hang), naming the kernel and the loop's file:line" *
          doctest::test_suite("gpu")) {
  if (!gpu_or_skip()) return;
  for (const char* step : {"0", "-3"}) {
    CAPTURE(step);
    ChildRun r = run_child({"step", step}, kGpu, kTimeout);
    INFO("child output:\n" << r.output);
    REQUIRE_FALSE(r.timed_out);  // the old PTX looped forever here
    CHECK(r.exit_code == 3);
    CHECK(has(r.output, "device: GPU"));
    const bool assert_code = has(r.output, "CUDA_ERROR_ASSERT");
    CHECK((assert_code || has(r.output, "CUDA_ERROR_ILLEGAL_INSTRUCTION")));
    const int line = range_line(r.output);
    CHECK(line > 0);
    CHECK(has(r.output, "kernel 'step_sum' failed a device-side check"));
    CHECK(has(r.output, "loop_checks_child.cpp:" + std::to_string(line) + ": range(): the loop step must be positive"));
    CHECK(has(r.output, "the CUDA context is unusable after this error"));
    // __assertfail's own report, printed by the driver from the device.
    if (assert_code) CHECK(has(r.output, "Assertion `range(): the loop step must be positive` failed."));
  }
  // The check does not fire for a positive run-time step.
  ChildRun r = run_child({"step", "7"}, kGpu, kTimeout);
  INFO("child output:\n" << r.output);
  CHECK(r.exit_code == 0);
  CHECK(has(r.output, "ok: 3 programs summed 71071"));
}

TEST_CASE("GPU: a pipelined K loop just below INT32_MAX copies no trip past its end" * doctest::test_suite("gpu")) {
  if (!gpu_or_skip()) return;
  // iv + k * step wrapped past INT32_MAX used to pass `iv < hi` and copy trips the loop never
  // runs, from gigabytes below the buffers (an illegal address, or a memcheck error).
  for (const char* stages : {"2", "3", "4"}) {
    CAPTURE(stages);
    ChildRun r = run_child({"pipeline", stages}, kGpu, kTimeout);
    INFO("child output:\n" << r.output);
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.exit_code == 0);
    CHECK(has(r.output, "device: GPU"));
    CHECK(has(r.output, std::string("ok: 64x64 result of the one trip that reads, ") + stages + " stages"));
  }
}

TEST_CASE("dot loop with a run-time step: on sm_90a it runs on wgmma and its check traps without calling __assertfail") {
  if (!tessel::jit::has_lowering()) {
    MESSAGE("SKIPPED: built without the lowering");
    return;
  }
  // ptxas serialises every wgmma of a kernel that contains a call (loop_frame.cpp).
  ChildRun r = run_child({"dotptx", "0"}, kInterpreter, kTimeout);
  CHECK(r.exit_code == 0);
  INFO("PTX:\n" << r.output);
  CHECK(has(r.output, "wgmma.mma_async"));
  CHECK(has(r.output, "trap;"));
  CHECK_FALSE(has(r.output, "__assertfail"));
  for (const char* step : {"0", "32"}) {
    CAPTURE(step);
    ChildRun i = run_child({"dotstep", step}, kInterpreter, kTimeout);
    INFO("child output:\n" << i.output);
    CHECK(i.exit_code == (step[0] == '0' ? 3 : 0));
    if (step[0] == '0') CHECK(has(i.output, "loop step is 0 (from 0 to 128); it must be positive"));
    else CHECK(has(i.output, "ok: 64x64 product over K = 128 stepping 32"));
  }
}

TEST_CASE("GPU: a wgmma K loop with a step of 0 or -3 fails the launch (no hang), naming the kernel and the loop" *
          doctest::test_suite("gpu")) {
  if (!gpu_or_skip()) return;
  for (const char* step : {"0", "-3"}) {
    CAPTURE(step);
    ChildRun r = run_child({"dotstep", step}, kGpu, kTimeout);
    INFO("child output:\n" << r.output);
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.exit_code == 3);
    // A bare trap where the kernel issues wgmma (sm_90a: CUDA_ERROR_LAUNCH_FAILED), else
    // __assertfail (CUDA_ERROR_ASSERT).
    const bool trapped = has(r.output, "CUDA_ERROR_LAUNCH_FAILED");
    CHECK((trapped || has(r.output, "CUDA_ERROR_ASSERT")));
    const int line = range_line(r.output);
    CHECK(line > 0);
    CHECK(has(r.output, trapped ? "kernel 'dot_step' stopped on the device: a failed device-side check traps so"
                                : "kernel 'dot_step' failed a device-side check"));
    CHECK(has(r.output, "loop_checks_child.cpp:" + std::to_string(line) + ": range(): the loop step must be positive"));
  }
  ChildRun r = run_child({"dotstep", "32"}, kGpu, kTimeout);
  INFO("child output:\n" << r.output);
  CHECK(r.exit_code == 0);
  CHECK(has(r.output, "ok: 64x64 product over K = 128 stepping 32"));
}
