// Test processes never touch the user's disk cache or tuning database (tests/test_main.cpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "tessel/jit/cache.hpp"
#include "tessel/jit/tune/database.hpp"

namespace fs = std::filesystem;
namespace cache = tessel::jit::cache;

namespace {

// Where the cache would be if nothing named it: $XDG_CACHE_HOME/tessel, else ~/.cache/tessel.
fs::path user_default_cache() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "tessel";
  if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache" / "tessel";
  return {};
}

bool inside(const fs::path& p, const fs::path& dir) {
  if (dir.empty()) return false;
  const fs::path a = fs::weakly_canonical(p), b = fs::weakly_canonical(dir);
  auto [end, _] = std::mismatch(b.begin(), b.end(), a.begin(), a.end());
  return end == b.end();
}

}  // namespace

TEST_CASE("tests run with their own cache and tuning database, never the user's") {
  const char* named = std::getenv("TESSEL_CACHE_DIR");
  REQUIRE(named != nullptr);  // the test main names one when the caller did not
  const fs::path dir = cache::Settings::dir_from_env();
  CHECK(dir == fs::path(named));
  const fs::path user = user_default_cache();
  INFO("cache " << dir << ", the user's " << user);
  CHECK_FALSE(inside(dir, user));
  const fs::path db = tessel::jit::tune::Database::default_path();
  INFO("tuning database " << db);
  REQUIRE(std::getenv("TESSEL_TUNE_DB") != nullptr);
  CHECK_FALSE(db.empty());
  CHECK_FALSE(inside(db, user));
}
