// Runs NVIDIA's ptxas on emitted PTX (when installed) and reads its resource report. Without
// ptxas the check is reported skipped (a failure under TESSEL_TEST_REQUIRE_PTXAS=1).
#pragma once
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <unistd.h>

#include "../common/ptxas_gate.hpp"

namespace lowering_test {

struct PtxasReport {
  bool ran = false;     // false: ptxas is not installed (the skip is already reported)
  bool ok = false;      // exit status 0
  std::string log;
  int stack_frame = -1, spill_stores = -1, spill_loads = -1, registers = -1;
};

inline PtxasReport run_ptxas(const std::string& ptx, const std::string& arch) {
  PtxasReport r;
  std::string exe = tessel_test::ptxas_or_skip("assembling PTX for " + arch);
  if (exe.empty()) return r;
  r.ran = true;
  auto dir = std::filesystem::temp_directory_path();
  std::string base = (dir / ("tessel_lowering_test_" + std::to_string(::getpid()))).string();
  { std::ofstream(base + ".ptx") << ptx; }
  std::string cmd = "'" + exe + "' -arch=" + arch + " -v " + base + ".ptx -o " + base + ".cubin 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  char buf[4096];
  while (p && std::fgets(buf, sizeof buf, p)) r.log += buf;
  int status = p ? ::pclose(p) : -1;
  r.ok = status == 0;
  std::smatch m;
  if (std::regex_search(r.log, m, std::regex(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)"))) {
    r.stack_frame = std::stoi(m[1]);
    r.spill_stores = std::stoi(m[2]);
    r.spill_loads = std::stoi(m[3]);
  }
  if (std::regex_search(r.log, m, std::regex(R"(Used (\d+) registers)"))) r.registers = std::stoi(m[1]);
  std::filesystem::remove(base + ".ptx");
  std::filesystem::remove(base + ".cubin");
  return r;
}

}  // namespace lowering_test
