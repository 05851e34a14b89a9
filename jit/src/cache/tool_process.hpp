// Running NVIDIA's command-line tools (ptxas, nvdisasm, cuobjdump): a private temporary directory
// and a child process under a time limit, without a shell.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace tessel::jit::detail {

// A private temporary directory ($TMPDIR/tessel-<tag>-XXXXXX), removed with everything in it.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(std::string_view tag = "ptxas");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

// How a run ended.
struct RunResult {
  bool timed_out = false;
  int exit_status = -1;  // when it exited
  int signal = 0;        // when a signal ended it
};

// Runs argv (argv[0] a path) with stdout and stderr into `log_path`, killed after `timeout_s`
// seconds (0: never). The child leads a process group of its own, so a timeout kills whatever
// it started too, and dies with this process (PR_SET_PDEATHSIG), so an interrupted tessel
// leaves no tool running.
RunResult run_bounded(const std::vector<std::string>& argv, const std::filesystem::path& log_path, int timeout_s);

// "exit status 2", "killed by signal 9", for messages about a failed run.
std::string describe_failure(const RunResult& r);

}  // namespace tessel::jit::detail
