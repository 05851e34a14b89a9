// The test kernels' PTX assembled offline by ptxas (CPU only; skipped without a toolkit, a
// failure then under TESSEL_TEST_REQUIRE_PTXAS=1), and the one ptxas finder's search order.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "../common/ptxas_gate.hpp"
#include "../common/scoped_fs_env.hpp"
#include "kernels_ptx.hpp"
#include "tessel/runtime/ptxas.hpp"

namespace fs = std::filesystem;

namespace {

struct PtxasResult {
  int status;
  std::string output;
};

PtxasResult run_ptxas(const std::string& ptxas, const char* ptx, const std::string& arch) {
  fs::path file = fs::temp_directory_path() / ("tessel_rt_" + std::to_string(getpid()) + ".ptx");
  std::ofstream(file) << ptx;
  std::string cmd = "'" + ptxas + "' -arch=" + arch + " -v " + file.string() + " -o /dev/null 2>&1";
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
  const std::string ptxas = tessel_test::ptxas_or_skip("the vector-add PTX assembly test");
  if (ptxas.empty()) return;
  for (const char* arch : {"sm_80", "sm_90"}) {
    PtxasResult r = run_ptxas(ptxas, tessel::rt::test::kVaddPtx, arch);
    INFO(arch << ": " << r.output);
    CHECK(r.status == 0);
    CHECK(r.output.find("Compiling entry function 'vadd'") != std::string::npos);
    CHECK(r.output.find("0 bytes spill stores") != std::string::npos);
  }
  PtxasResult bad = run_ptxas(ptxas, tessel::rt::test::kBadPtx, "sm_90");
  INFO(bad.output);
  CHECK(bad.status != 0);
  CHECK(bad.output.find("line 17") != std::string::npos);
  CHECK(bad.output.find("%q9") != std::string::npos);
}

namespace {

// An executable file named ptxas in `dir` (a shell script that is never run).
fs::path fake_ptxas(const fs::path& dir) {
  fs::create_directories(dir);
  fs::path p = dir / "ptxas";
  std::ofstream(p) << "#!/bin/sh\nexit 1\n";
  fs::permissions(p, fs::perms::owner_all);
  return p;
}

}  // namespace

TEST_CASE("find_ptxas: TESSEL_PTXAS, then PATH, then CUDA_PATH and CUDA_HOME, then /usr/local/cuda") {
  using tessel_test::EnvVar;
  tessel_test::TempDir tmp;
  const fs::path named = fake_ptxas(tmp.path / "named"), on_path = fake_ptxas(tmp.path / "on_path");
  const fs::path cuda_path = fake_ptxas(tmp.path / "cuda_path" / "bin"), cuda_home = fake_ptxas(tmp.path / "cuda_home" / "bin");
  const fs::path empty_dir = tmp.path / "empty";
  fs::create_directories(empty_dir);
  // Not executable: never chosen, wherever it is.
  fs::create_directories(tmp.path / "not_exec");
  std::ofstream(tmp.path / "not_exec" / "ptxas") << "not a program\n";
  fs::permissions(tmp.path / "not_exec" / "ptxas", fs::perms::owner_read | fs::perms::owner_write);

  const std::string path_list = (tmp.path / "not_exec").string() + "::" + empty_dir.string() + ":" +
                                on_path.parent_path().string();
  EnvVar e("TESSEL_PTXAS", named.string()), p("PATH", path_list), c("CUDA_PATH", (tmp.path / "cuda_path").string()),
      h("CUDA_HOME", (tmp.path / "cuda_home").string());
  CHECK(tessel::rt::find_ptxas() == named.string());
  {
    // An explicit choice is never replaced: a TESSEL_PTXAS that is not executable finds nothing.
    EnvVar bad("TESSEL_PTXAS", (tmp.path / "not_exec" / "ptxas").string());
    CHECK(tessel::rt::find_ptxas() == "");
    EnvVar missing("TESSEL_PTXAS", (tmp.path / "nowhere" / "ptxas").string());
    CHECK(tessel::rt::find_ptxas() == "");
  }
  EnvVar no_explicit("TESSEL_PTXAS", "");  // empty counts as unset
  CHECK(tessel::rt::find_ptxas() == on_path.string());
  {
    EnvVar p2("PATH", empty_dir.string());
    CHECK(tessel::rt::find_ptxas() == cuda_path.string());
    EnvVar c2("CUDA_PATH", std::nullopt);
    CHECK(tessel::rt::find_ptxas() == cuda_home.string());
    EnvVar h2("CUDA_HOME", empty_dir.string());  // a toolkit root without bin/ptxas
    // Last: the toolkit's default location, when this machine has it.
    const bool has_default = ::access("/usr/local/cuda/bin/ptxas", X_OK) == 0;
    CHECK(tessel::rt::find_ptxas() == (has_default ? "/usr/local/cuda/bin/ptxas" : ""));
  }
  CHECK_FALSE(tessel::rt::ptxas_not_found_hint().empty());
}

// The gate itself (tests/common/ptxas_gate.hpp): without ptxas a check is a counted skip, and a
// failure when TESSEL_TEST_REQUIRE_PTXAS=1; CI relies on the failure.
TEST_CASE("without ptxas a check is a counted, reported skip") {
  using tessel_test::EnvVar;
  EnvVar none("TESSEL_PTXAS", "/nonexistent/ptxas"), free("TESSEL_TEST_REQUIRE_PTXAS", "0");
  const int before = tessel_test::skipped_ptxas_checks();
  CHECK(tessel_test::ptxas_or_skip("a gate test") == "");
  CHECK(tessel_test::skipped_ptxas_checks() == before + 1);
  tessel_test::skipped_ptxas_checks() = before;  // not a real skip: keep this run's summary true
}

TEST_CASE("without ptxas a check fails under TESSEL_TEST_REQUIRE_PTXAS=1" * doctest::should_fail()) {
  using tessel_test::EnvVar;
  EnvVar none("TESSEL_PTXAS", "/nonexistent/ptxas"), required("TESSEL_TEST_REQUIRE_PTXAS", "1");
  // The only check here: this case passes only when the gate fails it (should_fail).
  tessel_test::ptxas_or_skip("a gate test");
}
