// plan_kernel: the planners in dependency order (kernel_plan.hpp).
#include "plan/kernel_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "plan/checks.hpp"
#include "plan/dot_plan.hpp"
#include "plan/roles.hpp"
#include "plan/shared_walk.hpp"
#include "tessel/ir/accessors.hpp"
#include "tessel/ir/error.hpp"
#include "tessel/lowering/target.hpp"

namespace tessel::lowering {

KernelPlan::KernelPlan(const ir::Function& fn, const Options& o)
    : f(fn),
      opts(o),
      axis(fn),
      layouts(assign_layouts(fn, o.num_warps, o.target.has_wgmma(), &axis)),
      uses(ir::count_uses(fn)),
      recompute(recomputed_values(fn)) {}

const MmaPlan* KernelPlan::mma(const ir::Op& dot) const {
  auto it = dots.find(&dot);
  return it == dots.end() ? nullptr : &it->second;
}

const PipelinePlan* KernelPlan::pipeline(const ir::Op& loop) const {
  auto it = pipelines.find(&loop);
  return it == pipelines.end() ? nullptr : &it->second;
}

const RingPlan* KernelPlan::ring(const ir::Op& loop) const {
  auto it = rings.find(&loop);
  return it == rings.end() ? nullptr : &it->second;
}

LoopSchedule KernelPlan::schedule(const ir::Op& loop) const {
  if (ring(loop)) return LoopSchedule::Ring;
  if (pipeline(loop)) return LoopSchedule::Pipelined;
  return LoopSchedule::Sequential;
}

namespace {

void plan_dots(KernelPlan& k) {
  ir::walk(k.f.body, [&](const ir::Op& op) {
    if (op.kind != ir::OpKind::Dot) return;
    if (auto m = plan_dot(op, k.opts, k.layouts)) k.dots.emplace(&op, *m);
  });
  ir::walk(k.f.body, [&](const ir::Op& op) {
    if (op.kind != ir::OpKind::Load) return;
    int operand = -1;
    const ir::Op* dot = sole_dot_user(op, operand);
    const MmaPlan* m = dot ? k.mma(*dot) : nullptr;
    const ir::Value* v = op.results[0];
    if (!m) return;
    std::string why = copy_mismatch(k.f, op, operand, *m, k.use_count(v), k.axis, k.layouts.of(v));
    if (why.empty()) k.staged_loads.insert(&op);
    else k.uncopied_loads.emplace(&op, std::move(why));
  });
}

void plan_loops(KernelPlan& k) {
  ir::walk(k.f.body, [&](const ir::Op& op) {
    if (op.kind != ir::OpKind::For) return;
    std::string why;
    if (auto p = plan_pipeline(k, op, &why)) {
      k.pipelines.emplace(&op, std::move(*p));
    } else if (why != "no dot in the body") {
      k.unpipelined.emplace(&op, why);
    }
  });
}

// Loops of one block reading the same operand computed before them, staged alike, share its
// resident staging (ResidentOperand::reused / kept): attention's unmasked and masked key loops
// stage Q once, and Q's registers are not held across the first loop to stage it again.
void share_residents(KernelPlan& k) {
  auto same = [](const SmemTile& a, const SmemTile& b) {
    return a.rows == b.rows && a.row_bytes == b.row_bytes && a.blocked == b.blocked && a.warpgroups == b.warpgroups;
  };
  struct Staged {
    const ir::Op* loop;
    ResidentOperand* r;
  };
  std::map<std::pair<const ir::Block*, const ir::Value*>, Staged> staged;  // the latest loop's
  ir::walk(k.f.body, [&](const ir::Op& op) {
    auto it = k.pipelines.find(&op);
    if (it == k.pipelines.end()) return;
    for (ResidentOperand& r : it->second.resident) {
      auto key = std::make_pair(static_cast<const ir::Block*>(op.parent), r.value());
      auto earlier = staged.find(key);
      // Across loops only: two dots of one loop reading the same operand each stage it.
      if (earlier != staged.end() && earlier->second.loop != &op && same(earlier->second.r->tile, r.tile) &&
          k.mma(*earlier->second.r->dot)->wgmma == k.mma(*r.dot)->wgmma) {
        earlier->second.r->kept = true;
        r.reused = true;
      }
      if (earlier == staged.end() || earlier->second.loop != &op) staged[key] = Staged{&op, &r};
    }
  });
}

// Warp specialisation: the pipelined wgmma loops become rings; with Options::tma their operands
// are copied by TMA where plan_tma accepts every operand (single-dot loops). A ring loop of
// several dots after another in the same block, with stages of the same size, continues that
// loop's ring (RingPlan::shares) instead of pinning a second one.
void plan_rings(KernelPlan& k) {
  if (!k.opts.warp_specialize) return;
  const bool tma = k.opts.tma && k.opts.target.has_wgmma() && k.opts.target.has_tma();
  auto index_of = [&](const TensorMapRecipe& m) {
    auto same = std::find(k.launch.tensor_maps.begin(), k.launch.tensor_maps.end(), m);
    if (same == k.launch.tensor_maps.end()) k.launch.tensor_maps.push_back(m);
    return static_cast<int>(std::find(k.launch.tensor_maps.begin(), k.launch.tensor_maps.end(), m) - k.launch.tensor_maps.begin());
  };
  std::vector<const ir::Op*> owners;  // ring loops of several dots with a ring of their own
  ir::walk(k.f.body, [&](const ir::Op& op) {
    const PipelinePlan* p = k.pipeline(op);
    if (!p || !k.mma(*p->dot)->wgmma) return;
    RingPlan r;
    r.stages = p->stages * (k.shared_ring() ? k.opts.programs_per_cta : 1);
    r.stage_bytes = p->stage_bytes;
    r.align = p->stage_align;
    r.full_arrivals = k.producer_threads();
    const bool several = p->dots.size() > 1;
    if (several)
      for (const ir::Op* earlier : owners) {  // the first such ring, in IR order
        const RingPlan& er = k.rings.at(earlier);
        if (earlier->parent == op.parent && er.stages == r.stages && er.stage_bytes == r.stage_bytes &&
            er.align == r.align) {
          r.shares = earlier;
          break;
        }
      }
    if (several && !r.shares) owners.push_back(&op);
    std::optional<std::vector<TmaOperand>> ops;
    if (tma && several)
      r.tma_why = "loops of several dots (a ring shared by K and V) are copied by cp.async only";
    else if (tma)
      ops = plan_tma(k.f, op, *p, r.tma_why);
    if (ops) {
      for (TmaOperand& t : *ops) {
        // A multicast operand copies its 8-row boxes only: which path (view or not) a CTA takes
        // depends on its own tile, and both CTAs of a pair must issue the same boxes.
        if (t.multicast) t.view = TensorMapRecipe{};
        t.map_index = index_of(t.map);
        if (!t.view.view.empty()) t.view_index = index_of(t.view);
        k.cluster_pair |= t.multicast;
      }
      r.full_arrivals = tma_issuers(*p, *ops, KernelPlan::kProducerWarps / k.opts.programs_per_cta);
      r.tma = std::move(*ops);
    }
    r.lean_copies = !r.by_tma();
    k.rings.emplace(&op, std::move(r));
  });
}

// Options::consumer_registers: the kernel's count, and what setmaxnreg moves between the roles.
// (Registers are handed out 8 per thread at a time; the CTA's total is the kernel's count times
// its threads.)
void plan_register_budget(KernelPlan& k) {
  const int want = k.opts.consumer_registers;
  if (want == 0) return;
  const int threads = k.launch.threads;
  const int consumers = k.program_threads() * k.opts.programs_per_cta, producers = threads - consumers;
  const int kernel = k.opts.max_registers ? k.opts.max_registers : std::min(255, 65536 / threads) / 8 * 8;
  if (want <= kernel)
    throw CompileError({}, fmt::format("kernel '{}': consumer_registers {} must exceed the {} registers every one of "
                                       "the CTA's {} threads starts with (setmaxnreg only raises them)",
                                       k.f.name, want, kernel, threads));
  const int left = (kernel * threads - want * consumers) / producers / 8 * 8;
  if (left < 24)
    throw CompileError({}, fmt::format("kernel '{}': consumer_registers {} for {} threads leaves the {} producer "
                                       "threads {} registers each of the CTA's {} x {}; setmaxnreg needs at least 24 "
                                       "(at most {})",
                                       k.f.name, want, consumers, producers, left, threads, kernel,
                                       (kernel * threads - 24 * producers) / consumers / 8 * 8));
  k.registers = {kernel, want, left};
}

// The shared memory, walked in the emitter's order (shared_walk.hpp), within the target's limit;
// its bytes are the launch's.
void plan_shared(KernelPlan& k) {
  k.shared = walk_shared(k);
  const int64_t bytes = k.shared.placement.total, limit = target_info(k.opts.target).max_shared_per_block;
  const int P = k.opts.programs_per_cta;
  if (bytes > limit)
    throw CompileError({}, fmt::format("kernel '{}' needs {} bytes of shared memory for reductions, layout "
                                       "conversions and K-loop stages{} ({} allows {}); use smaller tiles{}",
                                       k.f.name, bytes, P > 1 ? fmt::format(" of {} programs", P) : "",
                                       k.opts.target.arch(), limit, P > 1 ? ", fewer stages or one program per CTA" : ""));
  k.launch.shared_bytes = static_cast<int>(bytes);
}

}  // namespace

KernelPlan plan_kernel(const ir::Function& f, const Options& o) {
  check_kernel(f, o);
  KernelPlan k(f, o);
  plan_dots(k);
  for (const auto& [op, mma] : k.dots) k.checks_trap = k.checks_trap || mma.wgmma;
  plan_loops(k);
  share_residents(k);
  plan_rings(k);
  if (o.warp_specialize) {
    plan_roles(k);
    check_producer_rings(k);
    compact_ring_pointers(k);
  }
  // The record's other fields beside the tensor maps plan_rings gathered.
  LaunchSpec l = launch_spec(entry_symbol(f, o), o.num_warps, o.programs_per_cta, o.warp_specialize,
                             static_cast<int>(f.params.size()));
  l.tensor_maps = std::move(k.launch.tensor_maps);
  l.cluster_ctas = k.cluster_pair ? 2 : 1;
  k.launch = std::move(l);
  plan_register_budget(k);
  plan_shared(k);
  return k;
}

}  // namespace tessel::lowering
