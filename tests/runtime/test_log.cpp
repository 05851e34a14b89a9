// tessel's logging hook: levels, the user sink, the stderr default, forced and once-only messages.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "../common/log_capture.hpp"
#include "../common/scoped_fs_env.hpp"
#include "tessel/runtime/error.hpp"
#include "tessel/runtime/log.hpp"

using namespace tessel;
using rt::LogLevel;
using tessel_test::LogCapture;

namespace {

// What the code under test writes to file descriptor 2 while alive.
class StderrToFile {
 public:
  StderrToFile() {
    std::fflush(stderr);
    saved_ = ::dup(2);
    const int out = ::open(path().c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(out, 2);
    ::close(out);
  }
  ~StderrToFile() {
    std::fflush(stderr);
    ::dup2(saved_, 2);
    ::close(saved_);
  }
  std::string text() {
    std::fflush(stderr);
    std::ifstream in(path());
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

 private:
  std::filesystem::path path() const { return dir_.path / "stderr.txt"; }
  tessel_test::TempDir dir_;
  int saved_ = -1;
};

}  // namespace

TEST_CASE("log levels have names and parse back; anything else is not a level") {
  for (LogLevel l : {LogLevel::Error, LogLevel::Warn, LogLevel::Info, LogLevel::Debug})
    CHECK(rt::parse_log_level(rt::log_level_name(l)) == l);
  CHECK(rt::log_level_name(LogLevel::Warn) == "warn");
  CHECK(rt::parse_log_level("warning") == LogLevel::Warn);
  CHECK_FALSE(rt::parse_log_level("bogus").has_value());
  CHECK_FALSE(rt::parse_log_level("").has_value());
  CHECK_FALSE(rt::parse_log_level("WARN").has_value());
}

TEST_CASE("the sink gets the messages the level shows, with their level, and nothing reaches stderr") {
  StderrToFile err;
  {
    LogCapture cap(LogLevel::Warn);
    rt::log(LogLevel::Error, "an error");
    rt::log(LogLevel::Warn, "a warning");
    rt::log(LogLevel::Info, "some info");
    rt::log(LogLevel::Debug, "a detail");
    CHECK(rt::log_enabled(LogLevel::Warn));
    CHECK_FALSE(rt::log_enabled(LogLevel::Info));
    auto got = cap.messages();
    REQUIRE(got.size() == 2);
    CHECK(got[0] == std::pair{LogLevel::Error, std::string("an error")});
    CHECK(got[1] == std::pair{LogLevel::Warn, std::string("a warning")});

    rt::set_log_level(LogLevel::Debug);
    rt::log(LogLevel::Debug, "a detail");
    CHECK(cap.messages().size() == 3);
    rt::set_log_level(LogLevel::Error);
    rt::log(LogLevel::Warn, "hidden");
    CHECK(cap.messages().size() == 3);
  }
  CHECK(err.text().empty());
}

TEST_CASE("without a sink, a shown message goes to stderr as one prefixed line; a hidden one nowhere") {
  LogCapture level_only(LogLevel::Warn);
  rt::set_log_sink(nullptr);  // the default sink, at warn
  StderrToFile err;
  rt::log(LogLevel::Warn, "cache entry X is corrupt; recompiling");
  rt::log(LogLevel::Info, "not shown at warn");
  CHECK(err.text() == "tessel: cache entry X is corrupt; recompiling\n");
}

TEST_CASE("forced output reaches the sink at any level, as info") {
  LogCapture cap(LogLevel::Error);
  rt::log_forced("autotune k n=1: chose BLOCK=64");
  auto got = cap.messages();
  REQUIRE(got.size() == 1);
  CHECK(got[0].first == LogLevel::Info);
  CHECK(got[0].second == "autotune k n=1: chose BLOCK=64");
}

TEST_CASE("log_once says each id once per process, shown or not") {
  LogCapture cap(LogLevel::Error);
  rt::log_once(LogLevel::Warn, "test_log:hidden-once", "hidden the first time");
  rt::set_log_level(LogLevel::Warn);
  rt::log_once(LogLevel::Warn, "test_log:hidden-once", "hidden the first time");  // id already used
  rt::log_once(LogLevel::Warn, "test_log:once", "said once");
  rt::log_once(LogLevel::Warn, "test_log:once", "said once");
  rt::log_once(LogLevel::Warn, "test_log:twice", "another id");
  auto got = cap.messages();
  REQUIRE(got.size() == 2);
  CHECK(got[0].second == "said once");
  CHECK(got[1].second == "another id");
}

TEST_CASE("a release failure ignored in a destructor is a warning through the sink") {
  LogCapture cap(LogLevel::Warn);
  rt::note_release_failure(CUDA_ERROR_INVALID_VALUE, "cuTestLogRelease");
  rt::note_release_failure(CUDA_ERROR_INVALID_VALUE, "cuTestLogRelease");  // said once per call
  auto got = cap.matching("cuTestLogRelease");
  REQUIRE(got.size() == 1);
  CHECK(got[0].first == LogLevel::Warn);
  CHECK(got[0].second.find("cuTestLogRelease failed while releasing a resource: CUDA_ERROR_INVALID_VALUE") == 0);
}

TEST_CASE("sinks are called one at a time from many threads; a message a sink logs goes to stderr") {
  std::atomic<int> inside{0}, overlaps{0};
  int count = 0;  // not atomic: serialized calls make it exact
  rt::set_log_level(LogLevel::Warn);
  rt::set_log_sink([&](LogLevel, std::string_view) {
    if (inside.fetch_add(1) != 0) ++overlaps;
    ++count;
    std::this_thread::yield();
    inside.fetch_sub(1);
  });
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([] {
      for (int i = 0; i < 500; ++i) rt::log(LogLevel::Warn, "from a thread");
    });
  for (auto& t : ts) t.join();
  CHECK(count == 2000);
  CHECK(overlaps == 0);

  StderrToFile err;
  rt::set_log_sink([](LogLevel, std::string_view m) {
    rt::log(LogLevel::Warn, std::string("inside the sink: ") + std::string(m));  // no recursion, no deadlock
  });
  rt::log(LogLevel::Warn, "outer");
  rt::set_log_sink([](LogLevel, std::string_view) { throw std::runtime_error("a sink that throws"); });
  CHECK_NOTHROW(rt::log(LogLevel::Warn, "dropped by a throwing sink"));
  rt::set_log_sink(nullptr);
  CHECK(err.text() == "tessel: inside the sink: outer\n");
}
