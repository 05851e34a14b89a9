// ptxas_cubin under a time limit: a hung ptxas is stopped with a named error, and no run leaves temporaries.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "../common/scoped_fs_env.hpp"
#include "tessel/jit/cubin.hpp"

namespace fs = std::filesystem;
using tessel_test::EnvVar;
using tessel_test::TempDir;

namespace {

constexpr const char* kPtx = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry big_tile()\n{\n ret;\n}\n";

// A stand-in ptxas: a shell script with `body`, chosen through TESSEL_PTXAS.
fs::path fake_ptxas(const fs::path& dir, const std::string& body) {
  fs::create_directories(dir);
  fs::path p = dir / "ptxas";
  std::ofstream(p) << "#!/bin/sh\n" << body << "\n";
  fs::permissions(p, fs::perms::owner_all);
  return p;
}

// Entries left in `dir` (the TMPDIR of the call under test).
int entries(const fs::path& dir) {
  int n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

// Whether process `pid` is gone, or a zombie waiting for its new parent to reap it, within 2 s.
bool stopped_soon(int pid) {
  for (int i = 0; i < 200; ++i) {
    std::string stat;
    std::getline(std::ifstream("/proc/" + std::to_string(pid) + "/stat"), stat);
    const size_t paren = stat.rfind(')');
    if (stat.empty() || (paren != std::string::npos && stat.compare(paren + 1, 3, " Z ") == 0)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace

TEST_CASE("a ptxas that hangs is stopped at TESSEL_PTXAS_TIMEOUT with an error naming the kernel, leaving no files") {
  TempDir tools, tmp;
  // The sleep is a child of the shell, as a compiler's helper process would be: only killing the
  // process group stops it. Its pid is left where the test can see whether it still runs.
  const fs::path child_pid = tools.path / "child.pid";
  EnvVar exe("TESSEL_PTXAS",
             fake_ptxas(tools.path, "sleep 30 & echo $! > '" + child_pid.string() + "'; wait; exit 0").string());
  EnvVar limit("TESSEL_PTXAS_TIMEOUT", "1"), tmpdir("TMPDIR", tmp.path.string());
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH_AS(tessel::jit::ptxas_cubin(kPtx, "sm_80"),
                       doctest::Contains("ptxas did not finish within 1 s compiling kernel 'big_tile' for sm_80"),
                       tessel::jit::PtxasTimeoutError);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(s < 5.0);
  CHECK(entries(tmp.path) == 0);
  int pid = 0;
  std::ifstream(child_pid) >> pid;
  REQUIRE(pid > 0);
  CHECK(stopped_soon(pid));
}

TEST_CASE("a ptxas that fails, or writes nothing, leaves no temporary files") {
  TempDir tools, tmp;
  EnvVar tmpdir("TMPDIR", tmp.path.string());
  {
    EnvVar exe("TESSEL_PTXAS", fake_ptxas(tools.path, "echo 'ptxas fatal: nope' >&2; exit 3").string());
    CHECK_THROWS_WITH_AS(tessel::jit::ptxas_cubin(kPtx, "sm_80"),
                         doctest::Contains("ptxas -arch=sm_80 failed (exit status 3):\nptxas fatal: nope"),
                         std::runtime_error);
    CHECK(entries(tmp.path) == 0);
  }
  {
    EnvVar exe("TESSEL_PTXAS", fake_ptxas(tools.path / "silent", "exit 0").string());
    CHECK_THROWS_WITH_AS(tessel::jit::ptxas_cubin(kPtx, "sm_80"), "ptxas wrote no cubin", std::runtime_error);
    CHECK(entries(tmp.path) == 0);
  }
}

TEST_CASE("a fake ptxas that finishes in time gives its cubin and its report, and leaves no files") {
  TempDir tools, tmp;
  EnvVar tmpdir("TMPDIR", tmp.path.string()), limit("TESSEL_PTXAS_TIMEOUT", "10");
  // ptxas -arch=sm_80 -v IN -o OUT: writes OUT and a -v style report.
  EnvVar exe("TESSEL_PTXAS", fake_ptxas(tools.path, "printf 'ELF' > \"$5\"; echo 'ptxas info    : Used 12 registers'")
                                 .string());
  tessel::jit::Cubin c = tessel::jit::ptxas_cubin(kPtx, "sm_80");
  CHECK(std::string(c.image.begin(), c.image.end()) == "ELF");
  CHECK(c.registers == 12);
  CHECK(entries(tmp.path) == 0);
}

TEST_CASE("TESSEL_PTXAS_TIMEOUT: unset is the default, 0 is no limit, anything but a whole number is refused") {
  {
    EnvVar unset("TESSEL_PTXAS_TIMEOUT", std::nullopt);
    CHECK(tessel::jit::ptxas_timeout_seconds() == tessel::jit::kDefaultPtxasTimeoutS);
  }
  {
    EnvVar zero("TESSEL_PTXAS_TIMEOUT", "0");
    CHECK(tessel::jit::ptxas_timeout_seconds() == 0);
  }
  for (const char* bad : {"abc", "-1", "1.5", "10s", "99999999999"}) {
    CAPTURE(bad);
    EnvVar v("TESSEL_PTXAS_TIMEOUT", bad);
    CHECK_THROWS_WITH_AS(tessel::jit::ptxas_timeout_seconds(),
                         doctest::Contains("is not a whole number of seconds"), tessel::jit::PtxasTimeoutError);
  }
}
