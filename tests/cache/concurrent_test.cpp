// Atomic publication: processes racing to write (and read) the same keys never expose half an entry.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <iostream>

#include "cache_test_util.hpp"

using namespace cache_test;

namespace {

constexpr int kRounds = 40;

// Runs `body` in a child process once the parent writes to `go`; the child's exit status is
// body's return value (children leave through _exit so they never run the test framework).
pid_t spawn_child(int go_fd, const std::function<int()>& body) {
  // Flushed first: a child must not inherit (and later write out) the parent's buffered output.
  std::cout.flush();
  std::fflush(nullptr);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    char c;
    ::_exit(::read(go_fd, &c, 1) == 1 ? body() : 90);
  }
  return pid;
}

int wait_child(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

// The two competing payloads of each round: same key, different sizes (cubin 1 KiB vs 256 KiB+).
using Payloads = std::vector<std::array<cache::Entry, 2>>;
Payloads make_payloads() {
  Payloads p(kRounds);
  for (int r = 0; r < kRounds; ++r)
    for (int w = 0; w < 2; ++w) {
      p[r][w] = random_entry(500 + 2 * r + w, w == 0 ? 1024 : (1 << 18) + 17 * r);
      p[r][w].meta.key = p[r][0].meta.key;
    }
  return p;
}

bool same(const cache::Entry& got, const cache::Entry& want) {
  return got.cubin == want.cubin && got.ptx == want.ptx && got.tir == want.tir && got.llvm_ir == want.llvm_ir;
}

// A reader that looks every key up in a loop, with its stderr in `err`: a published entry that
// looks corrupt to it would be reported there. Returns 1 if it ever got a wrong entry.
int reader(const Payloads& p, const fs::path& dir, const fs::path& err, int passes) {
  FILE* f = std::freopen(err.c_str(), "w", stderr);
  if (!f) return 80;
  cache::Store store(dir);
  for (int pass = 0; pass < passes; ++pass)
    for (int r = 0; r < kRounds; ++r) {
      auto got = store.lookup(p[r][0].meta.key);
      if (got && !same(*got, p[r][0]) && !same(*got, p[r][1])) return 1;
    }
  return 0;
}

void run_race(bool replace) {
  const Payloads p = make_payloads();
  TempDir dir, logs;
  int pipefd[2];
  REQUIRE(::pipe(pipefd) == 0);
  std::vector<pid_t> kids;
  for (int w = 0; w < 2; ++w)
    kids.push_back(spawn_child(pipefd[0], [&, w] {
      cache::Store store(dir.path);
      int failed = 0;
      for (int r = 0; r < kRounds; ++r) failed += store.store(p[r][w], replace) == cache::StoreResult::Failed;
      return failed ? 1 : 0;
    }));
  kids.push_back(spawn_child(pipefd[0], [&] { return reader(p, dir.path, logs.path / "reader.err", 4); }));
  REQUIRE(::write(pipefd[1], "xxx", 3) == 3);  // all three start together
  ::close(pipefd[0]);
  ::close(pipefd[1]);
  for (pid_t k : kids) CHECK(wait_child(k) == 0);

  std::ifstream err(logs.path / "reader.err");
  std::string text((std::istreambuf_iterator<char>(err)), std::istreambuf_iterator<char>());
  CHECK(text == "");  // no reader ever saw a half-written or half-removed entry as corrupt

  cache::Store store(dir.path);
  CHECK(count_entries(dir.path) == kRounds);
  CHECK(count_temporaries(dir.path) == 0);
  int from_small = 0, from_large = 0;
  for (int r = 0; r < kRounds; ++r) {
    CHECK(store.verify(p[r][0].meta.key).empty());
    auto got = store.lookup(p[r][0].meta.key);
    REQUIRE(got.has_value());
    bool is_a = same(*got, p[r][0]), is_b = same(*got, p[r][1]);
    CHECK(is_a != is_b);  // exactly one writer's complete entry
    from_small += is_a;
    from_large += is_b;
  }
  MESSAGE("entries won by the 1 KiB writer: ", from_small, ", by the 256 KiB writer: ", from_large);
}

}  // namespace

TEST_CASE("two processes storing the same keys leave exactly one complete entry per key") {
  run_race(/*replace=*/false);
}

TEST_CASE("two TESSEL_ALWAYS_COMPILE writers replacing entries under a reader never expose a broken one") {
  run_race(/*replace=*/true);
}
