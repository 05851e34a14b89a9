// doctest's main for every test executable. A run with no failure that skipped GPU cases exits
// 77 (ctest's SKIP_RETURN_CODE for the "gpu" entries), so a skip is never counted as a pass.
// TESSEL_TEST_REQUIRE_GPU=1 also sets TESSEL_REQUIRE_GPU=1, which makes the library refuse to
// fall back to the CPU interpreter.
// Every test process gets its own disk cache and tuning database (a fresh directory, removed at
// exit) unless the caller names them, so no test reads or writes the user's ~/.cache/tessel:
// entries of another build or another test never feed a test, and tests never pollute it.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <system_error>

#include "common/gpu_gate.hpp"
#include "common/ptxas_gate.hpp"

namespace {

bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0';
}

// A private directory for the cache and the tuning database, removed (with what the tests left
// in it) when main returns. Variables the caller set are kept: a device run may share a cache
// on purpose.
class IsolatedCache {
 public:
  IsolatedCache() {
    if (env_set("TESSEL_CACHE_DIR") && env_set("TESSEL_TUNE_DB")) return;
    std::error_code ec;
    std::string tmpl = (std::filesystem::temp_directory_path(ec) / "tessel-test-cache-XXXXXX").string();
    if (ec || ::mkdtemp(tmpl.data()) == nullptr) {
      // Never fall back to the user's cache: with no private directory, turn the cache off.
      std::fprintf(stderr, "test main: no temporary directory for the cache and tuning database\n");
      if (!env_set("TESSEL_CACHE_DIR")) {
        ::setenv("TESSEL_CACHE", "0", 1);
        ::setenv("TESSEL_CACHE_DIR", "/nonexistent/tessel-test-cache", 1);
      }
      if (!env_set("TESSEL_TUNE_DB")) ::setenv("TESSEL_TUNE_DB", "/nonexistent/tessel-test-cache/tuning.json", 1);
      return;
    }
    dir_ = tmpl;
    if (!env_set("TESSEL_CACHE_DIR")) ::setenv("TESSEL_CACHE_DIR", (*dir_ / "cache").c_str(), 1);
    if (!env_set("TESSEL_TUNE_DB")) ::setenv("TESSEL_TUNE_DB", (*dir_ / "tuning.json").c_str(), 1);
  }
  ~IsolatedCache() {
    if (!dir_) return;
    std::error_code ec;
    std::filesystem::remove_all(*dir_, ec);
  }
  IsolatedCache(const IsolatedCache&) = delete;
  IsolatedCache& operator=(const IsolatedCache&) = delete;

 private:
  std::optional<std::filesystem::path> dir_;
};

}  // namespace

int main(int argc, char** argv) {
  if (tessel_test::require_gpu()) ::setenv("TESSEL_REQUIRE_GPU", "1", 1);
  IsolatedCache isolated;  // before any test reads the environment; removed after the last
  doctest::Context ctx(argc, argv);
  const int rc = ctx.run();
  if (ctx.shouldExit() || rc != 0) return rc;
  // ptxas skips do not change the exit status (the rest of the executable did run); they are
  // said on the last line, and fail under TESSEL_TEST_REQUIRE_PTXAS=1 (see ptxas_gate.hpp).
  if (int n = tessel_test::skipped_ptxas_checks(); n > 0)
    std::printf("%d ptxas check(s) SKIPPED (no ptxas: %s)\n", n,
                std::string(tessel::rt::ptxas_not_found_hint()).c_str());
  if (int n = tessel_test::skipped_gpu_cases(); n > 0) {
    std::printf("%d GPU check(s) SKIPPED (no usable GPU); exit 77\n", n);
    return 77;
  }
  return 0;
}
