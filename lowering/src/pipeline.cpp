// Software pipelining of K loops: matching a loop against the pattern, and issuing one stage's copies.
#include "pipeline.hpp"

#include <llvm/IR/IntrinsicsNVPTX.h>

#include <set>

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

}  // namespace

std::optional<PipelinePlan> plan_pipeline(Lowerer& L, const ir::Op& op) {
  if (L.opts.num_stages < 2) return std::nullopt;
  ir::ForOp loop{op};
  const ir::Block& body = loop.body();
  const ir::Op* dot = nullptr;
  for (const auto& o : body.ops) {
    if (o->kind == ir::OpKind::Yield) continue;
    if (o->kind == ir::OpKind::Dot) {
      if (dot) return std::nullopt;
      dot = o.get();
    }
    // Issuing a load trips early is only sound when nothing in the loop writes memory.
    const ir::Effect e = o->info().effect;
    if (e == ir::Effect::Writes || e == ir::Effect::Loop || e == ir::Effect::Terminator) return std::nullopt;
  }
  if (!dot) return std::nullopt;
  auto mma = mma_plan_of(L, *dot);
  if (!mma) return std::nullopt;

  PipelinePlan p;
  p.dot = dot;
  p.stages = L.opts.num_stages;
  p.stage_align = mma->wgmma ? 1024 : 128;
  p.stage_bytes = (mma->smem_bytes() + p.stage_align - 1) / p.stage_align * p.stage_align;
  const ir::Op& yield = loop.yield();
  std::set<const ir::Op*> mask_ops, step_ops;
  for (int i = 0; i < 2; ++i) {
    const ir::Value* v = dot->operands[i];
    const ir::Op* load = v->def;
    if (!load || load->kind != ir::OpKind::Load || load->parent != &body || !dot_stages_load(L, *load))
      return std::nullopt;
    ir::LoadOp ld{*load};
    PipelinedOperand po;
    po.load = load;
    for (int c = 0; c < loop.num_carried(); ++c)
      if (ld.ptr() == loop.carried(c)) po.carried = c;
    if (po.carried < 0) return std::nullopt;
    // The yield must be `carried + step`, step invariant: then trip j reads init + j * step.
    const ir::Value* next = yield.operands.at(po.carried);
    const ir::Op* add = next->def;
    if (!add || add->kind != ir::OpKind::AddPtr || add->parent != &body || add->operands[0] != ld.ptr())
      return std::nullopt;
    po.step = add->operands[1];
    if (!collect(loop, po.step, false, step_ops)) return std::nullopt;
    // The pointers of later trips are computed in the carried layout and used as the load's.
    const Layout& lc = L.layouts.of(ld.ptr());
    if (!(lc == L.layouts.of(v)) || !(lc == L.layouts.of(next))) return std::nullopt;
    if (ld.mask() && !collect(loop, ld.mask(), true, mask_ops)) return std::nullopt;
    po.tile = i == 0 ? mma->a : mma->b;
    po.offset = i == 0 ? 0 : mma->b_offset;
    p.operands.push_back(po);
  }
  if (p.operands[0].load == p.operands[1].load) return std::nullopt;
  p.ahead = p.stages - 1;
  // A wgmma dot keeps its group in flight into the next trip; the copies still run S - 1
  // trips ahead: they go after the trip's wgmma wait (and, with several warpgroups, after a
  // barrier that every warpgroup reaches past its own wait), into the buffer the previous
  // trip's groups read (Triton's order). H200 run 22 (bench/RESULTS.md): 128x256x64 w8 s4 at
  // 4096^3 0.207 ms against 0.233 with the former S - 2 lead for two warpgroups.
  if (mma->wgmma && L.use_count(dot->results[0]) == 1)
    for (int c = 0; c < loop.num_carried(); ++c)
      if (yield.operands.at(c) == dot->results[0] && dot->operands[2] == loop.carried(c)) p.wgmma_in_flight = c;
  p.mask_ops = in_block_order(body, mask_ops);
  p.step_ops = in_block_order(body, step_ops);
  return p;
}

void issue_stage(Lowerer& L, const ir::Op& op, const PipelinePlan& p, llvm::Value* base, llvm::Value* iv,
                 llvm::Value* runs, const std::vector<Regs>& ptrs, bool commit) {
  ir::ForOp loop{op};
  auto& b = L.b;
  L.with_rebound({{loop.induction_var(), Regs{iv}}}, p.mask_ops, [&] {
    llvm::Value* guard = runs;
    for (size_t o = 0; o < p.operands.size(); ++o) {
      const PipelinedOperand& po = p.operands[o];
      const Layout& l = L.layouts.of(po.load->results[0]);
      Regs mask;
      if (ir::LoadOp{*po.load}.mask()) mask = L.operand(*po.load, 1, &l);
      stage_async(L, b.CreateConstGEP1_64(b.getInt8Ty(), base, po.offset), po.tile, *po.load, ptrs[o], mask, guard);
    }
  });
  if (commit) L.intrinsic(llvm::Intrinsic::nvvm_cp_async_commit_group, {}, {});
}

}  // namespace tessel::lowering
