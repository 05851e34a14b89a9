// Software pipelining of K loops: matching a loop against the pattern.
#include "plan/pipeline_plan.hpp"

#include <fmt/format.h>

#include <set>

#include "plan/kernel_plan.hpp"
#include "tessel/ir/accessors.hpp"

namespace tessel::lowering {
namespace {

bool is_body_arg(const ir::ForOp& loop, const ir::Value* v, bool& is_iv) {
  is_iv = v == loop.induction_var();
  if (is_iv) return true;
  for (int c = 0; c < loop.num_carried(); ++c)
    if (v == loop.carried(c)) return true;
  return false;
}

// Adds the body ops `v` is computed from to `out`; false when it depends on a carried value
// (or on the induction variable unless `allow_iv`) or on an op that cannot be lowered again
// (effects, regions, random numbers, dots). Values from outside the body are free.
bool collect(const ir::ForOp& loop, const ir::Value* v, bool allow_iv, std::set<const ir::Op*>& out) {
  bool is_iv = false;
  if (is_body_arg(loop, v, is_iv)) return is_iv && allow_iv;
  const ir::Op* d = v->def;
  if (!d || d->parent != &loop.body()) return true;
  if (out.count(d)) return true;
  using K = ir::OpKind;
  if (!ir::is_pure(d->kind) || !d->regions.empty() || d->kind == K::Rand || d->kind == K::RandN ||
      d->kind == K::Dot)
    return false;
  out.insert(d);
  for (const ir::Value* o : d->operands)
    if (!collect(loop, o, allow_iv, out)) return false;
  return true;
}

std::vector<const ir::Op*> in_block_order(const ir::Block& body, const std::set<const ir::Op*>& ops) {
  std::vector<const ir::Op*> out;
  for (const auto& o : body.ops)
    if (ops.count(o.get())) out.push_back(o.get());
  return out;
}

// The body's only dot, or null with `why` set.
const ir::Op* sole_dot(const ir::Block& body, std::string& why) {
  const ir::Op* dot = nullptr;
  for (const auto& o : body.ops) {
    if (o->kind == ir::OpKind::Yield) continue;
    if (o->kind == ir::OpKind::Dot) {
      if (dot) {
        why = "more than one dot in the body";
        return nullptr;
      }
      dot = o.get();
    }
    // Issuing a load trips early is only sound when nothing in the loop writes memory.
    const ir::Effect e = o->info().effect;
    if (e == ir::Effect::Writes || e == ir::Effect::Loop || e == ir::Effect::Terminator) {
      why = fmt::format("the body has a {} (loads cannot be issued trips ahead past it)", o->name());
      return nullptr;
    }
  }
  if (!dot) why = "no dot in the body";
  return dot;
}

// Operand i of the plan's dot as a pipelined copy, or nullopt with `why` set.
std::optional<PipelinedOperand> plan_operand(const KernelPlan& k, const ir::ForOp& loop, const ir::Op& dot,
                                             const MmaPlan& mma, int i, std::set<const ir::Op*>& mask_ops,
                                             std::set<const ir::Op*>& step_ops, std::string& why) {
  const ir::Block& body = loop.body();
  const ir::Value* v = dot.operands[i];
  const ir::Op* load = v->def;
  const char* name = i == 0 ? "a" : "b";
  if (!load || load->kind != ir::OpKind::Load || load->parent != &body || !k.stages_load(*load)) {
    why = fmt::format("operand {} is not a load in the body that the dot copies by cp.async (16-byte copies of a "
                      "single-use tile, zero `other`, f16/bf16/i8 operands)",
                      name);
    return std::nullopt;
  }
  ir::LoadOp ld{*load};
  PipelinedOperand po;
  po.load = load;
  for (int c = 0; c < loop.num_carried(); ++c)
    if (ld.ptr() == loop.carried(c)) po.carried = c;
  if (po.carried < 0) {
    why = fmt::format("operand {}'s pointers are not a loop-carried value", name);
    return std::nullopt;
  }
  // The yield must be `carried + step`, step invariant: then trip j reads init + j * step.
  const ir::Value* next = loop.yield().operands.at(po.carried);
  const ir::Op* add = next->def;
  if (!add || add->kind != ir::OpKind::AddPtr || add->parent != &body || add->operands[0] != ld.ptr()) {
    why = fmt::format("operand {}'s pointers are not advanced as `ptrs + step` each trip", name);
    return std::nullopt;
  }
  po.step = add->operands[1];
  if (!collect(loop, po.step, false, step_ops)) {
    why = fmt::format("operand {}'s pointer step changes from trip to trip", name);
    return std::nullopt;
  }
  // The pointers of later trips are computed in the carried layout and used as the load's.
  const Layout& lc = k.layouts.of(ld.ptr());
  if (!(lc == k.layouts.of(v)) || !(lc == k.layouts.of(next))) {
    why = fmt::format("operand {}'s pointers change layout inside the loop", name);
    return std::nullopt;
  }
  if (ld.mask() && !collect(loop, ld.mask(), true, mask_ops)) {
    why = fmt::format("operand {}'s mask depends on values carried through the loop", name);
    return std::nullopt;
  }
  po.tile = i == 0 ? mma.a : mma.b;
  po.offset = i == 0 ? 0 : mma.b_offset;
  return po;
}

}  // namespace

std::optional<PipelinePlan> plan_pipeline(const KernelPlan& k, const ir::Op& op, std::string* why_out) {
  std::string why;
  auto fail = [&]() -> std::optional<PipelinePlan> {
    if (why_out) *why_out = why;
    return std::nullopt;
  };
  ir::ForOp loop{op};
  const ir::Block& body = loop.body();
  const ir::Op* dot = sole_dot(body, why);
  if (!dot) return fail();
  if (k.opts.num_stages < 2) {
    why = "num_stages is 1";
    return fail();
  }
  const MmaPlan* mma = k.mma(*dot);
  if (!mma) {
    why = "the dot does not run on tensor cores here";
    return fail();
  }
  PipelinePlan p;
  p.dot = dot;
  p.stages = k.opts.num_stages;
  p.stage_align = mma->wgmma ? 1024 : 128;
  p.stage_bytes = (mma->smem_bytes() + p.stage_align - 1) / p.stage_align * p.stage_align;
  std::set<const ir::Op*> mask_ops, step_ops;
  for (int i = 0; i < 2; ++i) {
    auto po = plan_operand(k, loop, *dot, *mma, i, mask_ops, step_ops, why);
    if (!po) return fail();
    p.operands.push_back(*po);
  }
  if (p.operands[0].load == p.operands[1].load) {
    why = "both operands are the same load";
    return fail();
  }
  p.ahead = p.stages - 1;
  // Under warp specialisation a wgmma loop is a ring (plan_rings), whose turns are the ring's.
  p.turns = k.opts.programs_per_cta > 1 && mma->wgmma && !k.opts.warp_specialize;
  // A wgmma dot keeps its group in flight into the next trip; the copies still run S - 1
  // trips ahead: they go after the trip's wgmma wait (and, with several warpgroups, after a
  // barrier that every warpgroup reaches past its own wait), into the buffer the previous
  // trip's groups read (Triton's order). H200 run 22 (bench/history): 128x256x64 w8 s4 at
  // 4096^3 0.207 ms against 0.233 with the former S - 2 lead for two warpgroups.
  const ir::Op& yield = loop.yield();
  if (mma->wgmma && k.use_count(dot->results[0]) == 1)
    for (int c = 0; c < loop.num_carried(); ++c)
      if (yield.operands.at(c) == dot->results[0] && dot->operands[2] == loop.carried(c)) p.wgmma_in_flight = c;
  p.mask_ops = in_block_order(body, mask_ops);
  p.step_ops = in_block_order(body, step_ops);
  return p;
}

}  // namespace tessel::lowering
