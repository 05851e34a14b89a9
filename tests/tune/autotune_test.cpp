// Kernel autotuning on the CPU interpreter: launch_tuned's policy, the database between
// "processes" (fresh Kernel objects), restored inputs, declaration errors, threads.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <map>
#include <random>
#include <thread>

#include "tessel/ir/error.hpp"
#include "tessel/jit/registry.hpp"
#include "tessel/samples/elementwise_kernels.hpp"
#include "script_timer.hpp"
#include "tune_test_util.hpp"

using namespace tessel;
using namespace tessel::lang;
using namespace tessel::jit::tune;
using tune_test::EnvVar;
using tune_test::TempDir;
using tune_test::block_configs;
using tune_test::grid_for;
using tune_test::random_floats;
using tune_test::Script;
using tune_test::ScopedFactory;
using tune_test::ScriptTimer;

namespace {

// out = x * scale(BLOCK): 1 below 512, 2 from 512 on, so BLOCK >= 512 computes something else.
void block_dependent_kernel(Ptr<f32> x, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask) * (BLOCK >= 512 ? 2.0f : 1.0f), mask);
}

// x = x * 2 + 1 in place: runs accumulate unless the input is restored.
void in_place_kernel(Ptr<f32> x, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(x + offs, load(x + offs, mask) * 2.0f + 1.0f, mask);
}

Autotune add_tuning(std::vector<Config> cs) { return Autotune{std::move(cs), KeySpec{{{"n"}}}, {}, {}}; }

void check_add(jit::Kernel<Ptr<f32>, Ptr<f32>, Ptr<f32>, Int, const Meta&>& k, int64_t n, uint32_t seed,
               const Config& want) {
  auto hx = random_floats(n, seed), hy = random_floats(n, seed + 1);
  jit::Array<float> x(hx), y(hy), out(n);
  out.poison();
  const Config& got = k.launch_tuned([n](const jit::Meta& m) { return grid_for(n, m); }, x, y, out, n);
  CHECK(got == want);
  auto o = out.download();
  for (int64_t i = 0; i < n; ++i) REQUIRE(o[i] == hx[i] + hy[i]);
}

}  // namespace

TEST_CASE("launch_tuned on the interpreter without a timer uses the first config, untimed") {
  if (jit::Device::current().kind() != jit::BackendKind::Interpreter) {
    MESSAGE("not applicable on the GPU, where launch_tuned tunes (see gpu_test.cpp)");
    return;
  }
  TempDir dir;
  EnvVar db("TESSEL_TUNE_DB", (dir.path / "tuning.json").string());
  jit::Kernel k{"add", &samples::add_kernel, {"x", "y", "out", "n"}, jit::Meta{{"BLOCK", 1024}},
                add_tuning(block_configs({128, 64, 256}))};
  check_add(k, 1000, 1, block_configs({128})[0]);
  check_add(k, 77, 2, block_configs({128})[0]);
  CHECK_FALSE(std::filesystem::exists(dir.path / "tuning.json"));  // nothing tuned, nothing written
}

TEST_CASE("launch_tuned tunes once per key, saves, and a second process reuses the database") {
  TempDir dir;
  const auto path = dir.path / "tuning.json";
  EnvVar db("TESSEL_TUNE_DB", path.string());
  Script s;
  s.times = {0.3, 0.1, 0.2};  // the second config is fastest
  ScopedFactory factory(s);
  const auto cs = block_configs({128, 64, 256});
  {
    jit::Kernel k{"add", &samples::add_kernel, {"x", "y", "out", "n"}, jit::Meta{{"BLOCK", 1024}}, add_tuning(cs)};
    check_add(k, 1000, 3, cs[1]);
    CHECK(s.made == 1);
    CHECK(s.calls == 3);
    check_add(k, 1001, 4, cs[1]);  // same bucket (1024): the in-memory choice
    check_add(k, 513, 5, cs[1]);
    CHECK(s.made == 1);
    s.times = {0.1, 0.5, 0.2};
    check_add(k, 1025, 6, cs[0]);  // bucket 2048: tuned now
    CHECK(s.made == 2);
  }
  Database saved = Database::load(path);
  const DbKey k1024 = current_db_key("add", "n=1024;sig=f32,f32,f32");
  CHECK(k1024.device == jit::Device::current().name());  // "CPU interpreter" here, the GPU's name there
  CHECK(k1024.sm == jit::Device::current().arch());
  REQUIRE(saved.results(k1024).size() == 3);
  CHECK(*saved.best(k1024) == cs[1]);
  CHECK(*saved.best(current_db_key("add", "n=2048;sig=f32,f32,f32")) == cs[0]);
  {
    // A new Kernel object has no in-memory choices, like a second process.
    jit::Kernel k{"add", &samples::add_kernel, {"x", "y", "out", "n"}, jit::Meta{{"BLOCK", 1024}}, add_tuning(cs)};
    check_add(k, 700, 7, cs[1]);
    check_add(k, 2000, 8, cs[0]);
    CHECK(s.made == 2);  // no timer made: no tuning
  }
}

TEST_CASE("configs added later are tuned alone; earlier results are kept") {
  TempDir dir;
  EnvVar db("TESSEL_TUNE_DB", (dir.path / "tuning.json").string());
  Script s;
  s.times = {0.4, 0.3};
  ScopedFactory factory(s);
  const auto two = block_configs({128, 256});
  {
    jit::Kernel k{"add", &samples::add_kernel, {"x", "y", "out", "n"}, jit::Meta{{"BLOCK", 1024}}, add_tuning(two)};
    check_add(k, 100, 9, two[1]);
    CHECK(s.calls == 2);
  }
  s.calls = 0;
  s.times = {0.2};
  const auto three = block_configs({128, 256, 32});
  {
    jit::Kernel k{"add", &samples::add_kernel, {"x", "y", "out", "n"}, jit::Meta{{"BLOCK", 1024}}, add_tuning(three)};
    check_add(k, 100, 10, three[2]);  // only the new config timed (0.2 beats 0.3)
    CHECK(s.calls == 1);
  }
  Database saved = Database::load(dir.path / "tuning.json");
  CHECK(saved.results(current_db_key("add", "n=128;sig=f32,f32,f32")).size() == 3);
}

TEST_CASE("TESSEL_AUTOTUNE=0 never tunes; the database is still consulted") {
  TempDir dir;
  EnvVar db("TESSEL_TUNE_DB", (dir.path / "tuning.json").string());
  Script s;
  s.times = {0.5, 0.1};
  ScopedFactory factory(s);
  const auto cs = block_configs({128, 256});
  {
    EnvVar off("TESSEL_AUTOTUNE", "0");
    jit::Kernel k{"add", &samples::add_kernel, {"x", "y", "out", "n"}, jit::Meta{{"BLOCK", 1024}}, add_tuning(cs)};
    check_add(k, 300, 11, cs[0]);
    CHECK(s.made == 0);
  }
  Database d;
  d.record(current_db_key("add", "n=512;sig=f32,f32,f32"), ConfigResult{cs[1], Status::Ok, summarize({0.1}), ""});
  d.save(dir.path / "tuning.json");
  EnvVar off("TESSEL_AUTOTUNE", "0");
  jit::Kernel k{"add", &samples::add_kernel, {"x", "y", "out", "n"}, jit::Meta{{"BLOCK", 1024}}, add_tuning(cs)};
  check_add(k, 300, 12, cs[1]);
  CHECK(s.made == 0);
}

TEST_CASE("restore: a kernel that updates its input is tuned on restored inputs") {
  TempDir dir;
  EnvVar db("TESSEL_TUNE_DB", (dir.path / "tuning.json").string());
  Script s;
  s.times = {0.3, 0.2, 0.1};
  s.reps = 3;
  ScopedFactory factory(s);
  const auto cs = block_configs({32, 64, 128});
  jit::Kernel k{"in_place", &in_place_kernel, {"x", "n"}, jit::Meta{{"BLOCK", 32}},
                Autotune{cs, KeySpec{{{"n"}}}, {}, {"x"}}};
  const int64_t n = 333;
  auto h = random_floats(n, 13);
  jit::Array<float> x(h);
  CHECK(k.launch_tuned([n](const jit::Meta& m) { return grid_for(n, m); }, x, n) == cs[2]);
  CHECK(s.runs == 9);  // the kernel really ran many times while tuning
  auto o = x.download();
  for (int64_t i = 0; i < n; ++i) REQUIRE(o[i] == h[i] * 2.0f + 1.0f);  // applied exactly once
  // A restore parameter passed as a raw pointer has no known size.
  jit::Kernel k2{"in_place", &in_place_kernel, {"x", "n"}, jit::Meta{{"BLOCK", 32}},
                 Autotune{cs, KeySpec{{{"n"}}}, {}, {"x"}}};
  CHECK_THROWS_AS(k2.launch_tuned([n](const jit::Meta& m) { return grid_for(n, m); },
                                  jit::DevicePtr<float>{x.address()}, n + 1000),
                  CompileError);
}

TEST_CASE("make_problem wires compile, launch and outputs of a real kernel into tune()") {
  const auto cs = block_configs({128, 3, 256, 512, 64});  // 3: not a power of two; 512: computes x * 2
  jit::Kernel k{"block_dependent", &block_dependent_kernel, {"x", "out", "n"}, jit::Meta{{"BLOCK", 128}},
                Autotune{cs, KeySpec{{{"n", Bucket::Exact}}}, {}, {}}};
  const int64_t n = 1001;
  auto h = random_floats(n, 14);
  jit::Array<float> x(h), out(n);
  Problem p = k.make_problem([n](const jit::Meta& m) { return grid_for(n, m); }, x, out, n);
  CHECK(p.kernel == "block_dependent");
  CHECK(p.key == "n=1001;sig=f32,f32");
  p.reset = [&out] { out.poison(); };
  p.output = [&out] {
    auto o = out.download();
    return std::vector<double>(o.begin(), o.end());
  };
  Script s;
  s.times = {0.5, 0.25, 0.125};
  ScriptTimer timer(s);
  TuneOptions opts;
  opts.prune = [](const Config& c) { return c.meta["BLOCK"] != 64; };
  TuneReport r = tune(p, cs, timer, opts);
  REQUIRE(r.found);
  CHECK(r.best == cs[2]);  // 128 took 0.5, 256 0.25; 512 was rejected before timing
  std::map<int64_t, ConfigResult> by;
  for (const auto& c : r.ranked) by[c.config.meta["BLOCK"]] = c;
  CHECK(by[128].status == Status::Ok);
  CHECK(by[256].status == Status::Ok);
  CHECK(by[3].status == Status::CompileError);
  CHECK(by[3].reason.find("power of two") != std::string::npos);
  CHECK(by[512].status == Status::WrongOutput);
  CHECK(by[512].reason.find("index 0") != std::string::npos);
  CHECK(by[64].status == Status::Pruned);
  CHECK(s.calls == 2);
}

TEST_CASE("the host reference sees outputs poisoned, as a run does, and restored outputs as they were") {
  // out is an output and not restored: its contents before a run mean nothing (they may never have
  // been written, which compute-sanitizer's initcheck reports), so the reference reads it poisoned.
  // acc is an output that is restored (an accumulator): the reference needs its starting values.
  const auto cs = block_configs({128});
  Autotune at{cs, KeySpec{{{"n", Bucket::Exact}}}, {}, {"x"}};
  at.outputs = {"out", "x"};
  std::vector<double> seen_out, seen_x;
  at.reference = [&](const HostArgs& a) {
    seen_out = a.array("out");
    seen_x = a.array("x");
    return seen_x;
  };
  jit::Kernel k{"block_dependent", &block_dependent_kernel, {"x", "out", "n"}, jit::Meta{{"BLOCK", 128}}, at};
  const int64_t n = 301;
  auto h = random_floats(n, 15);
  jit::Array<float> x(h), out(std::vector<float>(n, 7.0f));
  Problem p = k.make_problem([n](const jit::Meta& m) { return grid_for(n, m); }, x, out, n);
  REQUIRE(p.reference);
  p.reference();
  REQUIRE(seen_out.size() == static_cast<size_t>(n));
  for (double v : seen_out) REQUIRE(std::isnan(v));
  REQUIRE(seen_x.size() == static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) REQUIRE(seen_x[i] == h[i]);
}

TEST_CASE("autotune declarations are checked") {
  auto make = [](Autotune at) {
    jit::Kernel k{"add", &samples::add_kernel, {"x", "y", "out", "n"}, jit::Meta{{"BLOCK", 1024}}};
    k.autotune(std::move(at));
  };
  auto why = [&](Autotune at) {
    try {
      make(std::move(at));
    } catch (const CompileError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const auto cs = block_configs({128, 256});
  CHECK(why(Autotune{{}, KeySpec{{{"n"}}}, {}, {}}).find("at least one config") != std::string::npos);
  CHECK(why(Autotune{block_configs({128, 128}), KeySpec{{{"n"}}}, {}, {}}).find("given twice") != std::string::npos);
  CHECK(why(Autotune{cs, KeySpec{{{"m"}}}, {}, {}}).find("'m' is not a parameter (x, y, out, n)") != std::string::npos);
  CHECK(why(Autotune{cs, KeySpec{{{"x"}}}, {}, {}}).find("must be an integer") != std::string::npos);
  CHECK(why(Autotune{cs, KeySpec{{{"n"}}}, {}, {"n"}}).find("must be a pointer") != std::string::npos);
  CHECK(why(Autotune{cs, KeySpec{{{"n"}}}, {}, {"out"}}) == "no error");
  jit::Kernel plain{"add", &samples::add_kernel, {"x", "y", "out", "n"}, jit::Meta{{"BLOCK", 1024}}};
  jit::Array<float> a(4);
  CHECK_THROWS_AS(plain.launch_tuned([](const jit::Meta&) { return jit::Grid{1}; }, a, a, a, 4), CompileError);
  CHECK(plain.autotune_spec() == nullptr);
}

TEST_CASE("a registry entry carries the kernel's configs and key") {
  const auto cs = block_configs({128, 256});
  jit::Kernel k{"add", &samples::add_kernel, {"x", "y", "out", "n"}, jit::Meta{{"BLOCK", 1024}},
                Autotune{cs, KeySpec{{{"n", Bucket::Exact}}}, {}, {}}};
  jit::KernelEntry e = jit::entry_of(k, "x + y");
  CHECK(e.configs == cs);
  REQUIRE(e.key.params.size() == 1);
  CHECK(e.key.params[0].bucket == Bucket::Exact);
  CHECK(signature_of(e) == "f32,f32,f32");
  jit::Kernel plain{"add", &samples::add_kernel, {"x", "y", "out", "n"}, jit::Meta{{"BLOCK", 1024}}};
  CHECK(jit::entry_of(plain, "x + y").configs.empty());
}

TEST_CASE("concurrent launch_tuned calls tune a key once and all compute correctly") {
  TempDir dir;
  EnvVar db("TESSEL_TUNE_DB", (dir.path / "tuning.json").string());
  Script s;
  s.times = {0.2, 0.1};
  ScopedFactory factory(s);
  const auto cs = block_configs({64, 128});
  jit::Kernel k{"add", &samples::add_kernel, {"x", "y", "out", "n"}, jit::Meta{{"BLOCK", 1024}}, add_tuning(cs)};
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      const int64_t n = 200 + t;
      auto hx = random_floats(n, 20 + t), hy = random_floats(n, 40 + t);
      jit::Array<float> x(hx), y(hy), out(n);
      const Config& c = k.launch_tuned([n](const jit::Meta& m) { return grid_for(n, m); }, x, y, out, n);
      auto o = out.download();
      bool ok = c == cs[1];
      for (int64_t i = 0; i < n; ++i) ok = ok && o[i] == hx[i] + hy[i];
      good += ok;
    });
  for (auto& t : threads) t.join();
  CHECK(good == 4);
  CHECK(s.made == 1);
}

TEST_CASE("the GPU timer refuses the interpreter; the host timer times anything") {
  if (jit::Device::current().kind() == jit::BackendKind::Interpreter) {
    try {
      make_gpu_timer();
      FAIL("expected an error");
    } catch (const std::runtime_error& e) {
      CHECK(std::string(e.what()).find("needs the GPU") != std::string::npos);
    }
  }
  auto t = make_host_timer();
  int runs = 0, resets = 0;
  TimerOptions o;
  o.budget_ms = 1;
  o.min_reps = 4;
  o.warmup = 1;
  Timing r = t->time([&] { ++runs; }, [&] { ++resets; }, o);
  CHECK(r.reps >= 4);
  CHECK(runs == r.reps + 1);
  CHECK(resets == runs);
  CHECK(r.min_ms <= r.median_ms);
  CHECK(r.median_ms <= r.max_ms);
}

TEST_CASE("launch_tuned: the prune predicate and failing configs are recorded, never chosen") {
  TempDir dir;
  const auto path = dir.path / "tuning.json";
  EnvVar db("TESSEL_TUNE_DB", path.string());
  Script s;
  s.times = {0.4, 0.3};  // the two configs that get timed: 128, then 512
  ScopedFactory factory(s);
  const auto cs = block_configs({128, 3, 64, 512});  // 3 fails to compile; 64 is pruned
  jit::Kernel k{"add", &samples::add_kernel, {"x", "y", "out", "n"}, jit::Meta{{"BLOCK", 1024}},
                Autotune{cs, KeySpec{{{"n"}}}, [](const Config& c) { return c.meta["BLOCK"] != 64; }, {}}};
  check_add(k, 2000, 30, cs[3]);
  CHECK(s.calls == 2);
  Database saved = Database::load(path);
  const DbKey key = current_db_key("add", "n=2048;sig=f32,f32,f32");
  REQUIRE(saved.results(key).size() == 4);
  CHECK(saved.result(key, cs[1])->status == Status::CompileError);
  CHECK(saved.result(key, cs[1])->reason.find("power of two") != std::string::npos);
  CHECK(saved.result(key, cs[2])->status == Status::Pruned);
  CHECK(saved.result(key, cs[3])->status == Status::Ok);
}

namespace {
struct FakeExecutable final : jit::Executable {
  jit::ExecutableInfo i;
  void launch(jit::Grid, std::span<const jit::RawArg>, jit::StreamRef) override {}
  const jit::ExecutableInfo& info() const override { return i; }
};
}  // namespace

TEST_CASE("configs whose code uses local memory (spills) are rejected unless allowed") {
  FakeExecutable e;
  Autotune at;
  e.i.local_bytes = -1;  // unknown (the interpreter)
  CHECK_NOTHROW(jit::tune::detail::check_resources(at, e));
  e.i.local_bytes = 0;
  CHECK_NOTHROW(jit::tune::detail::check_resources(at, e));
  e.i.local_bytes = 48;
  try {
    jit::tune::detail::check_resources(at, e);
    FAIL("expected a rejection");
  } catch (const ConfigPruned& err) {  // tune() records it as pruned, not as a compile error
    CHECK(std::string(err.what()) == "spills (48 bytes of local memory per thread)");
  }
  at.prune_spills = false;
  CHECK_NOTHROW(jit::tune::detail::check_resources(at, e));
}

TEST_CASE("launch_tuned: Autotune::outputs rejects a config that computes something else") {
  TempDir dir;
  const auto path = dir.path / "tuning.json";
  EnvVar db("TESSEL_TUNE_DB", path.string());
  Script s;
  s.times = {0.5, 0.25};  // 128, then 256; 512 is rejected before it is timed
  ScopedFactory factory(s);
  const auto cs = block_configs({128, 512, 256});
  Autotune at{cs, KeySpec{{{"n"}}}, {}, {}};
  at.outputs = {"out"};
  jit::Kernel k{"block_dependent", &block_dependent_kernel, {"x", "out", "n"}, jit::Meta{{"BLOCK", 128}}, at};
  const int64_t n = 999;
  auto h = random_floats(n, 31);
  jit::Array<float> x(h), out(n);
  CHECK(k.launch_tuned([n](const jit::Meta& m) { return grid_for(n, m); }, x, out, n) == cs[2]);
  CHECK(s.calls == 2);
  CHECK(out.download() == h);
  Database saved = Database::load(path);
  const auto r = saved.result(current_db_key("block_dependent", "n=1024;sig=f32,f32"), cs[1]);
  REQUIRE(r);
  CHECK(r->status == Status::WrongOutput);
  CHECK(r->reason.find("index 0") != std::string::npos);
  // outputs must name Arrays of numbers.
  jit::Kernel k2{"block_dependent", &block_dependent_kernel, {"x", "out", "n"}, jit::Meta{{"BLOCK", 128}}, at};
  CHECK_THROWS_AS(k2.make_problem([n](const jit::Meta& m) { return grid_for(n, m); }, x,
                                  jit::DevicePtr<float>{out.address()}, n),
                  CompileError);
  at.outputs = {"n"};
  CHECK_THROWS_AS(k2.autotune(at), CompileError);
}
