// The test kernels' PTX assembled offline by ptxas (CPU only; skipped without a toolkit).
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "kernels_ptx.hpp"

namespace fs = std::filesystem;

namespace {

constexpr const char* kPtxas = "/usr/local/cuda/bin/ptxas";

struct PtxasResult {
  int status;
  std::string output;
};

PtxasResult run_ptxas(const char* ptx, const std::string& arch) {
  fs::path file = fs::temp_directory_path() / ("tessel_rt_" + std::to_string(getpid()) + ".ptx");
  std::ofstream(file) << ptx;
  std::string cmd = std::string(kPtxas) + " -arch=" + arch + " -v " + file.string() + " -o /dev/null 2>&1";
  PtxasResult r{-1, {}};
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[512];
    while (fgets(buf, sizeof buf, p)) r.output += buf;
    r.status = pclose(p);
  }
  fs::remove(file);
  return r;
}

}  // namespace

TEST_CASE("ptxas assembles the vector-add PTX for sm_80 and sm_90, and rejects the bad one") {
  if (!fs::exists(kPtxas)) {
    MESSAGE("SKIPPED (no " << kPtxas << "): PTX assembly test");
    return;
  }
  for (const char* arch : {"sm_80", "sm_90"}) {
    PtxasResult r = run_ptxas(tessel::rt::test::kVaddPtx, arch);
    INFO(arch << ": " << r.output);
    CHECK(r.status == 0);
    CHECK(r.output.find("Compiling entry function 'vadd'") != std::string::npos);
    CHECK(r.output.find("0 bytes spill stores") != std::string::npos);
  }
  PtxasResult bad = run_ptxas(tessel::rt::test::kBadPtx, "sm_90");
  INFO(bad.output);
  CHECK(bad.status != 0);
  CHECK(bad.output.find("line 17") != std::string::npos);
  CHECK(bad.output.find("%q9") != std::string::npos);
}
