// The plan's shared memory (plan/shared_walk.hpp) against the emitter's use of it: the emitter
// follows the plan's steps and stops with an internal error at the first one it would take
// differently (emit/shared_steps.hpp), so every compile here checks every request (its bytes
// and slot), barrier and reuse, in order; the walks' steps are checked where they are known.
#include <doctest/doctest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "../common/scoped_fs_env.hpp"
#include "matmul_specs.hpp"
#include "plan/kernel_plan.hpp"
#include "emit/shared_steps.hpp"
#include "plan/shared_walk.hpp"
#include "tessel/lowering/compile.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;
using golden_test::aligned;
using golden_test::entry;
using Kind = lowering::SharedSlots::Event::Kind;

namespace {
using namespace tessel::lang;

// One sum across the warps a trip: each trip's exchange takes the slot the previous trip's
// reads may still be using, so the latch needs a barrier (the alternation of two slots that
// saves it needs two exchanges a trip).
void one_sum_a_trip_kernel(Ptr<f32> x, Ptr<f32> out, Int n, const Meta&) {
  auto r = arange(0, 1024);
  Var total{full<f32>({1024}, 0.0f)};
  for (auto i : range(0, n, 1)) total = total.get() + sum(load(x + i * 1024 + r), 0);
  store(out + r, total.get());
}

// An acq_rel arrival whose old value is used, as split-K's last-arrival sum takes it: one thread
// adds, the others learn the value through shared memory (the barrier before the release and
// the exchange's); and a tile of acq_rel adds each thread owns, used: no exchange, a barrier after.
void arrivals_kernel(Ptr<i32> count, Ptr<i32> tiles, Ptr<i32> out, const Meta&) {
  auto arrived = atomic_add(count, 1, Order::acq_rel);
  auto r = arange(0, 256);
  auto old = atomic_add(tiles + r, 1, Order::acq_rel);
  store(out + r, old + arrived);
}

// A transpose, a scan across the warps and a reshape that moves elements between threads:
// one exchange each.
void shapes_kernel(Ptr<f32> x, Ptr<f32> out, const Meta&) {
  auto r = arange(0, 64);
  auto t = load(x + r.col() * 64 + r.row());
  store(out + r.col() * 64 + r.row(), trans(t));
  auto n = arange(0, 1024);
  store(out + 4096 + n, cumsum(load(x + n), 0));
  auto v = reshape(load(x + arange(0, 4096)), {64, 64});
  store(out + 8192 + r.col() * 64 + r.row(), v * 2.0f);
}

lowering::Options options(const std::string& arch, int warps) {
  lowering::Options o;
  o.target = lowering::Target::parse(arch);
  o.num_warps = warps;
  return o;
}
}  // namespace

TEST_CASE("shared-memory walk: the plan's requests are the emitter's, step by step, for the kernels it covers") {
  // Reductions across warps (softmax, the LayerNorms), chains of elementwise ops with
  // broadcasts (bias, GELU, BN), a scalar combine over a short row (attention_decode_combine),
  // and sequential loops carrying tiles (the looped LayerNorm, the online softmax,
  // cross-entropy).
  const std::vector<std::string> kernels{"softmax",        "layernorm_f16", "layernorm_bf16",
                                         "layernorm_f32",  "bias_gelu_2d",  "bn_relu_nhwc",
                                         "sin_cos",        "attention_decode_combine", "add",
                                         "layernorm_looped_f16", "softmax_online", "cross_entropy"};
  int exchanging = 0;
  for (const std::string& name : kernels)
    for (const char* arch : {"sm_80", "sm_90a"})
      for (int warps : {2, 4, 8}) {
        CAPTURE(name);
        CAPTURE(arch);
        CAPTURE(warps);
        const jit::KernelEntry& k = entry(name.c_str());
        auto f = k.build_ir(k.defaults, aligned(k, k.defaults));
        const lowering::Options o = options(arch, warps);
        const lowering::SharedPlan w = lowering::plan_kernel(*f, o).shared;
        int takes = 0;
        for (const auto& e : w.events) takes += e.kind == Kind::Take;
        exchanging += takes > 0;
        // Throws (an internal error naming the step) where the emitter's steps differ from the walk's.
        CHECK_NOTHROW(lowering::compile(*f, o));
      }
  CHECK(exchanging >= 16);  // softmax and the LayerNorms exchange at every target and warp count
}

TEST_CASE("shared-memory walk: several programs a CTA lay their turn words after the slots") {
  const jit::KernelEntry& k = entry("matmul");
  auto f = k.build_ir(k.defaults, aligned(k, k.defaults));
  lowering::Options o = options("sm_90a", 4);
  o.num_stages = 3;
  o.programs_per_cta = 2;
  const lowering::KernelPlan plan = lowering::plan_kernel(*f, o);
  CHECK(plan.shared.turn_bytes == 32);  // a turn and a retired mbarrier a program
  CHECK(plan.shared.placement.turns >= 2 * plan.shared.placement.region);
  CHECK(plan.launch.shared_bytes == plan.shared.placement.total);
  CHECK_NOTHROW(lowering::compile(*f, o));
}

TEST_CASE("shared-memory walk: every sample kernel's steps are the emitter's") {
  tessel::samples::register_sample_kernels();
  // Plain and pipelined loops (cp.async stages, signalled by mbarriers or by barriers), mma.sync
  // and wgmma, one warpgroup or two, producer warps (rings, for the kernels whose K loop takes one).
  struct Config {
    const char* arch;
    int warps, stages;
    bool mbarriers, ws;
  };
  for (const Config c : {Config{"sm_80", 4, 3, false, false}, Config{"sm_90a", 4, 1, false, false},
                         Config{"sm_90a", 4, 3, false, false}, Config{"sm_90a", 8, 2, false, false},
                         Config{"sm_90a", 8, 3, true, false}, Config{"sm_90a", 4, 3, false, true}}) {
    int kernels = 0, with_steps = 0;
    for (const jit::KernelEntry* k : jit::Registry::global().list()) {
      auto f = k->build_ir(k->defaults, aligned(*k, k->defaults));
      lowering::Options o = options(c.arch, c.warps);
      o.num_stages = c.stages;
      o.stage_mbarriers = c.mbarriers;
      o.warp_specialize = c.ws;
      std::optional<lowering::KernelPlan> plan;
      try {
        plan.emplace(lowering::plan_kernel(*f, o));
      } catch (const CompileError&) {
        REQUIRE(c.ws);  // producer warps need a K loop that pipelines onto wgmma
        continue;
      }
      ++kernels;
      with_steps += !plan->shared.events.empty();
      CAPTURE(k->name);
      CAPTURE(c.arch);
      CAPTURE(c.warps);
      CAPTURE(c.stages);
      CHECK_NOTHROW(lowering::compile(*f, o));
    }
    CHECK(kernels >= (c.ws ? 8 : 70));
    CHECK(with_steps >= kernels / 2);
  }
}

TEST_CASE("shared-memory walk: a loop whose trips reuse one slot barriers at its latch, in both") {
  jit::Kernel kernel{"one_sum_a_trip", &one_sum_a_trip_kernel, {"x", "out", "n"}, lang::Meta{}};
  auto f = kernel.build_ir(lang::Meta{}, std::vector<ir::ParamSpec>(3, ir::ParamSpec{true, false}));
  for (int warps : {2, 4, 8}) {
    CAPTURE(warps);
    const lowering::Options o = options("sm_90a", warps);
    const lowering::SharedPlan w = lowering::plan_kernel(*f, o).shared;
    std::string steps;
    for (const auto& e : w.events) steps += e.str() + "; ";
    // Each warp's partial sum, 4 bytes, rounded up to 16.
    const int bytes = std::max(16, 4 * warps);
    CHECK(steps == "loop begin; take 0 (" + std::to_string(bytes) +
                       " B, align 16); barrier; touch 0; barrier; loop latch; loop exit; ");
    CHECK_NOTHROW(lowering::compile(*f, o));
  }
}

TEST_CASE("shared-memory walk: acq_rel atomics, their barriers and the old value's exchange") {
  jit::Kernel kernel{"arrivals", &arrivals_kernel, {"count", "tiles", "out"}, lang::Meta{}};
  auto f = kernel.build_ir(lang::Meta{}, std::vector<ir::ParamSpec>(3, ir::ParamSpec{true, false}));
  const lowering::Options o = options("sm_90a", 4);
  const lowering::SharedPlan w = lowering::plan_kernel(*f, o).shared;
  std::string steps;
  for (const auto& e : w.events) steps += e.str() + "; ";
  CHECK(steps == "barrier; take 0 (16 B, align 16); barrier; touch 0; barrier; barrier; ");
  CHECK_NOTHROW(lowering::compile(*f, o));
}

TEST_CASE("shared-memory walk: transposes, scans and reshapes through shared memory") {
  jit::Kernel kernel{"shapes", &shapes_kernel, {"x", "out"}, lang::Meta{}};
  auto f = kernel.build_ir(lang::Meta{}, std::vector<ir::ParamSpec>(2, ir::ParamSpec{true, false}));
  for (const char* arch : {"sm_80", "sm_90a"})
    for (int warps : {2, 4, 8}) {
      CAPTURE(arch);
      CAPTURE(warps);
      const lowering::Options o = options(arch, warps);
      const lowering::SharedPlan w = lowering::plan_kernel(*f, o).shared;
      int takes = 0;
      for (const auto& e : w.events) takes += e.kind == Kind::Take;
      INFO("steps: " << [&] {
        std::string t;
        for (const auto& e : w.events) t += e.str() + "; ";
        return t;
      }());
      CHECK(takes >= 2);  // the transpose's and the scan's at least
      CHECK_NOTHROW(lowering::compile(*f, o));
    }
}

TEST_CASE("shared-memory steps: the emitter stops at the first step the plan does not have") {
  using Event = lowering::SharedSlots::Event;
  lowering::SharedPlan plan;
  plan.events = {{Kind::Take, 0, 512, 16}, {Kind::Barrier}, {Kind::Touch, 0}};
  plan.requests = {{0, false}};
  plan.budgets = {4096};
  {
    lowering::SharedSteps steps(plan, "k");
    CHECK(steps.next_request().slot == 0);
    CHECK(steps.next_budget() == 4096);
    steps.step(Event{Kind::Take, 0, 512, 16});
    CHECK_THROWS_WITH_AS(steps.step(Event{Kind::Touch, 0}),
                         doctest::Contains("step 1 of 3 is 'barrier' in the plan, 'touch 0' in the emitter"),
                         InternalError);
    CHECK_THROWS_AS(steps.next_request(), InternalError);  // one request planned
  }
  {
    lowering::SharedSteps steps(plan, "k");
    (void)steps.next_request();
    steps.step(Event{Kind::Take, 0, 512, 16});
    CHECK_THROWS_AS(steps.finish(), InternalError);  // two steps and the budget left
    CHECK_THROWS_AS(steps.step(Event{Kind::Take, 0, 256, 16}), InternalError);  // not the planned bytes
  }
}
