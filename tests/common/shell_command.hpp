// Runs a shell command for a test and captures its exit status and output (stdout and stderr).
#pragma once
#include <stdio.h>
#include <sys/wait.h>

#include <array>
#include <string>

namespace tessel_test {

struct CommandOutput {
  int status = -1;  // the exit status; -1 when the command did not exit normally
  std::string text;
};

inline CommandOutput run_command(const std::string& cmd) {
  CommandOutput o;
  if (FILE* p = popen((cmd + " 2>&1").c_str(), "r")) {
    std::array<char, 4096> buf;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) o.text.append(buf.data(), n);
    int st = pclose(p);
    o.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  return o;
}

}  // namespace tessel_test
