// The autotuner on a real GPU: the event timer, tune() over configs of a sample kernel, and
// launch_tuned reusing the database. Each case says SKIPPED and returns when the GPU is not in use.
#include <doctest/doctest.h>

#include <atomic>
#include <random>

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
  MESSAGE("SKIPPED (no GPU in use: " << jit::Device::current().describe() << "): autotuner GPU tests");
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

TEST_CASE("GPU: the event timer times a kernel; tune() ranks 3 configs of add") {
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

TEST_CASE("GPU: launch_tuned tunes, saves, and a fresh Kernel reuses the database without tuning") {
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
