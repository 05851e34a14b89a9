// The cache's warnings go through tessel's log: to the user's sink, at warn, hidden at error.
#include <doctest/doctest.h>

#include "../common/log_capture.hpp"
#include "cache_test_util.hpp"

using namespace cache_test;
using tessel::rt::LogLevel;
using tessel_test::LogCapture;

namespace {

// Stores an entry and flips a byte of its kernel.tir: the next lookup finds it corrupt.
std::string store_damaged(cache::Store& store, uint64_t seed) {
  cache::Entry e = random_entry(seed, 100);
  REQUIRE(store.store(e) == cache::StoreResult::Stored);
  const fs::path tir = store.entry_path(e.meta.key) / "kernel.tir";
  std::string b = read_bytes(tir);
  b[b.size() / 2] ^= 0x10;
  write_bytes(tir, b);
  return e.meta.key;
}

}  // namespace

TEST_CASE("a corrupt cache entry is a warning to the installed sink, not to stderr") {
  TempDir dir;
  cache::Store store(dir.path);
  const std::string key = store_damaged(store, 9101);
  StderrCapture err;
  LogCapture cap(LogLevel::Warn);
  CHECK_FALSE(store.lookup(key).has_value());
  auto said = cap.matching(key);
  REQUIRE(said.size() == 1);
  CHECK(said[0].first == LogLevel::Warn);
  CHECK(said[0].second == "cache entry " + key + " is corrupt (kernel.tir checksum mismatch); recompiling");
  CHECK(err.text().empty());
}

TEST_CASE("TESSEL_LOG=error's level hides the cache's warnings") {
  TempDir dir;
  cache::Store store(dir.path);
  const std::string key = store_damaged(store, 9102);
  StderrCapture err;
  LogCapture cap(LogLevel::Error);
  CHECK_FALSE(store.lookup(key).has_value());
  CHECK(cap.messages().empty());
  CHECK_FALSE(fs::exists(store.entry_path(key)));  // still recovered, only not said
  CHECK(err.text().empty());
}
