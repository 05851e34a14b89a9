// Special files in a cache entry (a FIFO): lookups, verify and listing treat them as corruption, never block.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "cache_test_util.hpp"

using namespace cache_test;

namespace {

// Runs `body` in a forked child and returns its exit status, or -1 when it had not finished within
// `limit` (then it is killed): a regression that blocks in open() must fail the test, not hang it.
int run_bounded(const std::function<int()>& body, std::chrono::seconds limit) {
  std::fflush(nullptr);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) ::_exit(body());
  auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    int st = 0;
    pid_t r = ::waitpid(pid, &st, WNOHANG);
    if (r == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &st, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Stores an entry and puts a FIFO in place of its file `name`.
std::string plant_fifo(cache::Store& store, uint64_t seed, const std::string& name) {
  cache::Entry e = random_entry(seed, 333 + seed);
  REQUIRE(store.store(e) == cache::StoreResult::Stored);
  fs::path p = store.entry_path(e.meta.key) / name;
  fs::remove(p);
  REQUIRE(::mkfifo(p.c_str(), 0644) == 0);
  return e.meta.key;
}

}  // namespace

TEST_CASE("a FIFO in place of an entry's file is corruption for verify and lookup, and never blocks") {
  for (const char* name : {"kernel.ptx", "meta.json", "kernel.tir"}) {
    CAPTURE(name);
    TempDir dir;
    cache::Store store(dir.path);
    std::string key = plant_fifo(store, 40 + std::string(name).size(), name);
    // In the child: verify names the file, lookup misses (and removes the entry), list survives.
    int status = run_bounded(
        [&]() -> int {
          if (store.verify(key).find(std::string(name) + " missing") == std::string::npos) return 10;
          if (store.list().size() != 1) return 11;
          StderrCapture cap;
          if (store.lookup(key).has_value()) return 12;
          return fs::exists(store.entry_path(key)) ? 13 : 0;
        },
        std::chrono::seconds(20));
    CHECK_MESSAGE(status != -1, "a cache read blocked on a FIFO for 20 s");
    CHECK(status == 0);
  }
}

TEST_CASE("a FIFO as an entry's hit counter neither blocks a lookup nor counts") {
  TempDir dir;
  cache::Store store(dir.path);
  cache::Entry e = random_entry(50, 123);
  REQUIRE(store.store(e) == cache::StoreResult::Stored);
  fs::path hits = store.entry_path(e.meta.key) / cache::kHitsFile;
  fs::remove(hits);
  REQUIRE(::mkfifo(hits.c_str(), 0644) == 0);
  int status = run_bounded(
      [&]() -> int {
        if (!store.lookup(e.meta.key).has_value()) return 10;  // the artefacts are intact: a hit
        auto l = store.list();
        return l.size() == 1 && l[0].hits == 0 ? 0 : 11;
      },
      std::chrono::seconds(20));
  CHECK_MESSAGE(status != -1, "a hit counter read blocked on a FIFO for 20 s");
  CHECK(status == 0);
}
