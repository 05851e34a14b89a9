// The autotuner on a real GPU: the event timer, tune() over configs of a sample kernel, and
// launch_tuned reusing the database. Each case (doctest suite "gpu") is a visible skip when the GPU
// is not in use, and a failure under TESSEL_TEST_REQUIRE_GPU=1 (common/gpu_gate.hpp).
#include <doctest/doctest.h>

#include <atomic>
#include <random>

#include "../common/gpu_gate.hpp"
#include "tessel/jit/tune/autotune.hpp"
#include "tessel/samples/elementwise_kernels.hpp"
#include "tune_test_util.hpp"

using namespace tessel;
using namespace tessel::jit::tune;
using tune_test::EnvVar;
using tune_test::TempDir;

namespace {

bool gpu_or_skip() {
  if (jit::Device::current().kind() == jit::BackendKind::Cuda) return true;
  tessel_test::skip_gpu_case("no GPU in use (" + jit::Device::current().describe() + "): autotuner GPU tests");
  return false;
}

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-10.0f, 10.0f);
  std::vector<float> v(n);
  for (float& f : v) f = d(rng);
  return v;
}

std::vector<Config> add_configs() {
  return {Config{jit::Meta{{"BLOCK", 256}}, {2, 1}}, Config{jit::Meta{{"BLOCK", 1024}}, {4, 1}},
          Config{jit::Meta{{"BLOCK", 4096}}, {8, 1}}};
}

jit::Grid grid_for(int64_t n, const jit::Meta& m) { return jit::Grid{jit::cdiv(n, m["BLOCK"])}; }

}  // namespace

TEST_CASE("GPU: the event timer times a kernel; tune() ranks 3 configs of add" * doctest::test_suite("gpu")) {
  if (!gpu_or_skip()) return;
  jit::Kernel k{"add", &samples::add_kernel, {"x", "y", "out", "n"}, jit::Meta{{"BLOCK", 1024}},
                Autotune{add_configs(), KeySpec{{{"n"}}}, {}, {}}};
  const int64_t n = (int64_t{1} << 22) + 3;
  auto hx = random_floats(n, 1), hy = random_floats(n, 2);
  jit::Array<float> x(hx), y(hy), out(n);
  Problem p = k.make_problem([n](const jit::Meta& m) { return grid_for(n, m); }, x, y, out, n);
  p.reset = [&out] { out.poison(); };
  p.output = [&out] {
    auto o = out.download();
    return std::vector<double>(o.begin(), o.end());
  };
  p.bytes = 3.0 * 4.0 * static_cast<double>(n);
  auto timer = make_gpu_timer();
  int progress = 0;
  TuneOptions opts;
  opts.on_progress = [&](const Progress&) { ++progress; };
  opts.timer.budget_ms = 50;
  TuneReport r = tune(p, add_configs(), *timer, opts);
  CHECK(progress == 3);
  REQUIRE(r.found);
  REQUIRE(r.ranked.size() == 3);
  for (const auto& c : r.ranked) {
    CHECK_MESSAGE(c.status == Status::Ok, c.config.str() << ": " << c.reason);
    CHECK(c.timing.reps >= 5);
    CHECK(c.timing.median_ms > 0);
    CHECK(c.timing.min_ms <= c.timing.median_ms);
    CHECK(c.timing.median_ms <= c.timing.max_ms);
    MESSAGE(c.config.str() << ": " << c.timing.median_ms * 1e3 << " us, " << p.bytes / c.timing.median_ms / 1e6
                           << " GB/s, " << c.timing.reps << " reps, spread " << c.timing.spread());
  }
  CHECK(r.ranked[0].timing.median_ms <= r.ranked[1].timing.median_ms);
  CHECK(r.ranked[1].timing.median_ms <= r.ranked[2].timing.median_ms);
  MESSAGE("tuned in " << r.seconds << " s (compiling " << r.compile_seconds << " s)");
  // A 48 MB vector add cannot run faster than ~10 TB/s on any GPU made so far: a sanity bound.
  CHECK(p.bytes / r.ranked[0].timing.median_ms / 1e9 < 10.0);
  // The last launch left a correct result.
  k.launch(grid_for(n, k.effective_meta(r.best.meta)), r.best.meta, r.best.opts, x, y, out, n);
  auto o = out.download();
  for (int64_t i = 0; i < n; i += 997) REQUIRE(o[i] == hx[i] + hy[i]);
}

TEST_CASE("GPU: launch_tuned tunes, saves, and a fresh Kernel reuses the database without tuning" *
          doctest::test_suite("gpu")) {
  if (!gpu_or_skip()) return;
  TempDir dir;
  EnvVar db("TESSEL_TUNE_DB", (dir.path / "tuning.json").string());
  std::atomic<int> timers{0};
  set_timer_factory([&timers] {
    ++timers;
    return make_gpu_timer();
  });
  const int64_t n = 1000003;
  auto hx = random_floats(n, 3), hy = random_floats(n, 4);
  jit::Array<float> x(hx), y(hy), out(n);
  auto grid = [n](const jit::Meta& m) { return grid_for(n, m); };
  Config first;
  {
    jit::Kernel k{"add", &samples::add_kernel, {"x", "y", "out", "n"}, jit::Meta{{"BLOCK", 1024}},
                  Autotune{add_configs(), KeySpec{{{"n"}}}, {}, {}}};
    first = k.launch_tuned(grid, x, y, out, n);
    CHECK(timers == 1);
    auto o = out.download();
    for (int64_t i = 0; i < n; i += 101) REQUIRE(o[i] == hx[i] + hy[i]);
  }
  Database saved = Database::load(dir.path / "tuning.json");
  const DbKey key = current_db_key("add", "n=1048576;sig=f32,f32,f32");
  CHECK(saved.results(key).size() == 3);
  CHECK(*saved.best(key) == first);
  MESSAGE("device " << key.device << " " << key.sm << ": chose " << first.str());
  {
    jit::Kernel k{"add", &samples::add_kernel, {"x", "y", "out", "n"}, jit::Meta{{"BLOCK", 1024}},
                  Autotune{add_configs(), KeySpec{{{"n"}}}, {}, {}}};
    out.poison();
    CHECK(k.launch_tuned(grid, x, y, out, n) == first);
    CHECK(timers == 1);
    auto o = out.download();
    for (int64_t i = 0; i < n; i += 101) REQUIRE(o[i] == hx[i] + hy[i]);
  }
  set_timer_factory(nullptr);
}

// ---- the output check on the GPU: every config against a host reference --------------------

namespace {

// out = x * (BLOCK >= 512 ? 2 : 1): a meta-parameter that changes the arithmetic.
void scale_by_block_kernel(lang::Ptr<lang::f32> x, lang::Ptr<lang::f32> out, lang::Int n, const lang::Meta& m) {
  using namespace tessel::lang;
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask) * (BLOCK >= 512 ? 2.0f : 1.0f), mask);
}

std::vector<double> x_as_reference(const HostArgs& a) { return a.array("x"); }

// First 512 (computes x * 2), then correct configs around 128, which under a grid of
// cdiv(n, 256) programs writes only half of out after a correct config filled all of it.
std::vector<Config> check_configs() {
  return {Config{jit::Meta{{"BLOCK", 512}}, {4, 1}}, Config{jit::Meta{{"BLOCK", 256}}, {4, 1}},
          Config{jit::Meta{{"BLOCK", 128}}, {4, 1}}, Config{jit::Meta{{"BLOCK", 256}}, {8, 1}},
          Config{jit::Meta{{"BLOCK", 256}}, {2, 1}}};
}

}  // namespace

TEST_CASE("GPU: tune() rejects a wrong first config and a partial writer, by reference and by majority" *
          doctest::test_suite("gpu")) {
  if (jit::Device::current().kind() != jit::BackendKind::Cuda) {
    tessel_test::skip_gpu_case("no GPU in use (" + jit::Device::current().describe() + "): the tuner's output check");
    return;
  }
  const int64_t n = (int64_t{1} << 20) + 37;
  auto h = random_floats(n, 21);
  jit::Array<float> x(h), out(n);
  auto timer = make_gpu_timer();
  TuneOptions opts;
  opts.timer.budget_ms = 5;
  for (bool with_reference : {true, false}) {
    CAPTURE(with_reference);
    Autotune at{check_configs(), KeySpec{{{"n"}}}, {}, {}};
    at.outputs = {"out"};
    at.reference = with_reference ? x_as_reference : nullptr;
    at.rtol = at.atol = 0;  // x * 1 is exact
    jit::Kernel k{"scale_by_block", &scale_by_block_kernel, {"x", "out", "n"}, jit::Meta{{"BLOCK", 256}}, at};
    Problem p = k.make_problem([n](const jit::Meta&) { return jit::Grid{jit::cdiv(n, 256)}; }, x, out, n);
    TuneReport r = tune(p, check_configs(), *timer, opts);
    REQUIRE(r.found);
    std::map<std::string, ConfigResult> by;
    for (const auto& c : r.ranked) by[c.config.str()] = c;
    const auto& first = by["BLOCK=512 num_warps=4 num_stages=1"];
    const auto& half = by["BLOCK=128 num_warps=4 num_stages=1"];
    CHECK(first.status == Status::WrongOutput);
    const std::string all = std::to_string(n);
    CHECK_MESSAGE(first.reason.find("at " + all + " of " + all + " values; the first at index 0:") != std::string::npos,
                  first.reason);
    // 4097 programs of 128 write the first 524416 elements only.
    CHECK(half.status == Status::WrongOutput);
    CHECK_MESSAGE(half.reason.find("at " + std::to_string(n - 524416) + " of " + all +
                                   " values; the first at index 524416: -nan here") != std::string::npos,
                  half.reason);
    CHECK((first.reason.find("the host reference") != std::string::npos) == with_reference);
    for (const char* ok : {"BLOCK=256 num_warps=4 num_stages=1", "BLOCK=256 num_warps=8 num_stages=1",
                           "BLOCK=256 num_warps=2 num_stages=1"}) {
      CHECK_MESSAGE(by[ok].status == Status::Ok, ok << ": " << by[ok].reason);
      CHECK(by[ok].timing.reps >= 5);
    }
    CHECK(r.best.meta["BLOCK"] == 256);
  }
}

TEST_CASE("GPU: launch_tuned with a reference skips a wrong first config; all wrong is reported" *
          doctest::test_suite("gpu")) {
  if (jit::Device::current().kind() != jit::BackendKind::Cuda) {
    tessel_test::skip_gpu_case("no GPU in use (" + jit::Device::current().describe() + "): the tuner's output check");
    return;
  }
  TempDir dir;
  EnvVar db("TESSEL_TUNE_DB", (dir.path / "tuning.json").string());
  set_timer_factory(nullptr);  // the default: the GPU event timer
  const int64_t n = 300007;
  auto h = random_floats(n, 22);
  jit::Array<float> x(h), out(n);
  auto grid = [n](const jit::Meta& m) { return grid_for(n, m); };
  const std::vector<Config> cs{Config{jit::Meta{{"BLOCK", 1024}}, {4, 1}}, Config{jit::Meta{{"BLOCK", 256}}, {4, 1}},
                               Config{jit::Meta{{"BLOCK", 128}}, {2, 1}}};
  Autotune at{cs, KeySpec{{{"n"}}}, {}, {}};
  at.outputs = {"out"};
  at.reference = x_as_reference;
  at.budget_s = 0.05;
  jit::Kernel k{"scale_by_block", &scale_by_block_kernel, {"x", "out", "n"}, jit::Meta{{"BLOCK", 256}}, at};
  out.poison();
  const Config chosen = k.launch_tuned(grid, x, out, n);
  CHECK(chosen != cs[0]);
  CHECK(out.download() == h);  // the launch after tuning used a correct config
  Database saved = Database::load(dir.path / "tuning.json");
  const DbKey key = current_db_key("scale_by_block", "n=524288;sig=f32,f32");
  REQUIRE(saved.result(key, cs[0]));
  CHECK(saved.result(key, cs[0])->status == Status::WrongOutput);
  CHECK(saved.result(key, cs[1])->status == Status::Ok);
  CHECK(saved.result(key, cs[2])->status == Status::Ok);
  // A reference no config meets (x * 3): nothing passes, tune() says so config by config.
  Problem p = k.make_problem(grid, x, out, n);
  p.reference = [&h] {
    Expected e;
    for (float v : h) e.values.push_back(3.0 * v);
    return e;
  };
  auto timer = make_gpu_timer();
  TuneReport r = tune(p, cs, *timer);
  CHECK_FALSE(r.found);
  for (const auto& c : r.ranked) {
    CHECK(c.status == Status::WrongOutput);
    CHECK_MESSAGE(c.reason.find("differs from the host reference at") != std::string::npos, c.reason);
    CHECK(c.timing.reps == 0);
  }
}
