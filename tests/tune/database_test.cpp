// The tuning database: round trip, per-config records, merge, atomic merging saves, errors.
#include <doctest/doctest.h>

#include <atomic>
#include <fstream>
#include <thread>
#include <random>

#include "tessel/jit/cache.hpp"
#include "tessel/jit/tune/database.hpp"
#include "tune_test_util.hpp"

using namespace tessel::jit::tune;
using tune_test::EnvVar;
using tune_test::TempDir;

namespace {
DbKey key_of(std::string kernel, std::string key, std::string device = "NVIDIA H200") {
  return {std::move(kernel), std::move(key), std::move(device), "sm_90", tessel::jit::cache::tessel_version()};
}
ConfigResult ok(int block, double ms) {
  ConfigResult r;
  r.config = Config{tessel::jit::tune::Meta{{"BLOCK", block}}, {4, 1}};
  r.timing = summarize({ms * 1.02, ms, ms * 1.5, ms * 0.97, ms * 1.01});
  return r;
}
ConfigResult failed(int block, Status s, std::string why) {
  ConfigResult r;
  r.config = Config{tessel::jit::tune::Meta{{"BLOCK", block}}, {2, 1}};
  r.status = s;
  r.reason = std::move(why);
  return r;
}
}  // namespace

TEST_CASE("status names are fixed and parse back") {
  CHECK(status_name(Status::Ok) == "ok");
  CHECK(status_name(Status::Pruned) == "pruned");
  CHECK(status_name(Status::CompileError) == "compile error");
  CHECK(status_name(Status::LaunchError) == "launch error");
  CHECK(status_name(Status::WrongOutput) == "wrong output");
  for (Status s : {Status::Ok, Status::Pruned, Status::CompileError, Status::LaunchError, Status::WrongOutput})
    CHECK(parse_status(status_name(s)) == s);
  CHECK_THROWS_AS(parse_status("fine"), std::invalid_argument);
}

TEST_CASE("timings summarize to median, min, max and spread") {
  Timing t = summarize({3.0, 1.0, 2.0, 10.0});
  CHECK(t.median_ms == doctest::Approx(2.5));
  CHECK(t.min_ms == 1.0);
  CHECK(t.max_ms == 10.0);
  CHECK(t.reps == 4);
  CHECK(t.spread() == doctest::Approx(9.0 / 2.5));
  CHECK(summarize({}).reps == 0);
  CHECK(Timing{}.spread() == 0);
}

TEST_CASE("best is the fastest Ok config; results are ranked with failures last") {
  Database db;
  const DbKey k = key_of("add", "n=1024;sig=f32,f32,f32");
  db.record(k, failed(64, Status::CompileError, "too big"));
  db.record(k, ok(256, 0.031));
  db.record(k, ok(1024, 0.012));
  db.record(k, ok(128, 0.050));
  db.record(k, failed(32, Status::WrongOutput, "output differs at index 3"));
  REQUIRE(db.best(k));
  CHECK(db.best(k)->str() == "BLOCK=1024 num_warps=4 num_stages=1");
  auto rs = db.results(k);
  REQUIRE(rs.size() == 5);
  CHECK(rs[0].config.meta["BLOCK"] == 1024);
  CHECK(rs[1].config.meta["BLOCK"] == 256);
  CHECK(rs[2].config.meta["BLOCK"] == 128);
  CHECK(rs[3].status != Status::Ok);
  CHECK(rs[4].status != Status::Ok);
  // Restricted to the kernel's current configs.
  CHECK(db.best(k, {ok(256, 0).config, ok(128, 0).config})->meta["BLOCK"] == 256);
  CHECK_FALSE(db.best(k, {failed(64, Status::Ok, "").config}));
  CHECK_FALSE(db.best(key_of("add", "n=2048;sig=f32,f32,f32")));
  CHECK(db.results(key_of("other", "x")).empty());
}

TEST_CASE("recording one config keeps the other configs' results") {
  Database db;
  const DbKey k = key_of("add", "n=4096;sig=f32,f32,f32");
  db.record(k, ok(128, 0.5));
  db.record(k, ok(256, 0.4));
  db.record(k, ok(512, 0.3));  // a config added later
  db.record(k, ok(128, 0.2));  // re-measured: replaces only its own result
  CHECK(db.results(k).size() == 3);
  CHECK(db.best(k)->meta["BLOCK"] == 128);
  CHECK(db.result(k, ok(256, 0).config)->timing.median_ms == doctest::Approx(0.4 * 1.01));
}

TEST_CASE("keys include kernel, key, device, sm and version and are sorted") {
  Database db;
  db.record(key_of("softmax", "rows=8;sig=f32"), ok(1, 1));
  db.record(key_of("add", "n=2;sig=f32", "NVIDIA H100"), ok(1, 1));
  db.record(key_of("add", "n=2;sig=f32", "NVIDIA H200"), ok(2, 1));
  DbKey old = key_of("add", "n=2;sig=f32", "NVIDIA H200");
  old.version = "0.0.1";
  db.record(old, ok(4, 1));
  auto ks = db.keys();
  REQUIRE(ks.size() == 4);
  CHECK(ks[0].device == "NVIDIA H100");
  CHECK(ks[1].version == "0.0.1");
  CHECK(ks[3].kernel == "softmax");
  CHECK(db.best(key_of("add", "n=2;sig=f32", "NVIDIA H200"))->meta["BLOCK"] == 2);
  CHECK(db.best(old)->meta["BLOCK"] == 4);
}

TEST_CASE("JSON round trip keeps every field, timings exactly") {
  std::mt19937 rng(11);
  Database db;
  for (int i = 0; i < 30; ++i) {
    const DbKey k = key_of(i % 2 ? "add" : "softmax", "n=" + std::to_string(1 << (i % 7)) + ";sig=f32",
                           i % 3 ? "NVIDIA H200" : "NVIDIA A100");
    db.record(k, ok(16 << (rng() % 6), std::uniform_real_distribution<double>(0.001, 3.0)(rng)));
    if (i % 5 == 0) db.record(k, failed(8, Status::LaunchError, "CUDA_ERROR_INVALID_VALUE \"quoted\"\n"));
  }
  Database back = Database::from_json(db.to_json(), "test");
  CHECK(back.to_json() == db.to_json());
  REQUIRE(back.keys() == db.keys());
  for (const DbKey& k : db.keys()) CHECK(back.results(k) == db.results(k));
}

TEST_CASE("merge: the other database wins per (key, config), keeps the rest") {
  const DbKey k = key_of("add", "n=8;sig=f32");
  const DbKey k2 = key_of("add", "n=16;sig=f32");
  Database a, b;
  a.record(k, ok(128, 1.0));
  a.record(k, ok(256, 2.0));
  b.record(k, ok(256, 0.5));
  b.record(k2, ok(64, 0.1));
  a.merge(b);
  CHECK(a.results(k).size() == 2);
  CHECK(a.best(k)->meta["BLOCK"] == 256);
  CHECK(a.best(k2)->meta["BLOCK"] == 64);
}

TEST_CASE("save and load: missing file is empty, saves merge with what is on disk") {
  TempDir dir;
  const auto path = dir.path / "sub" / "tuning.json";
  CHECK(Database::load(path).empty());
  const DbKey k = key_of("add", "n=8;sig=f32");
  Database first;
  first.record(k, ok(128, 1.0));
  first.save(path);
  // A second writer that never saw the first one's result adds its own: both survive.
  Database second;
  second.record(k, ok(512, 0.25));
  second.record(key_of("relu", "n=8;sig=f32"), ok(32, 0.5));
  second.save(path);
  Database back = Database::load(path);
  CHECK(back.results(k).size() == 2);
  CHECK(back.best(k)->meta["BLOCK"] == 512);
  CHECK(back.keys().size() == 2);
  // No temporary files are left next to it.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(path.parent_path()))
    files += e.path().filename().string().find(".tmp-") == std::string::npos ? 0 : 100;
  CHECK(files == 0);
}

TEST_CASE("a malformed database is an error naming the file; saving over it fails the same way") {
  TempDir dir;
  const auto path = dir.path / "tuning.json";
  Database db;
  db.record(key_of("add", "n=8;sig=f32"), ok(128, 1.0));
  db.save(path);
  const std::string good = db.to_json();
  for (const std::string& bad : {good.substr(0, good.size() / 2), std::string("{\"format\": 99, \"entries\": []}"),
                                 std::string("[]"), std::string("{\"format\": 1, \"entries\": [{\"kernel\": 1}]}")}) {
    std::ofstream(path, std::ios::trunc) << bad;
    try {
      Database::load(path);
      FAIL("expected an error for: " << bad);
    } catch (const std::runtime_error& e) {
      CHECK(std::string(e.what()).find(path.string()) != std::string::npos);
    }
    CHECK_THROWS_AS(db.save(path), std::runtime_error);
    CHECK(tune_test::fs::file_size(path) == bad.size());  // left as it was, not half-replaced
  }
}

TEST_CASE("the default path follows TESSEL_TUNE_DB, else the cache directory") {
  {
    EnvVar e("TESSEL_TUNE_DB", "/tmp/x/my-tuning.json");
    CHECK(Database::default_path() == "/tmp/x/my-tuning.json");
  }
  EnvVar e("TESSEL_TUNE_DB", std::nullopt);
  EnvVar c("TESSEL_CACHE_DIR", "/tmp/some-cache");
  CHECK(Database::default_path() == "/tmp/some-cache/tuning.json");
}

TEST_CASE("concurrent savers keep each other's results; readers never see a partial file") {
  TempDir dir;
  const auto path = dir.path / "tuning.json";
  std::atomic<bool> done{false};
  std::atomic<int> reads{0}, bad_reads{0};
  std::thread reader([&] {
    while (!done) {
      try {
        Database::load(path);
        ++reads;
      } catch (const std::exception&) {
        ++bad_reads;
      }
    }
  });
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; ++w)
    writers.emplace_back([&, w] {
      for (int i = 0; i < 10; ++i) {
        Database db;
        db.record(key_of("k" + std::to_string(w), "n=" + std::to_string(i) + ";sig=f32"), ok(64 << w, 0.1 * (i + 1)));
        db.save(path);
      }
    });
  for (auto& t : writers) t.join();
  done = true;
  reader.join();
  CHECK(bad_reads == 0);
  CHECK(reads > 0);
  Database all = Database::load(path);
  CHECK(all.keys().size() == 40);
  CHECK(all.best(key_of("k3", "n=9;sig=f32"))->meta["BLOCK"] == 512);
}
