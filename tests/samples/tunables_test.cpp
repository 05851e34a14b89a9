// The tunables: config spaces, keys, and their problems run (on the interpreter without a GPU)
// against host references, fused forms against their unfused chains, and through tune().
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "tessel/jit/device.hpp"
#include "tessel/jit/tune/tuner.hpp"
#include "tessel/samples/sample.hpp"
#include "tessel/samples/tunables.hpp"

using namespace tessel;
using namespace tessel::samples;
using jit::tune::Config;

namespace {

// A small size of the tunable's shape (the interpreter is slow): odd, so masks matter.
SizeArgs small(const Tunable& t) {
  if (t.name.rfind("w4a16", 0) == 0) return SizeArgs{{13, 48, 512}};  // K: whole groups of 128
  if (t.size_names.size() == 3) return SizeArgs{{33, 48, 40}};      // M x N x K: every tile masked
  if (t.name == "attention_fwd") return SizeArgs{{1, 2, 37, 64, 1}};  // batch x heads x seq x dim x causal
  if (t.size_names.size() == 5) return SizeArgs{{2, 5, 7, 64, 24}};  // conv B x H x W x C x CO
  return t.size_names.size() == 1 ? SizeArgs{{1000}} : SizeArgs{{3, 100}};
}

std::vector<Config> kept(const Tunable& t, const SizeArgs& s) {
  std::vector<Config> out;
  for (const auto& c : t.configs(s))
    if (!t.keep || t.keep(c, s)) out.push_back(c);
  return out;
}

std::vector<double> run_once(const jit::tune::Problem& p, const Config& c) {
  p.compile(c);
  if (p.reset) p.reset();
  p.launch(c);
  jit::Device::current().synchronize();
  return p.output();
}

void check_close(const std::vector<double>& a, const std::vector<double>& b, double rtol, double atol) {
  REQUIRE(a.size() == b.size());
  size_t bad = 0;
  for (size_t i = 0; i < a.size(); ++i)
    if (!(std::fabs(a[i] - b[i]) <= atol + rtol * std::fabs(b[i]))) {
      if (bad++ == 0) MESSAGE("first difference at " << i << ": " << a[i] << " vs " << b[i]);
    }
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("the tunables: names, config spaces of 8, defaults inside the space, keys") {
  std::set<std::string> names;
  for (const auto& t : all_tunables()) {
    CAPTURE(t.name);
    CHECK(names.insert(t.name).second);
    REQUIRE(!t.sizes.empty());
    for (const auto& s : t.sizes) {
      CHECK(s.dims.size() == t.size_names.size());
      auto cs = t.configs(s);
      CHECK(cs.size() == 8);
      CHECK(std::find(cs.begin(), cs.end(), t.default_config(s)) != cs.end());
      CHECK(kept(t, s).size() >= 5);
      CHECK(t.key_values(s).size() == t.key.params.size());
    }
  }
  for (const char* n : {"add", "chain5", "chain5_unfused", "bias_gelu_dropout", "bias_gelu_dropout_unfused", "softmax",
                        "softmax_unfused", "layernorm_f16", "rmsnorm_f32", "rmsnorm_f16", "cross_entropy",
                        "matmul", "matmul_bias_gelu", "matmul_paired", "fp8_matmul", "fp8_matmul_bf16", "w4a16_matmul", "w4a16_matmul_zp", "w4a16_matmul_q8", "w4a16_splitk", "w4a16_gemv",
                        "conv2d_bn_relu", "conv2d_bn_relu_splitk", "conv2d_bn_relu_streamk", "attention_fwd", "sin_cos", "sin_cos_unfused", "relu_sq", "relu_sq_unfused", "sigmoid_tanh",
                        "sigmoid_tanh_unfused", "roofline_copy", "roofline_fma"})
    CHECK(find_tunable(n) != nullptr);
  CHECK(find_tunable("nope") == nullptr);
  CHECK(find_tunable("chain5_unfused")->group == "chain5");
  CHECK_FALSE(find_tunable("chain5_unfused")->fused);
  CHECK(find_tunable("softmax_unfused")->group == "softmax");
  CHECK(find_tunable("roofline_fma")->probe);
}

TEST_CASE("row-in-one-tile tunables follow the row width and prune register-heavy configs") {
  const Tunable& t = *find_tunable("layernorm_f16");
  SizeArgs wide{{4096, 8192}};
  std::set<std::string> kept_strs;
  for (const auto& c : kept(t, wide)) kept_strs.insert(c.str());
  CHECK(kept_strs.count("BLOCK=8192 num_warps=4 num_stages=1") == 1);
  CHECK(kept_strs.count("BLOCK=8192 num_warps=2 num_stages=1") == 0);   // 128 elements per thread
  CHECK(kept_strs.count("BLOCK=16384 num_warps=4 num_stages=1") == 0);  // 128 elements per thread
  CHECK(kept_strs.count("BLOCK=16384 num_warps=8 num_stages=1") == 1);
  CHECK(t.default_config(SizeArgs{{8, 1000}}).str() == "BLOCK=1024 num_warps=4 num_stages=1");
  CHECK(t.size_str(wide) == "rows=4096,cols=8192");
}

TEST_CASE("matmul tunables drop producer-warp configs where K or N is not a multiple of 16") {
  for (const std::string n : {"matmul", "matmul_bias_gelu", "matmul_paired"}) {
    const Tunable& t = *find_tunable(n);
    CAPTURE(n);
    auto producers = [&](const SizeArgs& s) {
      int count = 0;
      for (const auto& c : kept(t, s)) count += c.opts.warp_specialize;
      return count;
    };
    const int all = producers(SizeArgs{{33, 48, 64}});  // M is masked, never a stride
    CHECK(all == (n == "matmul_bias_gelu" ? 0 : n == "matmul" ? 1 : 2));  // the fused space has none
    CHECK(producers(SizeArgs{{64, 48, 40}}) == 0);  // K: A's row stride
    CHECK(producers(SizeArgs{{64, 40, 48}}) == 0);  // N: B's and C's row stride
    CHECK(kept(t, SizeArgs{{64, 40, 48}}).size() == t.configs(SizeArgs{{64, 40, 48}}).size() - all);
  }
}

TEST_CASE("add's problem computes x + y, with bytes, flops and a bucketed key") {
  const Tunable& t = *find_tunable("add");
  auto p = t.make_problem(SizeArgs{{1000}});
  CHECK(p.kernel == "add");
  CHECK(p.key.rfind("n=1024;", 0) == 0);
  CHECK(p.key.find("f32") != std::string::npos);
  CHECK(p.bytes == 12000);
  CHECK(p.flops == 1000);
  auto x = random_floats(1000, 1), y = random_floats(1000, 2);
  std::vector<double> ref;
  for (size_t i = 0; i < x.size(); ++i) ref.push_back(static_cast<double>(x[i] + y[i]));
  for (const auto& c : {t.configs(SizeArgs{{1000}})[0], t.configs(SizeArgs{{1000}})[7]}) {
    CAPTURE(c.str());
    check_close(run_once(p, c), ref, 0, 0);
  }
}

TEST_CASE("fused tunables match their unfused chains, across configs") {
  // The chain pays for its intermediates (sin and cos unfused: for a second read of x only).
  for (auto [fused, more] : {std::pair{"chain5", 2.0}, std::pair{"bias_gelu_dropout", 2.0}, std::pair{"softmax", 2.0},
                             std::pair{"relu_sq", 2.0}, std::pair{"sigmoid_tanh", 2.0}, std::pair{"sin_cos", 1.3}}) {
    const Tunable& f = *find_tunable(fused);
    const Tunable& u = *find_tunable(std::string(fused) + "_unfused");
    CAPTURE(fused);
    CHECK(u.group == f.group);
    const SizeArgs s = small(f);
    auto pf = f.make_problem(s);
    auto pu = u.make_problem(s);
    CHECK(pu.bytes > more * pf.bytes);
    CHECK(pu.flops == pf.flops);
    auto a = run_once(pf, kept(f, s).front());
    auto b = run_once(pu, kept(u, s).back());
    check_close(a, b, 1e-5, 1e-6);
    bool varied = false;
    for (double v : a) varied |= v != a.front();
    CHECK(varied);
  }
}

TEST_CASE("every sample tunable gives the same output under two configs") {
  for (const auto& t : all_tunables()) {
    if (t.probe) continue;
    CAPTURE(t.name);
    const SizeArgs s = small(t);
    auto p = t.make_problem(s);
    CHECK(p.bytes > 0);
    CHECK(p.flops > 0);
    auto cs = kept(t, s);
    REQUIRE(cs.size() >= 2);
    auto a = run_once(p, cs.front()), b = run_once(p, cs.back());
    CHECK(!a.empty());
    check_close(b, a, p.rtol, p.atol);
    for (double v : a) REQUIRE(std::isfinite(v));
  }
}

TEST_CASE("the FMA probe does exactly its counted chain of FMAs") {
  const Tunable& t = *find_tunable("roofline_fma");
  auto p = t.make_problem(SizeArgs{{1000}});
  CHECK(p.flops == 2.0 * 512 * 1000);
  CHECK(p.bytes == 8000);
  auto x = random_floats(1000, 1);
  std::vector<double> ref;
  for (float v : x) {
    for (int i = 0; i < 512; ++i) v = std::fma(v, 0.999f, 0.001f);
    ref.push_back(v);
  }
  check_close(run_once(p, t.configs(SizeArgs{{1000}})[2]), ref, 1e-6, 1e-6);
  const Tunable& copy = *find_tunable("roofline_copy");
  auto pc = copy.make_problem(SizeArgs{{1000}});
  CHECK(pc.flops == 0);
  std::vector<double> xs(x.begin(), x.end());
  check_close(run_once(pc, copy.configs(SizeArgs{{1000}})[0]), xs, 0, 0);
}

TEST_CASE("tune() over add's space with a host timer ranks all 8 configs") {
  const Tunable& t = *find_tunable("add");
  const SizeArgs s{{1000}};
  auto p = t.make_problem(s);
  auto timer = jit::tune::make_host_timer();
  jit::tune::TuneOptions o;
  o.timer.budget_ms = 1;
  o.timer.min_reps = 1;
  o.timer.warmup = 0;
  o.timer.flush_l2 = false;
  auto r = jit::tune::tune(p, t.configs(s), *timer, o);
  CHECK(r.found);
  REQUIRE(r.ranked.size() == 8);
  for (const auto& c : r.ranked) {
    CAPTURE(c.config.str());
    CHECK(c.status == jit::tune::Status::Ok);
    CHECK(c.timing.median_ms > 0);
  }
  CHECK(r.best == r.ranked.front().config);
}

TEST_CASE("every tunable's host reference matches its configs' outputs, and tune() rejects a wrong one") {
  auto timer = jit::tune::make_host_timer();
  jit::tune::TuneOptions o;
  o.timer.budget_ms = 0;
  o.timer.min_reps = 1;
  o.timer.warmup = 0;
  o.timer.flush_l2 = false;
  for (const auto& t : all_tunables()) {
    CAPTURE(t.name);
    const SizeArgs s = small(t);
    auto p = t.make_problem(s);
    REQUIRE(p.reference);
    REQUIRE(p.poison);
    const jit::tune::Expected e = p.reference();
    auto cs = kept(t, s);
    REQUIRE(cs.size() >= 2);
    const std::vector<Config> two{cs.front(), cs.back()};
    // The reference is computed apart from any config: it matches both configs' outputs...
    for (const auto& c : two) {
      CAPTURE(c.str());
      const auto out = run_once(p, c);
      REQUIRE(out.size() == e.values.size());
      REQUIRE((e.tolerance.empty() || e.tolerance.size() == e.values.size()));
      size_t bad = 0;
      for (size_t i = 0; i < out.size(); ++i) {
        const double tol = e.tolerance.empty() ? p.atol + p.rtol * std::fabs(e.values[i]) : e.tolerance[i];
        if (!(std::fabs(out[i] - e.values[i]) <= tol) && bad++ == 0)
          MESSAGE("first difference at " << i << ": " << out[i] << " vs " << e.values[i] << " (tol " << tol << ")");
      }
      CHECK(bad == 0);
    }
    auto r = jit::tune::tune(p, two, *timer, o);
    CHECK(r.found);
    for (const auto& c : r.ranked) CHECK_MESSAGE(c.status == jit::tune::Status::Ok, c.config.str() << ": " << c.reason);
    // ...and tune() checks against it: a reference off by over ten tolerances at one value rejects both.
    const size_t at = e.values.size() / 2;
    auto off = p;
    off.reference = [&] {
      jit::tune::Expected w = e;
      const double tol = w.tolerance.empty() ? p.atol + p.rtol * std::fabs(w.values[at]) : w.tolerance[at];
      w.values[at] += 10 * tol + 1e-6 * (1 + std::fabs(w.values[at]));  // exact checks have tol 0
      return w;
    };
    auto wrong = jit::tune::tune(off, two, *timer, o);
    CHECK_FALSE(wrong.found);
    for (const auto& c : wrong.ranked) {
      CHECK(c.status == jit::tune::Status::WrongOutput);
      CHECK(c.reason.find("host reference at 1 of") != std::string::npos);
    }
  }
}

TEST_CASE("w4a16_matmul_q8's problem: a scale per row and 128 columns, q * scale within half a step") {
  // N = 300: three quantisation groups a row (the last of 44 columns), so a scale read from the
  // wrong group or row is caught; BLOCK_N stays 128 in every config (the groups' width).
  const Tunable& t = *find_tunable("w4a16_matmul_q8");
  const SizeArgs s{{13, 300, 256}};
  for (const auto& c : t.configs(s)) CHECK(c.meta["BLOCK_N"] == 128);
  auto p = t.make_problem(s);
  const jit::tune::Expected e = p.reference();
  REQUIRE(e.tolerance.size() == e.values.size());
  const auto out = run_once(p, kept(t, s).front());
  REQUIRE(out.size() == e.values.size());
  size_t bad = 0;
  for (size_t i = 0; i < out.size(); ++i) bad += !(std::fabs(out[i] - e.values[i]) <= e.tolerance[i]);
  CHECK(bad == 0);
}

TEST_CASE("attention_fwd's tunable: every config carries the size's head dim and mask, keys tell them apart") {
  const Tunable& t = *find_tunable("attention_fwd");
  for (const SizeArgs& s : {SizeArgs{{8, 16, 2048, 128, 1}}, SizeArgs{{8, 16, 2048, 64, 0}}}) {
    CAPTURE(t.size_str(s));
    int producers = 0;
    for (const Config& c : t.configs(s)) {
      CHECK(c.meta["HEAD_DIM"] == s.dims[3]);
      CHECK(c.meta["CAUSAL"] == s.dims[4]);
      producers += c.opts.warp_specialize;
      CHECK(c.opts.warp_specialize == (c.opts.consumer_registers > 0));  // producer warps always with a budget
    }
    CHECK(producers >= 2);
    // The untuned choice compiles for every target (no producer warps, signals or turns).
    const Config d = t.default_config(s);
    CHECK_FALSE(d.opts.warp_specialize);
    CHECK_FALSE(d.opts.stage_mbarriers);
    CHECK_FALSE(d.opts.warpgroup_turns);
  }
  auto key = [&](const SizeArgs& s) { return t.key.key_string(t.key_values(s), ""); };
  CHECK(key(SizeArgs{{8, 16, 2048, 128, 1}}) != key(SizeArgs{{8, 16, 2048, 64, 1}}));
  CHECK(key(SizeArgs{{8, 16, 2048, 128, 1}}) != key(SizeArgs{{8, 16, 2048, 128, 0}}));
  CHECK(key(SizeArgs{{8, 16, 2048, 128, 1}}) == key(SizeArgs{{4, 16, 2000, 128, 1}}));  // batch: the grid only
  CHECK_THROWS_WITH_AS(t.make_problem(SizeArgs{{1, 2, 64, 96, 1}}), doctest::Contains("head dim 96"), UserError);
  CHECK_THROWS_WITH_AS(t.make_problem(SizeArgs{{1, 2, 64, 64, 2}}), doctest::Contains("causal"), UserError);
  // The check reads whole rows: the non-causal and causal outputs of the same inputs differ.
  const SizeArgs causal{{1, 2, 37, 64, 1}}, full{{1, 2, 37, 64, 0}};
  auto pc = t.make_problem(causal), pf = t.make_problem(full);
  const auto rc = pc.reference(), rf = pf.reference();
  REQUIRE(rc.values.size() == rf.values.size());
  CHECK(rc.values.size() % 64 == 0);
  CHECK(rc.values != rf.values);
  check_close(run_once(pf, t.configs(full).front()), rf.values, pf.rtol, pf.atol);
}
