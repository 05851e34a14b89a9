// tune() with fake problems and a scripted timer: choice, rejections, pruning, progress, threads.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "tessel/ir/error.hpp"
#include "tessel/jit/tune/tuner.hpp"
#include "tune_test_util.hpp"

using namespace tessel;
using namespace tessel::jit::tune;
using tune_test::FakeTimer;

namespace {

int64_t block(const Config& c) { return c.meta["BLOCK"]; }

// A fake kernel whose time, compile failures and output are scripted per BLOCK.
struct Script {
  std::map<int64_t, double> ms;            // time per BLOCK
  std::set<int64_t> compile_throws;        // CompileError
  std::set<int64_t> too_large;             // ResourceLimitError
  std::set<int64_t> internal_throws;       // InternalError
  std::set<int64_t> launch_throws;         // runtime_error at launch
  std::map<int64_t, size_t> wrong_at;      // output differs at this index
  std::vector<double> data;                // the correct output
  std::mutex mu;
  std::vector<int64_t> compiled;           // in completion order
  std::set<std::thread::id> compile_threads;
  int64_t last = 0;
  int launches = 0, resets = 0;

  Problem problem() {
    Problem p;
    p.kernel = "fake";
    p.key = "n=1024;sig=f32";
    p.compile = [this](const Config& c) {
      if (compile_throws.count(block(c))) throw CompileError({}, "BLOCK " + std::to_string(block(c)) + " is too big");
      if (too_large.count(block(c)))
        throw ResourceLimitError({}, "a f32[" + std::to_string(block(c)) + "] tile needs 8192 registers");
      if (internal_throws.count(block(c))) throw InternalError("broken invariant");
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      std::lock_guard lock(mu);
      compiled.push_back(block(c));
      compile_threads.insert(std::this_thread::get_id());
    };
    p.launch = [this](const Config& c) {
      if (launch_throws.count(block(c))) throw std::runtime_error("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES");
      last = block(c);
      ++launches;
    };
    p.reset = [this] { ++resets; };
    p.output = [this] {
      std::vector<double> out = data;
      if (auto it = wrong_at.find(last); it != wrong_at.end()) out[it->second] += 1e-3 * (1 + std::abs(out[it->second]));
      return out;
    };
    return p;
  }
};

std::vector<Config> blocks(std::initializer_list<int64_t> bs) {
  std::vector<Config> cs;
  for (int64_t b : bs) cs.push_back(Config{jit::tune::Meta{{"BLOCK", b}}, {4, 1}});
  return cs;
}

}  // namespace

TEST_CASE("tune picks the minimum time and ranks Ok configs by median") {
  Script s;
  s.ms = {{64, 0.9}, {128, 0.35}, {256, 0.21}, {512, 0.27}, {1024, 0.44}};
  s.data = {1.5, -2.25, 3.125, 7.0, 0.001};
  FakeTimer timer;
  timer.next = [&] { return s.ms.at(s.last); };
  Problem p = s.problem();
  TuneReport r = tune(p, blocks({64, 128, 256, 512, 1024}), timer);
  REQUIRE(r.found);
  CHECK(block(r.best) == 256);
  REQUIRE(r.ranked.size() == 5);
  std::vector<int64_t> order;
  for (const auto& c : r.ranked) order.push_back(block(c.config));
  CHECK(order == std::vector<int64_t>{256, 512, 128, 1024, 64});
  for (const auto& c : r.ranked) {
    CHECK(c.status == Status::Ok);
    CHECK(c.timing.reps == 3);
    CHECK(c.timing.median_ms == doctest::Approx(s.ms.at(block(c.config)) * 1.01));
  }
  CHECK(timer.calls == 5);
  CHECK(timer.resets == 15);            // reset before every timed repetition
  CHECK(s.launches == 5 + 15);          // one checked run per config, then the timed ones
  CHECK(s.compiled.size() == 5);
  CHECK(r.seconds >= r.compile_seconds);
  CHECK(r.compile_seconds > 0);
}

TEST_CASE("rejected configs are reported with their reasons, never thrown") {
  Script s;
  s.ms = {{16, 0.1}, {32, 0.2}, {64, 0.3}, {128, 0.4}, {256, 0.5}, {512, 0.6}, {1024, 0.05}};
  s.compile_throws = {16};
  s.internal_throws = {32};
  s.launch_throws = {1024};
  s.wrong_at = {{64, 3}};
  s.data = {0.5, 1.5, -3.0, 9.75, 11.0};
  FakeTimer timer;
  timer.next = [&] { return s.ms.at(s.last); };
  TuneOptions opts;
  opts.prune = [](const Config& c) { return block(c) != 512; };
  // No host reference: 128 and 256 agree, a majority of the three configs that ran (1024 fails at
  // launch), so 64, which differs from them, is rejected and its reason names the majority (128).
  TuneReport r = tune(s.problem(), blocks({16, 32, 128, 64, 256, 512, 1024}), timer, opts);
  REQUIRE(r.found);
  CHECK(block(r.best) == 128);
  std::map<int64_t, ConfigResult> by;
  for (const auto& c : r.ranked) by[block(c.config)] = c;
  CHECK(by[16].status == Status::CompileError);
  CHECK(by[16].reason.find("BLOCK 16 is too big") != std::string::npos);
  CHECK(by[32].status == Status::CompileError);
  CHECK(by[32].reason.find("internal error: broken invariant") != std::string::npos);
  CHECK(by[64].status == Status::WrongOutput);
  CHECK(by[64].reason.find("index 3") != std::string::npos);
  CHECK(by[64].reason.find("9.75") != std::string::npos);
  CHECK(by[64].reason.find("BLOCK=128") != std::string::npos);  // the majority's first config
  CHECK(by[512].status == Status::Pruned);
  CHECK(by[512].reason == "pruned by the kernel's predicate");
  CHECK(by[1024].status == Status::LaunchError);
  CHECK(by[1024].reason.find("OUT_OF_RESOURCES") != std::string::npos);
  for (int64_t b : {16, 32, 64, 512, 1024}) CHECK(by[b].timing.reps == 0);
  // Ok first, then the rejected in config order.
  CHECK(block(r.ranked[0].config) == 128);
  CHECK(block(r.ranked[1].config) == 256);
  std::vector<int64_t> rest;
  for (size_t i = 2; i < r.ranked.size(); ++i) rest.push_back(block(r.ranked[i].config));
  CHECK(rest == std::vector<int64_t>{16, 32, 64, 512, 1024});
  // Pruned configs are not compiled; the others that compile are timed.
  CHECK(std::count(s.compiled.begin(), s.compiled.end(), 512) == 0);
  CHECK(timer.calls == 2);
}

TEST_CASE("a config whose tiles cannot fit the registers is pruned with the compiler's reason, not failed") {
  Script s;
  s.ms = {{256, 0.2}, {1 << 20, 0.1}};
  s.too_large = {1 << 20};
  s.data = {1.0, 2.0};
  FakeTimer timer;
  timer.next = [&] { return s.ms.at(s.last); };
  TuneReport r = tune(s.problem(), blocks({1 << 20, 256}), timer);
  REQUIRE(r.found);
  CHECK(block(r.best) == 256);
  REQUIRE(r.ranked.size() == 2);
  CHECK(block(r.ranked[1].config) == 1 << 20);
  CHECK(r.ranked[1].status == Status::Pruned);
  CHECK(r.ranked[1].reason.find("needs 8192 registers") != std::string::npos);
  CHECK(timer.calls == 1);
}

TEST_CASE("outputs within tolerance are accepted; beyond it rejected") {
  Script s;
  s.ms = {{1, 1.0}, {2, 2.0}};
  s.data = {100.0, 200.0};
  s.wrong_at = {{2, 0}};  // differs by 1e-3 * 101 = 0.101 at index 0
  FakeTimer timer;
  timer.next = [&] { return s.ms.at(s.last); };
  Problem p = s.problem();
  p.rtol = 1e-3;  // allows 0.1 + atol
  p.atol = 0.0;
  CHECK(tune(p, blocks({1, 2}), timer).ranked[1].status == Status::WrongOutput);
  p.atol = 0.01;
  CHECK(tune(p, blocks({1, 2}), timer).ranked[1].status == Status::Ok);
}

TEST_CASE("no Ok config: found is false") {
  Script s;
  s.compile_throws = {1, 2};
  FakeTimer timer;
  timer.next = [] { return 1.0; };
  TuneReport r = tune(s.problem(), blocks({1, 2}), timer);
  CHECK_FALSE(r.found);
  CHECK(r.ranked.size() == 2);
  CHECK(timer.calls == 0);
}

TEST_CASE("progress is reported once per config, in order, with the result") {
  Script s;
  s.ms = {{8, 0.3}, {16, 0.2}, {32, 0.1}, {64, 0.4}};
  s.data = {1.0};
  s.compile_throws = {16};
  FakeTimer timer;
  timer.next = [&] { return s.ms.at(s.last); };
  std::vector<std::pair<int, std::string>> seen;
  TuneOptions opts;
  opts.on_progress = [&](const Progress& p) {
    CHECK(p.total == 4);
    REQUIRE(p.last);
    seen.push_back({p.done, p.last->config.str() + " " + std::string(status_name(p.last->status))});
  };
  tune(s.problem(), blocks({8, 16, 32, 64}), timer, opts);
  REQUIRE(seen.size() == 4);
  CHECK(seen[0] == std::pair<int, std::string>{1, "BLOCK=8 num_warps=4 num_stages=1 ok"});
  CHECK(seen[1] == std::pair<int, std::string>{2, "BLOCK=16 num_warps=4 num_stages=1 compile error"});
  CHECK(seen[3].first == 4);
}

TEST_CASE("configs compile on several threads; budget is split across configs") {
  Script s;
  std::vector<Config> cs;
  for (int64_t b = 1; b <= 24; ++b) {
    s.ms[b] = 1.0 / static_cast<double>(b);
    cs.push_back(Config{jit::tune::Meta{{"BLOCK", b}}, {1, 1}});
  }
  s.data = {3.0, 4.0};
  FakeTimer timer;
  timer.next = [&] { return s.ms.at(s.last); };
  TuneOptions opts;
  opts.compile_threads = 4;
  opts.budget_s = 1.2;
  TuneReport r = tune(s.problem(), cs, timer, opts);
  CHECK(block(r.best) == 24);
  CHECK(s.compiled.size() == 24);
  CHECK(s.compile_threads.size() >= 2);
  CHECK(timer.last_opts.budget_ms == doctest::Approx(1200.0 / 24));
}

TEST_CASE("duplicate configs and a problem without launch are errors") {
  Script s;
  FakeTimer timer;
  CHECK_THROWS_AS(tune(s.problem(), blocks({4, 4}), timer), std::invalid_argument);
  Problem p = s.problem();
  p.launch = nullptr;
  CHECK_THROWS_AS(tune(p, blocks({4}), timer), std::invalid_argument);
}

TEST_CASE("record stores every result of a report") {
  Script s;
  s.ms = {{1, 0.5}, {2, 0.25}};
  s.data = {1.0};
  s.compile_throws = {3};
  FakeTimer timer;
  timer.next = [&] { return s.ms.at(s.last); };
  TuneReport r = tune(s.problem(), blocks({1, 2, 3}), timer);
  Database db;
  const DbKey k{"fake", "n=1024;sig=f32", "dev", "sm_90", "0.1.0"};
  record(db, k, r);
  CHECK(db.results(k).size() == 3);
  CHECK(block(*db.best(k)) == 2);
}
