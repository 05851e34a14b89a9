// The autotuner API as a user's own kernels meet it (issue 24): shape-aware prune, fixed meta,
// dtype-aware output tolerance, spills reported as pruned, the per-config budget, TuneChoice,
// DevicePtr outputs with a size. CPU interpreter with scripted timers.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <atomic>
#include <cmath>
#include <map>
#include <random>

#include "tessel/interp/float_formats.hpp"
#include "tessel/ir/error.hpp"
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

// out = x * SCALE (a fixed meta-parameter), in blocks of BLOCK (the tuned one).
void scale_kernel(Ptr<f32> x, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask) * static_cast<float>(m["SCALE"]), mask);
}

// out = x * (1 + 1e-3 for BLOCK 256), stored as T: configs that differ by an f16 ulp or so.
template <DTypeTag T>
void nearly_copy_kernel(Ptr<T> x, Ptr<T> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, cast<f32>(load(x + offs, mask)) * (BLOCK == 256 ? 1.001f : 1.0f), mask);
}

void copy_i32_kernel(Ptr<i32> x, Ptr<i32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, load(x + offs, mask), mask);
}

using AddKernel = jit::Kernel<Ptr<f32>, Ptr<f32>, Ptr<f32>, Int, const Meta&>;

bool interpreter() { return jit::Device::current().kind() == jit::BackendKind::Interpreter; }

}  // namespace

TEST_CASE("prune sees the problem: key values, integer arguments and Array sizes by name") {
  TempDir dir;
  const auto path = dir.path / "tuning.json";
  EnvVar db("TESSEL_TUNE_DB", path.string());
  Script s;
  s.times = {0.3, 0.1};  // the two configs the prune keeps at n = 100: 128, then 256
  ScopedFactory factory(s);
  const auto cs = block_configs({32, 64, 128, 256});
  std::vector<std::string> seen;
  Autotune at{cs, KeySpec{{{"n"}}}};
  // One program per problem: only blocks covering the whole (bucketed) n.
  at.prune = [&seen](const Config& c, const ProblemInfo& p) {
    seen.push_back(fmt::format("{} {} {} {} {}", p.kernel(), p.key("n"), p.integer("n"), p.size("x"), p.size("out")));
    return c.meta["BLOCK"] >= p.key("n");
  };
  AddKernel k{"add", &samples::add_kernel, {"x", "y", "out", "n"}, jit::Meta{{"BLOCK", 1024}}, at};
  const int64_t n = 100;
  auto hx = random_floats(n, 1), hy = random_floats(n, 2);
  jit::Array<float> x(hx), y(hy), out(n);
  const TuneChoice& c = k.launch_tuned_choice([n](const jit::Meta& m) { return grid_for(n, m); }, x, y, out, n);
  CHECK(c.config == cs[3]);
  CHECK(s.calls == 2);
  REQUIRE(!seen.empty());
  CHECK(seen.front() == "add 128 100 100 100");
  auto o = out.download();
  for (int64_t i = 0; i < n; ++i) REQUIRE(o[i] == hx[i] + hy[i]);
  const Database saved = Database::load(path);
  const DbKey key = current_db_key("add", "n=128;sig=f32,f32,f32");
  CHECK(saved.result(key, cs[0])->status == Status::Pruned);
  CHECK(saved.result(key, cs[1])->status == Status::Pruned);
  CHECK(saved.result(key, cs[2])->status == Status::Ok);

  // Names the problem does not have are one clear error.
  ProblemInfo info;
  info.add_key("n", 128);
  CHECK_THROWS_WITH_AS(info.key("rows"), "autotune prune: 'rows' is not a key parameter (n)", std::invalid_argument);
  CHECK_THROWS_WITH_AS(info.size("x"), "autotune prune: 'x' is not an Array argument (there is none)",
                       std::invalid_argument);
}

TEST_CASE("a prune of the config alone still works; the untuned fallback is the first config the prune keeps") {
  if (!interpreter()) {
    MESSAGE("not applicable on the GPU, where launch_tuned tunes");
    return;
  }
  TempDir dir;
  EnvVar db("TESSEL_TUNE_DB", (dir.path / "tuning.json").string());
  const auto cs = block_configs({32, 64, 128, 256});
  {
    std::function<bool(const Config&)> old_style = [](const Config& c) { return c.meta["BLOCK"] != 32; };
    AddKernel k{"add", &samples::add_kernel, {"x", "y", "out", "n"}, jit::Meta{{"BLOCK", 1024}},
                Autotune{cs, KeySpec{{{"n"}}}, old_style, {}}};
    jit::Array<float> x(random_floats(50, 3)), y(random_floats(50, 4)), out(50);
    const TuneChoice& c = k.launch_tuned_choice([](const jit::Meta& m) { return grid_for(50, m); }, x, y, out, 50);
    CHECK(c.config == cs[1]);  // 32 is pruned: the untuned launch must not use it either
    CHECK(c.source == TuneChoice::Source::Fallback);
    CHECK_FALSE(c.median_ms.has_value());
  }
  Autotune at{cs, KeySpec{{{"n"}}}};
  at.prune = [](const Config& c, const ProblemInfo& p) { return c.meta["BLOCK"] >= p.integer("n"); };
  AddKernel k{"add", &samples::add_kernel, {"x", "y", "out", "n"}, jit::Meta{{"BLOCK", 1024}}, at};
  jit::Array<float> x(random_floats(100, 5)), y(random_floats(100, 6)), out(100);
  CHECK(k.launch_tuned([](const jit::Meta& m) { return grid_for(100, m); }, x, y, out, 100) == cs[2]);
  Autotune empty{cs, KeySpec{{{"n"}}}, std::function<bool(const Config&)>{}, {}};
  CHECK_FALSE(static_cast<bool>(empty.prune));  // an empty std::function is no predicate
}

TEST_CASE("launch_tuned with fixed meta-parameters: merged into each config, part of the key") {
  TempDir dir;
  const auto path = dir.path / "tuning.json";
  EnvVar db("TESSEL_TUNE_DB", path.string());
  Script s;
  s.times = {0.2, 0.1};
  ScopedFactory factory(s);
  const auto cs = block_configs({64, 128});
  jit::Kernel k{"scale", &scale_kernel, {"x", "out", "n"}, jit::Meta{{"BLOCK", 64}, {"SCALE", 1}},
                Autotune{cs, KeySpec{{{"n"}}}}};
  const int64_t n = 300;
  auto h = random_floats(n, 7);
  jit::Array<float> x(h), out(n);
  auto grid = [n](const jit::Meta& m) { return grid_for(n, m); };
  for (int64_t scale : {3, 2}) {
    const jit::Meta fixed{{"SCALE", scale}};
    CHECK(k.launch_tuned(fixed, grid, x, out, n) == cs[1]);
    auto o = out.download();
    for (int64_t i = 0; i < n; ++i) REQUIRE(o[i] == h[i] * static_cast<float>(scale));
  }
  CHECK(s.made == 2);  // each fixed value is its own problem, tuned once
  k.launch_tuned({{"SCALE", 3}}, grid, x, out, n);
  CHECK(s.made == 2);
  const Database saved = Database::load(path);
  CHECK(saved.best(current_db_key("scale", "n=512;sig=f32,f32;fixed=SCALE=3")) == cs[1]);
  CHECK(saved.best(current_db_key("scale", "n=512;sig=f32,f32;fixed=SCALE=2")) == cs[1]);
  CHECK(saved.results(current_db_key("scale", "n=512;sig=f32,f32")).empty());
  // A parameter is either tuned or fixed.
  CHECK_THROWS_WITH_AS(k.launch_tuned({{"BLOCK", 32}}, grid, x, out, n),
                       "error: kernel 'scale': launch_tuned fixes meta-parameter 'BLOCK', which autotune config 'BLOCK=64 "
                       "num_warps=4 num_stages=1' also sets (a meta-parameter is either tuned or fixed)",
                       CompileError);
  Problem p = k.make_problem(jit::Meta{{"SCALE", 5}}, grid, x, out, n);
  CHECK(p.key == "n=512;sig=f32,f32;fixed=SCALE=5");
}

TEST_CASE("the output check's default tolerance follows the outputs' dtype; Autotune::rtol/atol override it") {
  CHECK(default_tolerance(ir::Scalar::f32).rtol == 1e-5);
  CHECK(default_tolerance(ir::Scalar::f32).atol == 1e-6);
  CHECK(default_tolerance(ir::Scalar::f16).rtol == 1e-2);
  CHECK(default_tolerance(ir::Scalar::bf16).atol == 2e-2);
  CHECK(default_tolerance(ir::Scalar::i32).rtol == 0);
  const int64_t n = 257;
  auto grid = [n](const jit::Meta& m) { return grid_for(n, m); };
  auto tolerance_of = [&](auto& k, auto& x, auto& out) {
    Problem p = k.make_problem(grid, x, out, n);
    return std::pair{p.rtol, p.atol};
  };
  Autotune at{block_configs({128, 256}), KeySpec{{{"n"}}}};
  at.outputs = {"out"};
  jit::Kernel kf32{"nearly_f32", &nearly_copy_kernel<f32>, {"x", "out", "n"}, jit::Meta{{"BLOCK", 128}}, at};
  jit::Kernel kf16{"nearly_f16", &nearly_copy_kernel<f16>, {"x", "out", "n"}, jit::Meta{{"BLOCK", 128}}, at};
  jit::Kernel kbf16{"nearly_bf16", &nearly_copy_kernel<bf16>, {"x", "out", "n"}, jit::Meta{{"BLOCK", 128}}, at};
  jit::Kernel ki32{"copy_i32", &copy_i32_kernel, {"x", "out", "n"}, jit::Meta{{"BLOCK", 128}}, at};
  jit::Array<float> xf(random_floats(n, 8)), of(n);
  std::vector<uint16_t> h16(n);
  for (int64_t i = 0; i < n; ++i) h16[i] = interp::f16_from_double(1.5 + i);
  jit::Array<uint16_t> x16(h16), o16(n);
  jit::Array<int32_t> xi(std::vector<int32_t>(n, 7)), oi(n);
  CHECK(tolerance_of(kf32, xf, of) == std::pair{1e-5, 1e-6});
  CHECK(tolerance_of(kf16, x16, o16) == std::pair{1e-2, 1e-2});
  CHECK(tolerance_of(kbf16, x16, o16) == std::pair{2e-2, 2e-2});
  CHECK(tolerance_of(ki32, xi, oi) == std::pair{0.0, 0.0});
  at.rtol = 0.5;  // set: wins over the dtype's default; atol left unset keeps it
  jit::Kernel kset{"nearly_f16", &nearly_copy_kernel<f16>, {"x", "out", "n"}, jit::Meta{{"BLOCK", 128}}, at};
  CHECK(tolerance_of(kset, x16, o16) == std::pair{0.5, 1e-2});

  // f16 outputs are read as numbers, not bit patterns.
  Problem p = kf16.make_problem(grid, x16, o16, n);
  p.launch(block_configs({128})[0]);
  const std::vector<double> got = p.output();
  REQUIRE(got.size() == static_cast<size_t>(n));
  CHECK(got[0] == 1.5);
  CHECK(got[10] == 11.5);
}

TEST_CASE("configs an f16 ulp apart all pass the check by default; a tight tolerance tells them apart") {
  const int64_t n = 1000;
  auto grid = [n](const jit::Meta& m) { return grid_for(n, m); };
  std::vector<uint16_t> h(n);
  auto r = random_floats(n, 9);
  for (int64_t i = 0; i < n; ++i) h[i] = interp::f16_from_double(r[i]);
  jit::Array<uint16_t> x(h), out(n);
  const auto cs = block_configs({128, 256, 512});  // 256 scales by 1.001: about an ulp at f16
  for (bool tight : {false, true}) {
    CAPTURE(tight);
    Autotune at{cs, KeySpec{{{"n"}}}};
    at.outputs = {"out"};
    if (tight) at.rtol = at.atol = 1e-6;
    jit::Kernel k{"nearly_f16", &nearly_copy_kernel<f16>, {"x", "out", "n"}, jit::Meta{{"BLOCK", 128}}, at};
    Problem p = k.make_problem(grid, x, out, n);
    Script s;
    s.times = {0.3, 0.2, 0.1};
    ScriptTimer timer(s);
    TuneReport rep = tune(p, cs, timer);
    REQUIRE(rep.found);
    std::map<int64_t, Status> by;
    for (const auto& c : rep.ranked) by[c.config.meta["BLOCK"]] = c.status;
    CHECK(by[128] == Status::Ok);
    CHECK(by[512] == Status::Ok);
    CHECK(by[256] == (tight ? Status::WrongOutput : Status::Ok));
  }
}

namespace {
struct SpillingExecutable final : jit::Executable {
  jit::ExecutableInfo i;
  void launch(jit::Grid, std::span<const jit::RawArg>, jit::StreamRef) override {}
  const jit::ExecutableInfo& info() const override { return i; }
};
}  // namespace

TEST_CASE("a config dropped for spilling is 'pruned: spills', in the results and the database") {
  Autotune at;
  SpillingExecutable spills, clean;
  spills.i.local_bytes = 48;
  clean.i.local_bytes = 0;
  const auto cs = block_configs({128, 256});
  Problem p;
  p.kernel = "k";
  p.key = "n=1;sig=f32";
  p.compile = [&](const Config& c) {
    jit::tune::detail::check_resources(at, c.meta["BLOCK"] == 256 ? spills : clean);
  };
  p.launch = [](const Config&) {};
  Script s;
  s.times = {0.1};
  ScriptTimer timer(s);
  TuneReport r = tune(p, cs, timer);
  REQUIRE(r.found);
  CHECK(r.best == cs[0]);
  REQUIRE(r.ranked.size() == 2);
  CHECK(r.ranked[1].status == Status::Pruned);
  CHECK(r.ranked[1].reason == "spills (48 bytes of local memory per thread)");
  // What the CLI's table prints: "<status>: <reason>".
  CHECK(fmt::format("{}: {}", status_name(r.ranked[1].status), r.ranked[1].reason) ==
        "pruned: spills (48 bytes of local memory per thread)");
  Database d;
  const DbKey key{"k", p.key, "dev", "sm_90", "v"};
  record(d, key, r);
  const Database back = Database::from_json(d.to_json(), "test");
  CHECK(back.result(key, cs[1])->status == Status::Pruned);
  CHECK(back.result(key, cs[1])->reason == "spills (48 bytes of local memory per thread)");
}

TEST_CASE("the per-config timing budget is settable through Autotune::timer; budget_s splits a total") {
  TempDir dir;
  EnvVar db("TESSEL_TUNE_DB", (dir.path / "tuning.json").string());
  const auto cs = block_configs({64, 128});
  const int64_t n = 200;
  jit::Array<float> x(random_floats(n, 10)), y(random_floats(n, 11)), out(n);
  auto grid = [n](const jit::Meta& m) { return grid_for(n, m); };
  {
    Script s;
    s.times = {0.2, 0.1};
    ScopedFactory factory(s);
    Autotune at{cs, KeySpec{{{"n"}}}};
    at.timer.budget_ms = 7;
    at.timer.min_reps = 2;
    AddKernel k{"add", &samples::add_kernel, {"x", "y", "out", "n"}, jit::Meta{{"BLOCK", 1024}}, at};
    k.launch_tuned(grid, x, y, out, n);
    REQUIRE(s.opts.size() == 2);
    CHECK(s.opts[0].budget_ms == 7);
    CHECK(s.opts[1].min_reps == 2);
  }
  {
    EnvVar db2("TESSEL_TUNE_DB", (dir.path / "tuning2.json").string());
    Script s;
    s.times = {0.2, 0.1};
    ScopedFactory factory(s);
    Autotune at{cs, KeySpec{{{"n"}}}};
    at.budget_s = 1;
    AddKernel k{"add", &samples::add_kernel, {"x", "y", "out", "n"}, jit::Meta{{"BLOCK", 1024}}, at};
    k.launch_tuned(grid, x, y, out, n);
    REQUIRE(s.opts.size() == 2);
    CHECK(s.opts[0].budget_ms == 500);
  }
}

TEST_CASE("launch_tuned_choice returns the config with its time and where it came from") {
  TempDir dir;
  EnvVar db("TESSEL_TUNE_DB", (dir.path / "tuning.json").string());
  Script s;
  s.times = {0.3, 0.125};
  ScopedFactory factory(s);
  const auto cs = block_configs({64, 128});
  const int64_t n = 200;
  jit::Array<float> x(random_floats(n, 12)), y(random_floats(n, 13)), out(n);
  auto grid = [n](const jit::Meta& m) { return grid_for(n, m); };
  {
    AddKernel k{"add", &samples::add_kernel, {"x", "y", "out", "n"}, jit::Meta{{"BLOCK", 1024}},
                Autotune{cs, KeySpec{{{"n"}}}}};
    const TuneChoice& c = k.launch_tuned_choice(grid, x, y, out, n);
    CHECK(c.config == cs[1]);
    CHECK(c.source == TuneChoice::Source::Tuned);
    CHECK(source_name(c.source) == "tuned");
    REQUIRE(c.median_ms.has_value());
    CHECK(*c.median_ms == 0.125);
    CHECK(&k.launch_tuned_choice(grid, x, y, out, n) == &c);  // the in-process choice, kept
  }
  AddKernel fresh{"add", &samples::add_kernel, {"x", "y", "out", "n"}, jit::Meta{{"BLOCK", 1024}},
                  Autotune{cs, KeySpec{{{"n"}}}}};
  const TuneChoice& c = fresh.launch_tuned_choice(grid, x, y, out, n);
  CHECK(c.config == cs[1]);
  CHECK(c.source == TuneChoice::Source::Database);
  CHECK(c.median_ms == 0.125);
  CHECK(s.made == 1);
}

TEST_CASE("a DevicePtr output is checked when Autotune::output_sizes gives its size") {
  const auto cs = block_configs({128, 256});
  Autotune at{cs, KeySpec{{{"n"}}}};
  at.outputs = {"out"};
  at.output_sizes = {{"out", [](const ProblemInfo& p) { return static_cast<size_t>(p.integer("n")); }}};
  at.reference = [](const HostArgs& a) {
    std::vector<double> want;
    const auto &x = a.array("x"), &y = a.array("y");
    for (size_t i = 0; i < x.size(); ++i) want.push_back(static_cast<double>(static_cast<float>(x[i] + y[i])));
    return want;
  };
  AddKernel k{"add", &samples::add_kernel, {"x", "y", "out", "n"}, jit::Meta{{"BLOCK", 1024}}, at};
  const int64_t n = 333;
  jit::Array<float> x(random_floats(n, 14)), y(random_floats(n, 15)), out(n);
  Problem p = k.make_problem([n](const jit::Meta& m) { return grid_for(n, m); }, x, y,
                             jit::DevicePtr<float>{out.address()}, n);
  REQUIRE(p.output);
  Script s;
  s.times = {0.2, 0.1};
  ScriptTimer timer(s);
  TuneReport r = tune(p, cs, timer);
  REQUIRE(r.found);
  for (const auto& c : r.ranked) CHECK(c.status == Status::Ok);
  p.launch(cs[0]);
  CHECK(p.output().size() == static_cast<size_t>(n));
}

TEST_CASE("check_positions: every element up to the limit, else an odd stride that keeps the last") {
  CHECK(check_positions(0, 10).empty());
  CHECK(check_positions(5, 0) == std::vector<size_t>{0, 1, 2, 3, 4});
  CHECK(check_positions(5, 5) == std::vector<size_t>{0, 1, 2, 3, 4});
  const std::vector<size_t> p = check_positions(1000, 100);  // stride 10 -> 11 (odd)
  REQUIRE(p.size() >= 2);
  CHECK(p[1] - p[0] == 11);
  CHECK(p.back() == 999);
  CHECK(p.size() <= 100);
  for (size_t i = 1; i < p.size(); ++i) CHECK(p[i] > p[i - 1]);
}

TEST_CASE("Autotune::check_elements reads and compares a sample of a large output, at the reference's positions") {
  const int64_t n = 10007;
  auto grid = [n](const jit::Meta& m) { return grid_for(n, m); };
  const std::vector<float> hx = random_floats(n, 21);
  jit::Array<float> x(hx), out(n);
  Autotune at{block_configs({128, 256}), KeySpec{{{"n"}}}};
  at.outputs = {"out"};
  at.check_elements = 100;
  int64_t wrong_at = -1;  // the reference is off by one at this index (-1: right everywhere)
  at.reference = [&wrong_at](const HostArgs& a) {
    std::vector<double> want = a.array("x");
    for (double& v : want) v *= 3;
    if (wrong_at >= 0) want[static_cast<size_t>(wrong_at)] += 1;
    return want;
  };
  jit::Kernel k{"scale", &scale_kernel, {"x", "out", "n"}, jit::Meta{{"BLOCK", 128}, {"SCALE", 3}}, at};
  const std::vector<size_t> pos = check_positions(n, 100);
  Problem p = k.make_problem(grid, x, out, n);
  const Expected e = p.reference();
  REQUIRE(e.values.size() == pos.size());
  for (size_t i = 0; i < pos.size(); ++i) CHECK(e.values[i] == static_cast<double>(hx[pos[i]]) * 3);
  if (p.poison) p.poison();
  p.launch(block_configs({128})[0]);
  jit::Device::current().synchronize();
  const std::vector<double> got = p.output();
  REQUIRE(got.size() == pos.size());
  for (size_t i = 0; i < pos.size(); ++i) CHECK(got[i] == doctest::Approx(e.values[i]).epsilon(1e-6));
  // A reference that differs at a sampled position rejects every config; at a position the
  // sample skips it cannot (that is the price of the bound, and why the default is 2^24).
  for (int64_t at_index : {static_cast<int64_t>(pos[3]), static_cast<int64_t>(pos[3] + 1)}) {
    CAPTURE(at_index);
    wrong_at = at_index;
    Problem q = k.make_problem(grid, x, out, n);
    Script s;
    s.times = {0.2, 0.1};
    ScriptTimer timer(s);
    const TuneReport rep = tune(q, block_configs({128, 256}), timer);
    CHECK(rep.found == (at_index != static_cast<int64_t>(pos[3])));
  }
}
