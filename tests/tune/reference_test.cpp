// The tuner's output check: every config against a host reference (or, without one, a strict
// majority), so a wrong first config is rejected rather than trusted; on the CPU interpreter.
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <set>

#include "tessel/ir/error.hpp"
#include "tessel/jit/tune/tuner.hpp"
#include "tessel/tessel.hpp"
#include "tune_test_util.hpp"

using namespace tessel;
using namespace tessel::lang;
using namespace tessel::jit::tune;
using tune_test::EnvVar;
using tune_test::FakeTimer;
using tune_test::TempDir;

namespace {

int64_t block(const Config& c) { return c.meta["BLOCK"]; }

std::vector<Config> blocks(std::initializer_list<int64_t> bs) {
  std::vector<Config> cs;
  for (int64_t b : bs) cs.push_back(Config{jit::Meta{{"BLOCK", b}}, {4, 1}});
  return cs;
}

std::vector<double> random_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-8.0, 8.0);
  std::vector<double> v(n);
  for (double& x : v) x = d(rng);
  return v;
}

// A fake kernel over a host "device buffer": each config writes `want` into `out`, except that a
// config in `wrong` adds 0.5 at every third element (arithmetic that depends on the config) and
// one in `partial` writes only the first half (as a too-small grid would).
struct Fake {
  std::vector<double> want;
  std::vector<double> out;
  std::set<int64_t> wrong, partial;
  std::map<int64_t, double> ms;  // time per BLOCK
  int64_t last = 0;
  int references = 0, launches = 0, launches_before_reference = -1;

  explicit Fake(size_t n, uint32_t seed = 1) : want(random_values(n, seed)), out(n, 0.0) {}

  Problem problem(bool with_reference = true) {
    Problem p;
    p.kernel = "fake";
    p.key = "n=" + std::to_string(want.size());
    p.compile = [](const Config&) {};
    p.launch = [this](const Config& c) {
      last = block(c);
      ++launches;
      const size_t end = partial.count(last) ? out.size() / 2 : out.size();
      for (size_t i = 0; i < end; ++i) out[i] = want[i] + (wrong.count(last) && i % 3 == 1 ? 0.5 : 0.0);
    };
    p.output = [this] { return out; };
    p.poison = [this] { std::fill(out.begin(), out.end(), std::nan("")); };
    if (with_reference)
      p.reference = [this] {
        ++references;
        launches_before_reference = launches;
        return Expected{want, {}};
      };
    return p;
  }
  // A timer that reports the time of the config launched last.
  FakeTimer timer() {
    FakeTimer t;
    t.next = [this] { return ms.at(last); };
    return t;
  }
};

std::map<int64_t, ConfigResult> by_block(const TuneReport& r) {
  std::map<int64_t, ConfigResult> m;
  for (const auto& c : r.ranked) m[block(c.config)] = c;
  return m;
}

}  // namespace

TEST_CASE("a wrong first config is rejected by the host reference and a correct later one chosen") {
  Fake f(1001);
  f.wrong = {64};
  f.ms = {{64, 0.05}, {128, 0.3}, {256, 0.2}, {512, 0.4}};  // the wrong one is fastest
  FakeTimer timer = f.timer();
  std::vector<std::string> seen;
  TuneOptions opts;
  opts.on_progress = [&](const Progress& p) { seen.push_back(std::string(status_name(p.last->status))); };
  TuneReport r = tune(f.problem(), blocks({64, 128, 256, 512}), timer, opts);
  REQUIRE(r.found);
  CHECK(block(r.best) == 256);
  auto by = by_block(r);
  CHECK(by[64].status == Status::WrongOutput);
  CHECK_MESSAGE(by[64].reason.find("differs from the host reference at 334 of 1001 values") != std::string::npos,
                by[64].reason);
  CHECK_MESSAGE(by[64].reason.find("index 1:") != std::string::npos, by[64].reason);
  CHECK(by[64].timing.reps == 0);
  for (int64_t b : {128, 256, 512}) CHECK(by[b].status == Status::Ok);
  CHECK(timer.calls == 3);  // the wrong config is never timed
  CHECK(f.references == 1);
  CHECK(f.launches_before_reference == 0);  // computed before any config ran
  CHECK(seen == std::vector<std::string>{"wrong output", "ok", "ok", "ok"});
}

TEST_CASE("a config that writes only part of the output fails on its poisoned half") {
  Fake f(400, 2);
  f.partial = {128};
  f.ms = {{64, 0.3}, {128, 0.1}, {256, 0.2}};
  FakeTimer timer = f.timer();
  // 64 runs first and leaves a correct output behind: without poison, 128 would pass on it.
  TuneReport r = tune(f.problem(), blocks({64, 128, 256}), timer);
  auto by = by_block(r);
  CHECK(by[128].status == Status::WrongOutput);
  CHECK_MESSAGE(by[128].reason.find("at 200 of 400 values; the first at index 200: nan here") != std::string::npos,
                by[128].reason);
  CHECK(block(r.best) == 256);
  // The partial config first: it is not the yardstick either.
  f.partial = {64};
  TuneReport r2 = tune(f.problem(), blocks({64, 128, 256}), timer);
  CHECK(by_block(r2)[64].status == Status::WrongOutput);
  CHECK(block(r2.best) == 128);
}

TEST_CASE("every config wrong: found is false and each reason names the host reference") {
  Fake f(50, 3);
  f.wrong = {1, 2, 3};
  f.ms = {{1, 0.1}, {2, 0.2}, {3, 0.3}};
  FakeTimer timer = f.timer();
  TuneReport r = tune(f.problem(), blocks({1, 2, 3}), timer);
  CHECK_FALSE(r.found);
  REQUIRE(r.ranked.size() == 3);
  for (const auto& c : r.ranked) {
    CHECK(c.status == Status::WrongOutput);
    CHECK_MESSAGE(c.reason.find("differs from the host reference at 17 of 50 values") != std::string::npos, c.reason);
  }
  CHECK(timer.calls == 0);
  Database db;
  const DbKey k{"fake", "n=50", "dev", "sm_90", "0.1.0"};
  record(db, k, r);
  CHECK_FALSE(db.best(k));
}

TEST_CASE("per-value tolerances of the reference replace rtol and atol") {
  Fake f(10, 4);
  f.wrong = {2};  // +0.5 at indices 1, 4, 7
  f.ms = {{1, 0.2}, {2, 0.1}};
  FakeTimer timer = f.timer();
  Problem p = f.problem();
  p.rtol = p.atol = 0;
  p.reference = [&] { return Expected{f.want, std::vector<double>(10, 0.6)}; };
  CHECK(tune(p, blocks({1, 2}), timer).found);
  CHECK(block(tune(p, blocks({1, 2}), timer).best) == 2);  // within 0.6 everywhere
  p.reference = [&] {
    std::vector<double> tol(10, 0.6);
    tol[7] = 0.4;
    return Expected{f.want, tol};
  };
  auto by = by_block(tune(p, blocks({1, 2}), timer));
  CHECK(by[2].status == Status::WrongOutput);
  CHECK_MESSAGE(by[2].reason.find("at 1 of 10 values; the first at index 7") != std::string::npos, by[2].reason);
  CHECK_MESSAGE(by[2].reason.find("(tolerance 0.4)") != std::string::npos, by[2].reason);
  CHECK(by[1].status == Status::Ok);
}

TEST_CASE("a reference that fails or does not fit is the problem's error, not a config's") {
  Fake f(5);
  f.ms = {{1, 0.1}};
  FakeTimer timer = f.timer();
  Problem p = f.problem();
  p.reference = []() -> Expected { throw std::runtime_error("no host memory"); };
  try {
    tune(p, blocks({1}), timer);
    FAIL("expected an error");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == "tune fake: the host reference failed: no host memory");
  }
  p.reference = [&] { return Expected{f.want, {1.0, 2.0}}; };
  CHECK_THROWS_AS(tune(p, blocks({1}), timer), std::invalid_argument);
  p = f.problem();
  p.output = nullptr;
  CHECK_THROWS_AS(tune(p, blocks({1}), timer), std::invalid_argument);
  // A reference of another length: every config is wrong, with the sizes named.
  p = f.problem();
  p.reference = [&] { return Expected{std::vector<double>(4, 0.0), {}}; };
  TuneReport r = tune(p, blocks({1}), timer);
  CHECK(r.ranked[0].status == Status::WrongOutput);
  CHECK(r.ranked[0].reason == "output has 5 values, the host reference 4");
  // Nothing compiled: the reference is never computed.
  Fake g(5);
  Problem q = g.problem();
  q.compile = [](const Config&) { throw CompileError({}, "no"); };
  CHECK_FALSE(tune(q, blocks({1, 2}), timer).found);
  CHECK(g.references == 0);
}

TEST_CASE("without a reference, a wrong first config is outvoted by the majority") {
  Fake f(300, 5);
  f.wrong = {64};
  f.ms = {{64, 0.05}, {128, 0.3}, {256, 0.2}};
  FakeTimer timer = f.timer();
  std::vector<std::pair<int64_t, std::string>> seen;
  TuneOptions opts;
  opts.on_progress = [&](const Progress& p) {
    seen.push_back({block(p.last->config), std::string(status_name(p.last->status))});
  };
  TuneReport r = tune(f.problem(false), blocks({64, 128, 256}), timer, opts);
  REQUIRE(r.found);
  CHECK(block(r.best) == 256);
  auto by = by_block(r);
  CHECK(by[64].status == Status::WrongOutput);
  CHECK_MESSAGE(by[64].reason.find("no host reference; differs from the majority's output (BLOCK=128 num_warps=4 "
                                   "num_stages=1: 2 of the configs agree) at 100 of 300 values") != std::string::npos,
                by[64].reason);
  CHECK(timer.calls == 2);  // timed only once the majority was certain; 64 never
  // Progress stays once per config, in order, with the final status.
  CHECK(seen == std::vector<std::pair<int64_t, std::string>>{{64, "wrong output"}, {128, "ok"}, {256, "ok"}});
}

TEST_CASE("without a reference, configs that disagree with no majority are all rejected") {
  Fake f(30, 6);
  f.wrong = {2};
  f.ms = {{1, 0.1}, {2, 0.2}};
  FakeTimer timer = f.timer();
  TuneReport r = tune(f.problem(false), blocks({1, 2}), timer);
  CHECK_FALSE(r.found);
  auto by = by_block(r);
  for (int64_t b : {1, 2}) {
    CHECK(by[b].status == Status::WrongOutput);
    CHECK_MESSAGE(
        by[b].reason.find("no host reference and no majority: the 2 configs that ran gave 2 different outputs") !=
            std::string::npos,
        by[b].reason);
  }
  CHECK_MESSAGE(by[1].reason.find("BLOCK=2 ") != std::string::npos, by[1].reason);  // each names the other
  CHECK_MESSAGE(by[2].reason.find("BLOCK=1 ") != std::string::npos, by[2].reason);
  CHECK(timer.calls == 0);
  // Two of four agreeing is no majority either; three of four is.
  f.wrong = {1, 2};
  f.ms = {{1, 0.1}, {2, 0.2}, {3, 0.3}, {4, 0.4}};
  f.partial = {2};  // so 1 and 2 differ from each other too
  CHECK_FALSE(tune(f.problem(false), blocks({1, 2, 3, 4}), timer).found);
  f.wrong = {1};
  f.partial = {};
  TuneReport r3 = tune(f.problem(false), blocks({1, 2, 3, 4}), timer);
  CHECK(block(r3.best) == 2);
  CHECK(by_block(r3)[1].status == Status::WrongOutput);
  // A lone config that ran has nothing to disagree with.
  f.wrong = {};
  CHECK(tune(f.problem(false), blocks({1}), timer).found);
}

TEST_CASE("without a reference, failed and pruned configs do not count towards the majority") {
  Fake f(30, 7);
  f.wrong = {3};
  f.ms = {{1, 0.1}, {2, 0.2}, {3, 0.3}, {4, 0.4}};
  FakeTimer timer = f.timer();
  Problem p = f.problem(false);
  p.compile = [](const Config& c) {
    if (c.meta["BLOCK"] == 1) throw CompileError({}, "too big");
  };
  TuneOptions opts;
  opts.prune = [](const Config& c) { return c.meta["BLOCK"] != 4; };
  // 2 and 3 ran and disagree; 1 failed, 4 was pruned: no majority.
  TuneReport r = tune(p, blocks({1, 2, 3, 4}), timer, opts);
  CHECK_FALSE(r.found);
  auto by = by_block(r);
  CHECK(by[1].status == Status::CompileError);
  CHECK(by[4].status == Status::Pruned);
  CHECK_MESSAGE(by[2].reason.find("the 2 configs that ran") != std::string::npos, by[2].reason);
}

// ---- Kernel-level autotuning (Autotune::reference) on the interpreter --------------------------

namespace {

// out = x * (BLOCK >= 512 ? 2 : 1): a meta-parameter that changes the arithmetic.
void scale_by_block(Ptr<f32> x, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask) * (BLOCK >= 512 ? 2.0f : 1.0f), mask);
}

// out = x * s + t
void affine(Ptr<f32> x, Ptr<f32> out, Int n, Float s, Float t, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask) * s + t, mask);
}

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-50.0f, 50.0f);
  std::vector<float> v(n);
  for (float& f : v) f = d(rng);
  return v;
}

// Times in call order (times[i % size]), after really running `run` once.
class OrderTimer final : public Timer {
 public:
  explicit OrderTimer(std::vector<double> t) : times_(std::move(t)) {}
  int calls = 0;
  Timing time(const std::function<void()>& run, const std::function<void()>& reset, const TimerOptions&) override {
    if (reset) reset();
    run();
    return summarize({times_[static_cast<size_t>(calls++) % times_.size()]});
  }

 private:
  std::vector<double> times_;
};

std::vector<double> identity(const HostArgs& a) { return a.array("x"); }

// out = x + y (the docs' example kernel)
void samples_add(Ptr<f32> x, Ptr<f32> y, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask) + load(y + offs, mask), mask);
}

}  // namespace

TEST_CASE("Kernel autotune: a reference rejects a wrong first config; the launch uses a correct one") {
  TempDir dir;
  const auto path = dir.path / "tuning.json";
  EnvVar db("TESSEL_TUNE_DB", path.string());
  int timers = 0;
  set_timer_factory([&timers] {
    ++timers;
    return std::make_unique<OrderTimer>(std::vector<double>{0.3, 0.2});  // 128, then 256
  });
  const auto cs = blocks({512, 128, 256});  // 512 (first, the fallback) computes x * 2
  Autotune at{cs, KeySpec{{{"n"}}}, {}, {}};
  at.outputs = {"out"};
  at.reference = identity;
  at.rtol = at.atol = 0;
  jit::Kernel k{"scale_by_block", &scale_by_block, {"x", "out", "n"}, jit::Meta{{"BLOCK", 128}}, at};
  const int64_t n = 777;
  auto h = random_floats(n, 11);
  jit::Array<float> x(h), out(n);
  out.poison();
  auto grid = [n](const jit::Meta& m) { return jit::Grid{jit::cdiv(n, m["BLOCK"])}; };
  CHECK(k.launch_tuned(grid, x, out, n) == cs[2]);
  CHECK(timers == 1);
  CHECK(out.download() == h);
  Database saved = Database::load(path);
  const DbKey key = current_db_key("scale_by_block", "n=1024;sig=f32,f32");
  const auto r = saved.result(key, cs[0]);
  REQUIRE(r);
  CHECK(r->status == Status::WrongOutput);
  CHECK(r->reason.find("differs from the host reference at") != std::string::npos);
  CHECK(saved.result(key, cs[1])->status == Status::Ok);
  set_timer_factory(nullptr);
}

TEST_CASE("Kernel autotune: a grid that leaves part of the output unwritten is caught") {
  // The grid function forgets BLOCK: every config gets cdiv(n, 256) programs, so BLOCK=128
  // writes half the output. It runs after a correct config, whose output it would inherit.
  const std::vector<Config> cs{Config{jit::Meta{{"BLOCK", 256}}, {4, 1}}, Config{jit::Meta{{"BLOCK", 128}}, {4, 1}},
                               Config{jit::Meta{{"BLOCK", 256}}, {2, 1}}};
  Autotune at{cs, KeySpec{{{"n", Bucket::Exact}}}, {}, {}};
  at.outputs = {"out"};
  for (bool with_reference : {true, false}) {
    CAPTURE(with_reference);
    at.reference = with_reference ? identity : nullptr;
    jit::Kernel k{"scale_by_block", &scale_by_block, {"x", "out", "n"}, jit::Meta{{"BLOCK", 128}}, at};
    const int64_t n = 1000;
    auto h = random_floats(n, 12);
    jit::Array<float> x(h), out(n);
    Problem p = k.make_problem([n](const jit::Meta&) { return jit::Grid{jit::cdiv(n, 256)}; }, x, out, n);
    OrderTimer timer({0.5, 0.25});
    TuneReport r = tune(p, cs, timer);
    REQUIRE(r.found);
    CHECK(r.best == cs[2]);
    REQUIRE(r.ranked.size() == 3);
    const ConfigResult& half = r.ranked[2];
    CHECK(half.config == cs[1]);
    CHECK(half.status == Status::WrongOutput);
    CHECK_MESSAGE(half.reason.find("at 488 of 1000 values; the first at index 512: -nan here") != std::string::npos,
                  half.reason);
    CHECK(timer.calls == 2);
  }
}

TEST_CASE("Kernel autotune: the reference sees every argument by name") {
  const auto cs = blocks({64, 128});
  Autotune at{cs, KeySpec{{{"n", Bucket::Exact}}}, {}, {}};
  at.outputs = {"out"};
  std::string seen;
  at.reference = [&seen](const HostArgs& a) {
    const std::vector<double>& x = a.array("x");
    const int64_t n = a.integer("n");
    const double s = a.floating("s"), t = a.floating("t");
    seen = std::to_string(x.size()) + " " + std::to_string(n) + " " + std::to_string(s) + " " + std::to_string(t);
    std::vector<double> want;
    for (double v : x)
      want.push_back(static_cast<double>(static_cast<float>(v) * static_cast<float>(s) + static_cast<float>(t)));
    CHECK_THROWS_WITH_AS(a.array("n"), "autotune reference: parameter 'n' is not an Array (pointer) parameter",
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(a.integer("s"), "autotune reference: parameter 's' is not an integer parameter",
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(a.floating("q"), "autotune reference: 'q' is not a parameter (x, out, n, s, t)",
                         std::invalid_argument);
    return want;
  };
  jit::Kernel k{"affine", &affine, {"x", "out", "n", "s", "t"}, jit::Meta{{"BLOCK", 64}}, at};
  const int64_t n = 99;
  auto h = random_floats(n, 13);
  jit::Array<float> x(h), out(n);
  auto grid = [n](const jit::Meta& m) { return jit::Grid{jit::cdiv(n, m["BLOCK"])}; };
  Problem p = k.make_problem(grid, x, out, n, 1.5f, -0.25);
  OrderTimer timer({0.1});
  TuneReport r = tune(p, cs, timer);
  CHECK(seen == "99 99 1.500000 -0.250000");
  CHECK(r.found);
  for (const auto& c : r.ranked) CHECK_MESSAGE(c.status == Status::Ok, c.reason);
  // A DevicePtr output cannot be read back; a DevicePtr input cannot be given to the reference.
  Problem q = k.make_problem(grid, jit::DevicePtr<float>{x.address()}, out, n, 1.5f, -0.25);
  CHECK_THROWS_WITH_AS(tune(q, cs, timer),
                       "tune affine: the host reference failed: autotune reference: parameter 'x' was passed as a "
                       "DevicePtr, not an Array of numbers: its contents are unknown",
                       std::runtime_error);
}

TEST_CASE("Kernel autotune: a reference needs outputs; all configs wrong falls back to the first") {
  Autotune at{blocks({512, 1024}), KeySpec{{{"n"}}}, {}, {}};
  at.reference = identity;
  jit::Kernel plain{"scale_by_block", &scale_by_block, {"x", "out", "n"}, jit::Meta{{"BLOCK", 128}}};
  CHECK_THROWS_WITH_AS(plain.autotune(at),
                       "error: kernel 'scale_by_block': an autotune reference needs outputs (the parameters it gives "
                       "the values of)",
                       CompileError);
  TempDir dir;
  EnvVar db("TESSEL_TUNE_DB", (dir.path / "tuning.json").string());
  set_timer_factory([] { return std::make_unique<OrderTimer>(std::vector<double>{0.1}); });
  at.outputs = {"out"};
  jit::Kernel k{"scale_by_block", &scale_by_block, {"x", "out", "n"}, jit::Meta{{"BLOCK", 128}}, at};
  const int64_t n = 300;
  auto h = random_floats(n, 14);
  jit::Array<float> x(h), out(n);
  // Both configs compute x * 2: nothing passes, the first is launched (and stderr says why).
  CHECK(k.launch_tuned([n](const jit::Meta& m) { return jit::Grid{jit::cdiv(n, m["BLOCK"])}; }, x, out, n) ==
        at.configs[0]);
  Database saved = Database::load(dir.path / "tuning.json");
  const DbKey key = current_db_key("scale_by_block", "n=512;sig=f32,f32");
  for (const Config& c : at.configs) CHECK(saved.result(key, c)->status == Status::WrongOutput);
  set_timer_factory(nullptr);
}

TEST_CASE("docs/autotune.md's Autotune example: add with a host reference, tuned on the interpreter") {
  using namespace tessel::jit;
  TempDir dir;
  EnvVar db("TESSEL_TUNE_DB", (dir.path / "tuning.json").string());
  set_timer_factory([] {
    return std::make_unique<OrderTimer>(std::vector<double>{0.8, 0.7, 0.6, 0.1, 0.5, 0.4, 0.3, 0.2});
  });
  Kernel add{"add", &samples_add, {"x", "y", "out", "n"}, Meta{{"BLOCK", 1024}},
             tune::Autotune{.configs = tune::product({{"BLOCK", {256, 512, 1024, 2048}}}, {4, 8}),
                            .key = {{{"n", tune::Bucket::PowerOfTwo}}},
                            .outputs = {"out"},  // checked after one run of each config while tuning
                            .reference =
                                [](const tune::HostArgs& a) {  // what `out` must hold
                                  std::vector<double> want;
                                  const auto &x = a.array("x"), &y = a.array("y");
                                  for (size_t i = 0; i < x.size(); ++i) want.push_back(x[i] + y[i]);
                                  return want;
                                },
                            .rtol = 1.2e-7,
                            .atol = 1e-7}};
  const int64_t n = 3001;
  auto hx = random_floats(n, 15), hy = random_floats(n, 16);
  Array<float> x(hx), y(hy), out(n);
  const Config& c = add.launch_tuned([&](const Meta& m) { return Grid{cdiv(n, m["BLOCK"])}; }, x, y, out, n);
  CHECK_MESSAGE(c == add.autotune_spec()->configs[3], c.str());  // all checked and timed; the 4th is fastest
  auto o = out.download();
  for (int64_t i = 0; i < n; ++i) REQUIRE(o[i] == hx[i] + hy[i]);
  set_timer_factory(nullptr);
}
