// Software pipelining of K loops: matching a loop against the pattern.
#include "plan/pipeline_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <set>

#include "plan/access.hpp"
#include "plan/dot_plan.hpp"
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

// The body's dots in block order, or none with `why` set.
std::vector<const ir::Op*> body_dots(const ir::Block& body, std::string& why) {
  std::vector<const ir::Op*> dots;
  for (const auto& o : body.ops) {
    if (o->kind == ir::OpKind::Yield) continue;
    if (o->kind == ir::OpKind::Dot) dots.push_back(o.get());
    // Issuing a load trips early is only sound when nothing in the loop writes memory.
    const ir::Effect e = o->info().effect;
    if (e == ir::Effect::Writes || e == ir::Effect::Loop || e == ir::Effect::Terminator) {
      why = fmt::format("the body has a {} (loads cannot be issued trips ahead past it)", o->name());
      return {};
    }
  }
  if (dots.empty()) why = "no dot in the body";
  return dots;
}

// Is `v` computed outside the loop (the same value every trip)?
bool invariant(const ir::ForOp& loop, const ir::Value* v) { return !v->block->is_within(&loop.body()); }

// Is operand i of `dot` a load in the body that the dot copies by cp.async?
bool copied_in_body(const KernelPlan& k, const ir::ForOp& loop, const ir::Op& dot, int i) {
  const ir::Op* load = dot.operands[i]->def;
  return load && load->kind == ir::OpKind::Load && load->parent == &loop.body() && k.stages_load(*load);
}

// Is operand i of `dot` staged from registers every trip: computed in the body (no copy of a
// load, not loop-invariant) and not read from registers by its instruction?
bool staged_every_trip(const KernelPlan& k, const ir::ForOp& loop, const ir::Op& dot, int i) {
  return !k.mma(dot)->in_registers(i) && !copied_in_body(k, loop, dot, i) && !invariant(loop, dot.operands[i]);
}

// The pointers and mask of `load` (whose result is `v`) for a copy issued trips ahead: a carried
// pointer tile advanced by an invariant step, or pointers computed from the induction variable;
// the ops they need go to step_ops / mask_ops. False with `why` set otherwise.
bool plan_pointers(const KernelPlan& k, const ir::ForOp& loop, const ir::Op& load, const std::string& name,
                   PipelinedOperand& po, std::set<const ir::Op*>& mask_ops, std::set<const ir::Op*>& step_ops,
                   std::string& why) {
  const ir::Block& body = loop.body();
  const ir::Value* v = load.results[0];
  ir::LoadOp ld{load};
  po.load = &load;
  for (int c = 0; c < loop.num_carried(); ++c)
    if (ld.ptr() == loop.carried(c)) po.carried = c;
  if (po.carried < 0) {
    // Pointers computed in the body: from the induction variable and invariants only, in the
    // load's layout; recomputed for the trip being issued like the masks.
    std::set<const ir::Op*> addr;
    if (!collect(loop, ld.ptr(), true, addr)) {
      why = fmt::format("{}'s pointers are neither a loop-carried value nor computed from the induction variable "
                        "and values from outside the loop",
                        name);
      return false;
    }
    if (!(k.layouts.of(ld.ptr()) == k.layouts.of(v))) {
      why = fmt::format("{}'s pointers are computed in another layout than the load's", name);
      return false;
    }
    if (ld.mask() && !collect(loop, ld.mask(), true, mask_ops)) {
      why = fmt::format("{}'s mask depends on values carried through the loop", name);
      return false;
    }
    mask_ops.insert(addr.begin(), addr.end());
    return true;
  }
  // The yield must be `carried + step`, step invariant: then trip j reads init + j * step.
  const ir::Value* next = loop.yield().operands.at(po.carried);
  const ir::Op* add = next->def;
  if (!add || add->kind != ir::OpKind::AddPtr || add->parent != &body || add->operands[0] != ld.ptr()) {
    why = fmt::format("{}'s pointers are not advanced as `ptrs + step` each trip", name);
    return false;
  }
  po.step = add->operands[1];
  if (!collect(loop, po.step, false, step_ops)) {
    why = fmt::format("{}'s pointer step changes from trip to trip", name);
    return false;
  }
  // The pointers of later trips are computed in the carried layout and used as the load's.
  const Layout& lc = k.layouts.of(ld.ptr());
  if (!(lc == k.layouts.of(v)) || !(lc == k.layouts.of(next))) {
    why = fmt::format("{}'s pointers change layout inside the loop", name);
    return false;
  }
  if (ld.mask() && !collect(loop, ld.mask(), true, mask_ops)) {
    why = fmt::format("{}'s mask depends on values carried through the loop", name);
    return false;
  }
  return true;
}

std::optional<PipelinedOperand> plan_operand(const KernelPlan& k, const ir::ForOp& loop, const ir::Op& dot,
                                             const MmaPlan& mma, int i, std::set<const ir::Op*>& mask_ops,
                                             std::set<const ir::Op*>& step_ops, std::string& why) {
  PipelinedOperand po;
  po.dot = &dot;
  po.operand = i;
  if (!plan_pointers(k, loop, *dot.operands[i]->def, fmt::format("operand {}", i == 0 ? "a" : "b"), po, mask_ops,
                     step_ops, why))
    return std::nullopt;
  po.tile = i == 0 ? mma.a : mma.b;
  return po;
}

// A prefetched value copied once (dense): its row-major tile, in whole 16-byte runs.
int64_t dense_bytes(const ir::Value* v) { return (v->type.numel() * v->type.dtype.bytes() + 15) / 16 * 16; }

// A load of the body that no dot copies, prefetched into the stage when its pointers allow it
// and it moves vectors of 4, 8 or 16 bytes with a zero (or no) `other`; else it stays a load of
// its trip (nothing fails). Its masks and pointer ops are added to mask_ops / step_ops (the
// caller's copies, kept only when it takes the load).
std::optional<PipelinedOperand> plan_prefetch(const KernelPlan& k, const ir::ForOp& loop, const ir::Op& load,
                                              std::set<const ir::Op*>& mask_ops, std::set<const ir::Op*>& step_ops) {
  const ir::Value* v = load.results[0];
  ir::LoadOp ld{load};
  if (v->type.is_scalar() || v->type.dtype.is_bool()) return std::nullopt;
  if (ld.other() && !is_zero_constant(ld.other())) return std::nullopt;
  const Layout& l = k.layouts.of(v);
  const ir::Shape& shape = v->type.shape;
  const int64_t eb = v->type.dtype.bytes();
  auto fits = [](int64_t bytes) { return bytes == 4 || bytes == 8 || bytes == 16; };
  const int64_t vec = access_vector_width(k.axis, ld.ptr(), ld.mask(), l, shape, eb) * eb;
  PipelinedOperand po;
  std::string why;
  if (!plan_pointers(k, loop, load, "the load", po, mask_ops, step_ops, why)) return std::nullopt;
  // The layouts its users read it in, other than its own.
  for (const auto& o : loop.body().ops)
    for (int i = 0; i < o->num_operands(); ++i) {
      if (o->operands[i] != v || o.get() == &load) continue;
      const Layout* at = k.layouts.of_op(*o);
      std::optional<Layout> want = at ? operand_layout(*o, i, *at) : std::nullopt;
      if (want && !(*want == l) && std::find(po.reads.begin(), po.reads.end(), *want) == po.reads.end())
        po.reads.push_back(*want);
    }
  if (fits(vec) && po.reads.empty()) {
    po.vec_bytes = vec;
    po.bytes = num_regs(l, shape) * eb * k.program_threads();
  } else if (fits(vec)) {
    po.dense = l;  // copied in its own layout, read in the others too
    po.vec_bytes = vec;
    po.bytes = dense_bytes(v);
  } else {
    // Narrower than a copy: in a copy layout, where its pointers can be recomputed in it.
    if (!po.from_iv()) return std::nullopt;
    Layout c = copy_layout(shape, static_cast<int>(eb), k.opts.num_warps);
    const int64_t cvec = access_vector_width(k.axis, ld.ptr(), ld.mask(), c, shape, eb) * eb;
    if (!fits(cvec)) return std::nullopt;
    po.dense = std::move(c);
    po.vec_bytes = cvec;
    po.bytes = dense_bytes(v);
  }
  return po;
}

// Why a loop of several dots cannot hand its stages over through mbarriers instead of a CTA
// barrier a trip (stage_mbarriers, and producer warps' rings), or "": one program per CTA,
// every dot on wgmma, each dot operand a stage copy, resident or in registers (nothing the
// warps stage themselves every trip, which a CTA barrier would have to publish), and no
// prefetched load (whose dense read needs one too).
std::string signalled_mismatch(const KernelPlan& k, const PipelinePlan& p) {
  if (k.opts.programs_per_cta != 1) return "programs share the CTA (programs_per_cta > 1)";
  for (const ir::Op* d : p.dots) {
    const MmaPlan& mma = *k.mma(*d);
    if (!mma.wgmma) return "a dot is not on wgmma";
    for (int i = 0; i < 2; ++i)
      if (!mma.in_registers(i) && !p.copy_of(d, i) && !p.resident_of(d, i))
        return "a dot operand is staged from registers every trip";
  }
  if (!p.staged.empty()) return "a dot operand is staged from registers every trip";
  for (const PipelinedOperand& po : p.operands)
    if (po.prefetch()) return "the loop prefetches loads that are not dot operands";
  return "";
}

// "; the load at line L (A of the dot at line D): why" for each operand of `dots` loaded in the
// loop's body that its dot does not copy (KernelPlan::uncopied_loads).
std::string uncopied_operands(const KernelPlan& k, const ir::ForOp& loop, const std::vector<const ir::Op*>& dots) {
  std::string out;
  for (const ir::Op* d : dots)
    for (int i = 0; i < 2; ++i) {
      const ir::Op* ld = d->operands[i]->def;
      if (!ld || ld->kind != ir::OpKind::Load || ld->parent != &loop.body()) continue;
      auto it = k.uncopied_loads.find(ld);
      if (it != k.uncopied_loads.end())
        out += fmt::format("; the load at line {} ({} of the dot at line {}): {}", ld->loc.line, i == 0 ? "A" : "B",
                           d->loc.line, it->second);
    }
  return out;
}

// Why a plan is not for warp-specialised rings, or "". A ring copies a single dot's two operands,
// or the copied operands of several wgmma dots (attention's K and V) whose other operands are
// resident (Q) or in registers (P) (signalled_mismatch).
std::string ring_mismatch(const KernelPlan& k, const ir::ForOp& loop, const PipelinePlan& p) {
  if (p.dots.size() == 1) {
    if (p.operands.size() != 2)
      return "warp specialisation pipelines a dot whose two operands are copied loads only" +
             uncopied_operands(k, loop, p.dots);
    return "";
  }
  const std::string why = signalled_mismatch(k, p);
  return why.empty() ? "" : "warp specialisation of a loop of several dots needs the stages handed over by mbarriers: " + why;
}

}  // namespace

const PipelinedOperand* PipelinePlan::copy_of(const ir::Op* d, int i) const {
  for (const PipelinedOperand& po : operands)
    if (po.dot == d && po.operand == i) return &po;
  return nullptr;
}

const StagedOperand* PipelinePlan::staged_of(const ir::Op* d, int i) const {
  for (const StagedOperand& so : staged)
    if (so.dot == d && so.operand == i) return &so;
  return nullptr;
}

const PipelinedOperand* PipelinePlan::prefetch_of(const ir::Op* load) const {
  for (const PipelinedOperand& po : operands)
    if (po.prefetch() && po.load == load) return &po;
  return nullptr;
}

size_t PipelinePlan::dot_copies() const {
  size_t n = 0;
  for (const PipelinedOperand& po : operands) n += !po.prefetch();
  return n;
}

const ResidentOperand* PipelinePlan::resident_of(const ir::Op* d, int i) const {
  for (const ResidentOperand& r : resident)
    if (r.dot == d && r.operand == i) return &r;
  return nullptr;
}

namespace {

// Where a pipelined loop's buffers go while it is planned: the stage (one per num_stages) and
// the resident buffer (operands loaded before the loop), each operand at the next 16-byte
// (wgmma: 1024-byte, its swizzle atoms) boundary.
struct StageCursor {
  int64_t align = 16;
  int64_t stage = 0, resident = 0;  // bytes so far
  int64_t place(int64_t& cursor, const SmemTile& t) const {
    const int64_t at = (cursor + align - 1) / align * align;
    cursor = at + t.bytes();
    return at;
  }
};

// The loop's dots, all on tensor cores, and whether any is a wgmma; empty with `why` otherwise.
std::vector<const ir::Op*> tensor_core_dots(const KernelPlan& k, const ir::Block& body, bool& wgmma,
                                            std::string& why) {
  std::vector<const ir::Op*> dots = body_dots(body, why);
  if (dots.empty()) return dots;
  if (k.opts.num_stages < 2) {
    why = "num_stages is 1";
    return {};
  }
  wgmma = false;
  for (const ir::Op* d : dots) {
    const MmaPlan* m = k.mma(*d);
    if (!m) {
      why = dots.size() == 1 || !d->loc.known() ? "the dot does not run on tensor cores here"
                                                : fmt::format("the dot at line {} does not run on tensor cores here", d->loc.line);
      return {};
    }
    wgmma |= m->wgmma;
  }
  return dots;
}

// The dots' operands: copies into the stage (loads in the body) and resident buffers (loads
// before the loop). False with `why` when an operand copy cannot be planned.
bool place_dot_operands(const KernelPlan& k, const ir::ForOp& loop, PipelinePlan& p, StageCursor& at,
                        std::set<const ir::Op*>& mask_ops, std::set<const ir::Op*>& step_ops, std::string& why) {
  for (const ir::Op* d : p.dots) {
    const MmaPlan& mma = *k.mma(*d);
    for (int i = 0; i < 2; ++i) {
      const SmemTile& t = i == 0 ? mma.a : mma.b;
      if (mma.in_registers(i)) continue;  // read from registers: nothing to stage
      if (copied_in_body(k, loop, *d, i)) {
        auto po = plan_operand(k, loop, *d, mma, i, mask_ops, step_ops, why);
        if (!po) return false;
        po->offset = at.place(at.stage, t);
        p.operands.push_back(*po);
      } else if (invariant(loop, d->operands[i])) {
        p.resident.push_back(ResidentOperand{d, i, t, at.place(at.resident, t)});
      }
    }
  }
  return true;
}

// Operands computed in the body of a single-dot wgmma loop: staged into the stage
// (StagedOperand), so its group can stay in flight, while every stage still fits the target's
// shared memory. (mma.sync keeps no group in flight: a scratch buffer costs it less memory.)
void stage_computed_operands(const KernelPlan& k, const ir::ForOp& loop, PipelinePlan& p, StageCursor& at,
                             int64_t max_shared) {
  if (p.dots.size() != 1 || k.opts.warp_specialize || !k.mma(*p.dot)->wgmma) return;
  const ir::Op* d = p.dot;
  const MmaPlan& mma = *k.mma(*d);
  int64_t with = at.stage;
  std::vector<StagedOperand> staged;
  for (int i = 0; i < 2; ++i) {
    if (!staged_every_trip(k, loop, *d, i)) continue;
    const SmemTile& t = i == 0 ? mma.a : mma.b;
    staged.push_back(StagedOperand{d, i, t, at.place(with, t)});
  }
  const int64_t stage = (with + p.stage_align - 1) / p.stage_align * p.stage_align;
  if (!staged.empty() && p.stages * stage + at.resident <= max_shared) {
    at.stage = with;
    p.staged = std::move(staged);
  }
}

// A prefetch copied by each thread into its own slots holds every element as often as threads
// hold it: a row of scales broadcast over K, held by every warp along K (W4A16: 8 copies of 256
// bytes on 8 warps). Copied once instead (dense: a barrier before its first read a trip) where
// that lets more CTAs of the stages share an SM: W4A16's 128x128x64 tile on 8 warps, 3 stages,
// 2 CTAs instead of 1 (18% faster on the H100, session 37); elsewhere the barrier costs (3% on
// 8 warps at 2 stages, up to 11% on 64x128x64) and the slots stay.
void densify_replicated(const KernelPlan& k, PipelinePlan& p, StageCursor& at, int64_t first) {
  const TargetInfo& t = target_info(k.opts.target);
  // Lays the prefetches out after the dots' copies from `first` (16-byte aligned, in order);
  // returns the end of the stage's bytes.
  auto place = [&](std::vector<PipelinedOperand>& ops) {
    int64_t cursor = first;
    for (PipelinedOperand& po : ops)
      if (po.prefetch()) {
        po.offset = (cursor + 15) / 16 * 16;
        cursor = po.offset + po.bytes;
      }
    return cursor;
  };
  // CTAs a SM by shared memory, capped by registers at a lower bound of their count: the dot's
  // f32 accumulator and 32 more a thread (an 8-warp 128x128 tile: 96, so 2 CTAs whatever the
  // stages; the registers ptxas gives are not known here).
  const ir::Type& acc = p.dots.front()->results[0]->type;
  const int64_t threads = int64_t{k.program_threads()} * k.opts.programs_per_cta;
  const int64_t regs = acc.numel() * acc.dtype.bytes() / 4 / threads + 32;
  const int64_t by_registers = t.registers_per_sm / (threads * regs);
  auto ctas = [&](int64_t stage_end) {
    const int64_t stage = (stage_end + p.stage_align - 1) / p.stage_align * p.stage_align;
    return std::min(by_registers, t.shared_per_sm / (p.stages * stage + at.resident + t.shared_reserved_per_block));
  };
  for (PipelinedOperand& po : p.operands) {
    if (!po.prefetch() || po.dense || !po.reads.empty()) continue;
    const ir::Value* v = po.load->results[0];
    if (po.bytes < 4 * dense_bytes(v)) continue;
    std::vector<PipelinedOperand> alt = p.operands;
    PipelinedOperand& d = alt[&po - p.operands.data()];
    d.dense = k.layouts.of(v);
    d.bytes = dense_bytes(v);
    if (ctas(place(alt)) > ctas(place(p.operands))) p.operands = std::move(alt);
  }
  at.stage = place(p.operands);
}

// The body's other loads (a quantised weight unpacked on its way to a dot, its scales) are
// prefetched with the trip's copies where they can be: in single-dot loops (not attention's,
// whose shared memory is spoken for) and not under warp specialisation (the rings copy one
// dot's operands), while the stages stay within three quarters of the target's shared memory
// less the scratch the dots stage register operands in every trip (the rest is for layout
// conversions, reductions and the epilogue, sized later).
void add_prefetches(const KernelPlan& k, const ir::ForOp& loop, PipelinePlan& p, StageCursor& at, int64_t max_shared,
                    std::set<const ir::Op*>& mask_ops, std::set<const ir::Op*>& step_ops) {
  if (k.opts.warp_specialize || p.dots.size() != 1) return;
  int64_t scratch = 0;
  for (const ir::Op* d : p.dots)
    for (int i = 0; i < 2; ++i)
      if (staged_every_trip(k, loop, *d, i) && !p.staged_of(d, i))
        scratch += (i == 0 ? k.mma(*d)->a : k.mma(*d)->b).bytes();
  const int64_t budget = max_shared * 3 / 4 - scratch;
  const int64_t first = at.stage;
  for (const auto& o : loop.body().ops) {
    if (o->kind != ir::OpKind::Load || k.stages_load(*o)) continue;
    std::set<const ir::Op*> masks = mask_ops, steps = step_ops;
    auto po = plan_prefetch(k, loop, *o, masks, steps);
    if (!po) continue;
    const int64_t offset = (at.stage + 15) / 16 * 16;
    const int64_t stage = (offset + po->bytes + p.stage_align - 1) / p.stage_align * p.stage_align;
    if (p.stages * stage + at.resident > budget) continue;
    at.stage = offset + po->bytes;
    po->offset = offset;
    mask_ops = std::move(masks);
    step_ops = std::move(steps);
    p.operands.push_back(*po);
  }
  densify_replicated(k, p, at, first);
}

// Dense copies are read by other threads than their copiers: the first read of a trip (body
// order) waits for everyone's copies at a barrier.
void mark_first_dense_read(PipelinePlan& p) {
  for (PipelinedOperand& po : p.operands)
    if (po.dense) {
      po.barrier_before_read = true;
      return;
    }
}

// A wgmma dot keeps its group in flight into the next trip; the copies still run S - 1 trips
// ahead: they go after the trip's wgmma wait (and, with several warpgroups, after a barrier
// that every warpgroup reaches past its own wait), into the buffer the previous trip's groups
// read (Triton's order). H200 run 22 (bench/history): 128x256x64 w8 s4 at 4096^3 0.207 ms
// against 0.233 with the former S - 2 lead for two warpgroups.
// Only when both operands are stage copies or staged into the stage (StagedOperand): an
// operand staged into a scratch buffer reuses it every trip, which the group left in flight
// would still be reading. Prefetched loads are read before the dot, so their slots are free.
void keep_group_in_flight(const KernelPlan& k, const ir::ForOp& loop, PipelinePlan& p) {
  const MmaPlan* mma = k.mma(*p.dot);
  const ir::Op& yield = loop.yield();
  const ir::Op* dot = p.dot;
  if (mma->wgmma && p.dots.size() == 1 && p.dot_copies() + p.staged.size() == 2 && k.use_count(dot->results[0]) == 1)
    for (int c = 0; c < loop.num_carried(); ++c)
      if (yield.operands.at(c) == dot->results[0] && dot->operands[2] == loop.carried(c)) p.wgmma_in_flight = c;
}

// The deferred waits (PipelinePlan::deferred_waits): a dot whose result's first reader in the
// body (the yield included) comes after a later dot, and every dot after a deferred one.
void defer_waits(const KernelPlan& k, const ir::ForOp& loop, PipelinePlan& p) {
  if (p.dots.size() < 2 || p.wgmma_in_flight >= 0) return;
  for (const ir::Op* d : p.dots)
    if (!k.mma(*d)->wgmma) return;
  const auto& ops = loop.body().ops;
  auto index_of = [&](const ir::Op* op) {
    for (size_t i = 0; i < ops.size(); ++i)
      if (ops[i].get() == op) return i;
    return ops.size();
  };
  bool deferring = false;
  for (size_t n = 0; n < p.dots.size(); ++n) {
    const ir::Op* d = p.dots[n];
    size_t first_read = ops.size();
    for (size_t i = index_of(d) + 1; i < ops.size() && first_read == ops.size(); ++i)
      for (const ir::Value* v : ops[i]->operands)
        if (v == d->results[0]) first_read = i;
    const bool later_dot_first = n + 1 < p.dots.size() && index_of(p.dots[n + 1]) < first_read;
    deferring = deferring || later_dot_first;
    if (deferring) p.deferred_waits.push_back(d);
  }
}

// PipelinedOperand::strides for each dot copy whose carried pointer tile is affine, of rank 1
// or 2, held without replication (every register's coordinate is the thread's plus a constant)
// and in more than one register.
void compact_pointers(const KernelPlan& k, const LayoutAssignment& layouts, const ir::ForOp& loop, PipelinePlan& p) {
  Affine aff(k.f, loop);
  for (PipelinedOperand& po : p.operands) {
    if (po.from_iv() || po.prefetch() || po.dense) continue;
    const ir::Value* init = loop.init(po.carried);
    const ir::Shape& shape = init->type.shape;
    const int rank = static_cast<int>(shape.size());
    const Layout& l = layouts.of(loop.carried(po.carried));
    if (rank < 1 || rank > 2 || l.rank() != rank || num_regs(l, shape) < 2) continue;
    bool wraps = false;  // a coordinate taken modulo the shape is not the thread's plus a constant
    for (int d = 0; d < rank; ++d) wraps |= shape[d] < l.footprint(l.parent_dim(d));
    if (wraps) continue;
    auto step = aff.of(po.step);
    if (!step || has_iota(*step)) continue;
    // The pointer tile before the loop, or (an earlier loop's result: attention's masked keys
    // after the unmasked ones) that loop's, which it stepped alike for every element.
    const ir::Value* at = init;
    while (at->def && (at->def->kind == ir::OpKind::For || at->def->kind == ir::OpKind::AddPtr)) {
      if (at->def->kind == ir::OpKind::AddPtr) {  // moved alike for every element
        auto by = aff.of(at->def->operands[1]);
        if (!by || has_iota(*by)) break;
        at = at->def->operands[0];
        continue;
      }
      ir::ForOp prev{*at->def};
      const int c = static_cast<int>(at->index);
      const ir::Op* next = prev.yield().operands.at(c)->def;
      if (!next || next->kind != ir::OpKind::AddPtr || next->operands[0] != prev.carried(c)) break;
      auto prev_step = Affine(k.f, prev).of(next->operands[1]);
      if (!prev_step || has_iota(*prev_step)) break;
      at = prev.init(c);
    }
    auto ptr = aff.pointer(at);
    if (!ptr) continue;
    std::vector<Poly> strides(static_cast<size_t>(rank));
    bool affine = true;
    for (const auto& [m, c] : ptr->second)
      if (m.iota >= rank) affine = false;
    if (!affine) continue;
    for (int d = 0; d < rank; ++d) strides[d] = part(ptr->second, d);
    // The emitter multiplies runtime strides in 32 bits (mad.wide.s32): every factor must be
    // a 32-bit integer or a coefficient that fits one.
    for (const Poly& st : strides)
      for (const auto& [m, c] : st) {
        if (c > INT32_MAX || c < INT32_MIN) affine = false;
        for (const ir::Value* a : m.atoms) affine &= a->type.dtype.is_int() && ir::bit_width(a->type.dtype.scalar) <= 32;
      }
    if (!affine) continue;
    po.strides = std::move(strides);
  }
}

// Why a loop's stages cannot be signalled by mbarriers (PipelinePlan::mbarriers), or "": the
// scheme is for loops of several wgmma dots whose operands are stage copies, resident or
// registers, read by no other op (a prefetched load's dense read and a scratch staging need a
// CTA barrier), with one program per CTA and no producer warps.
std::string mbarrier_mismatch(const KernelPlan& k, const PipelinePlan& p) {
  if (p.dots.size() < 2) return "the loop has one dot (single-dot loops keep their wgmma group in flight instead)";
  if (k.opts.warp_specialize) return "producer warps fill the stages (warp_specialize)";
  if (std::string why = signalled_mismatch(k, p); !why.empty()) return why;
  if (p.wgmma_in_flight >= 0) return "the loop keeps a wgmma group in flight";
  return "";
}

// Why a loop's warpgroups cannot take turns at its wgmma (Options::warpgroup_turns), or "".
std::string turns_mismatch(const KernelPlan& k, const PipelinePlan& p) {
  if (p.dots.size() < 2) return "the loop has one dot (nothing of a trip runs beside its wgmma)";
  if (!p.mbarriers && !k.opts.warp_specialize)
    return "a CTA barrier every trip holds the warpgroups in step (turns need stage_mbarriers or warp_specialize)";
  const int G = k.opts.num_warps / 4;
  if (G < 2) return "the program has one warpgroup";
  for (const ir::Op* d : p.dots) {
    const MmaPlan& mma = *k.mma(*d);
    if (!mma.wgmma) return "a dot is not on wgmma";
    if (mma.warpgroups() != G) return "a dot's warpgroups do not split the program's rows";
  }
  return "";
}

}  // namespace

void compact_ring_pointers(KernelPlan& k) {
  for (auto& [op, p] : k.pipelines) {
    if (!k.ring(*op) || p.dots.size() < 2) continue;
    // Both roles carry the pointer tiles (the consumers read them after the loop: attention's
    // last P V), each in its own layouts: compact where both allow it.
    const ir::ForOp loop{*op};
    PipelinePlan producers = p;
    compact_pointers(k, k.layouts, loop, p);
    compact_pointers(k, *k.producer_layouts, loop, producers);
    for (size_t o = 0; o < p.operands.size(); ++o)
      if (!producers.operands[o].compact()) p.operands[o].strides.clear();
  }
}

bool PipelinePlan::defers(const ir::Op* d) const {
  return std::find(deferred_waits.begin(), deferred_waits.end(), d) != deferred_waits.end();
}

std::optional<PipelinePlan> plan_pipeline(const KernelPlan& k, const ir::Op& op, std::string* why_out) {
  std::string why;
  auto fail = [&]() -> std::optional<PipelinePlan> {
    if (why_out) *why_out = why;
    return std::nullopt;
  };
  ir::ForOp loop{op};
  PipelinePlan p;
  bool wgmma = false;
  p.dots = tensor_core_dots(k, loop.body(), wgmma, why);
  if (p.dots.empty()) return fail();
  p.dot = p.dots.front();
  p.stages = k.opts.num_stages;
  p.stage_align = wgmma ? 1024 : 128;
  StageCursor at{wgmma ? 1024 : 16};
  std::set<const ir::Op*> mask_ops, step_ops;
  if (!place_dot_operands(k, loop, p, at, mask_ops, step_ops, why)) return fail();
  const int64_t max_shared = target_info(k.opts.target).max_shared_per_block;
  stage_computed_operands(k, loop, p, at, max_shared);
  if (p.operands.empty()) {
    why = "no dot operand is a load in the body that its dot copies by cp.async (16-byte copies of a single-use "
          "tile with a zero `other`; tf32 operands go through registers)";
    why += uncopied_operands(k, loop, p.dots);  // each operand loaded in the body: why its dot does not copy it
    return fail();
  }
  for (size_t a = 0; a < p.operands.size(); ++a)
    for (size_t b = a + 1; b < p.operands.size(); ++b)
      if (p.operands[a].load == p.operands[b].load) {
        why = "two operands are the same load";
        return fail();
      }
  add_prefetches(k, loop, p, at, max_shared, mask_ops, step_ops);
  mark_first_dense_read(p);
  if (k.opts.warp_specialize) {
    why = ring_mismatch(k, loop, p);
    // (Programs sharing a CTA share one ring; producers computing each program's pointers from
    // the loop index there have not run on a GPU yet.)
    if (why.empty() && k.opts.programs_per_cta > 1)
      for (const PipelinedOperand& po : p.operands)
        if (po.from_iv())
          why = "with programs sharing a CTA, warp specialisation pipelines loads of carried pointer tiles only (these "
                "pointers are computed from the loop index; use programs_per_cta 1)";
    if (!why.empty()) return fail();
  }
  p.stage_bytes = (at.stage + p.stage_align - 1) / p.stage_align * p.stage_align;
  p.resident_bytes = at.resident;
  p.ahead = p.stages - 1;
  // Under warp specialisation a wgmma loop is a ring (plan_rings), whose turns are the ring's.
  p.turns = k.opts.programs_per_cta > 1 && wgmma && !k.opts.warp_specialize && p.dots.size() == 1;
  keep_group_in_flight(k, loop, p);
  defer_waits(k, loop, p);
  if (k.opts.stage_mbarriers) {
    p.mbarriers_why = mbarrier_mismatch(k, p);
    p.mbarriers = p.mbarriers_why.empty();
    // Issued at a trip's start S - 2 trips ahead (from 3 stages), a copy reuses the stage of two
    // trips back: a warp waits for every warp to be done with that trip, not the last one.
    if (p.mbarriers && p.stages >= 3) p.ahead = p.stages - 2;
  }
  if (k.opts.warpgroup_turns) {
    p.warpgroup_turns_why = turns_mismatch(k, p);
    if (p.warpgroup_turns_why.empty()) p.warpgroup_turns = k.opts.num_warps / 4;
  }
  // A loop whose group stays in flight past the latch leaves through that group's wait when the
  // no-trip path would otherwise join the wait block with its initial accumulators: ptxas then
  // serialises every wgmma (C7515). Loops that stage a dequantised operand and 2-stage loops
  // (whose no-trip path is not folded away) are those.
  p.exit_through_wait =
      p.wgmma_in_flight >= 0 && (!p.staged.empty() || p.stages == 2) && !p.turns && !p.warpgroup_turns;
  if (!p.staged.empty()) {
    // Bytes a thread loads every trip outside the copies (StagedOperand::address_classes).
    int64_t loaded = 0;
    for (const auto& o : loop.body().ops) {
      if (o->kind != ir::OpKind::Load) continue;
      bool copied = false;
      for (const PipelinedOperand& po : p.operands) copied |= po.load == o.get();
      const ir::Type& t = o->results[0]->type;
      if (!copied) loaded += t.numel() * t.dtype.bytes();
    }
    for (StagedOperand& so : p.staged) so.address_classes = loaded / k.program_threads() <= 16;
  }
  if (!k.opts.warp_specialize) compact_pointers(k, k.layouts, loop, p);
  p.mask_ops = in_block_order(loop.body(), mask_ops);
  p.step_ops = in_block_order(loop.body(), step_ops);
  return p;
}

}  // namespace tessel::lowering
