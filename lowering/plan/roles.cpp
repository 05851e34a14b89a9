// Warp specialisation's roles. The kernel body is emitted twice: once for the programs' own
// warps (everything) and once for the producer warps, which emit only the ops planned here:
// the fixed point of the ring loops' needs (loop bounds, the pipelined loads' pointer tiles,
// steps and masks, and whatever those are computed from: pointers computed from the loop index,
// as a convolution's im2col addresses, bring the body ops that compute them), in layouts
// assigned for the producers' own warp count.
#include "plan/roles.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "plan/access.hpp"
#include "tessel/ir/accessors.hpp"
#include "tessel/ir/error.hpp"

namespace tessel::lowering {
namespace {

// The producer's needs: a fixed point over values and ops, seeded by the ring loops.
class ProducerNeeds {
 public:
  std::set<const ir::Op*> ops;
  std::set<const ir::Value*> values;

  void value(const ir::Value* v) {
    if (!v || !values.insert(v).second) return;
    if (const ir::Op* d = v->def) {
      if (d->kind == ir::OpKind::For) carried(*d, v->index);
      op(*d);
      return;
    }
    const ir::Op* loop = v->block ? v->block->parent_op : nullptr;
    if (!loop) return;  // a kernel parameter
    if (v->index > 0) carried(*loop, v->index - 1);
    op(*loop);
  }
  void op(const ir::Op& o) {
    if (!ops.insert(&o).second) return;
    if (o.kind == ir::OpKind::For) {
      ir::ForOp loop{o};
      value(loop.lo());
      value(loop.hi());
      value(loop.step());
    } else {
      for (const ir::Value* v : o.operands) value(v);
    }
    if (const ir::Op* outer = o.parent ? o.parent->parent_op : nullptr) op(*outer);
  }

 private:
  // Carried value i of `loop` (its block argument, result, initial value and yielded value).
  void carried(const ir::Op& o, int i) {
    ir::ForOp loop{o};
    value(loop.carried(i));
    value(o.results.at(i));
    value(loop.init(i));
    value(loop.yield().operands.at(i));
  }
};

// The producer copies a cp.async ring loop's operands in its own layouts: each pointer tile must
// keep one layout through the loop and give 16-byte copies there.
void check_producer_copies(const KernelPlan& k, const ir::Op& op, const PipelinePlan& p) {
  ir::ForOp loop{op};
  const LayoutAssignment& lay = *k.producer_layouts;
  for (const PipelinedOperand& po : p.operands) {
    ir::LoadOp ld{*po.load};
    const Layout& l = lay.of(po.load->results[0]);
    const bool same =
        lay.of(ld.ptr()) == l && (po.from_iv() || lay.of(loop.yield().operands.at(po.carried)) == l);
    if (!same || !copies_16_bytes(k.axis, *po.load, l))
      throw CompileError(po.load->loc, fmt::format("kernel '{}': with warp_specialize the producer warps cannot copy "
                                                   "this load 16 bytes at a time ({} threads per program); use a "
                                                   "larger tile or more warps",
                                                   k.f.name, k.producer_threads()));
  }
}

}  // namespace

void plan_roles(KernelPlan& k) {
  ProducerNeeds needs;
  // In IR order (the walk), as the rings' producers are emitted.
  ir::walk(k.f.body, [&](const ir::Op& op) {
    if (!k.ring(op)) return;
    needs.op(op);
    for (const PipelinedOperand& po : k.pipeline(op)->operands) {
      ir::LoadOp ld{*po.load};
      needs.value(ld.ptr());
      if (ld.mask()) needs.value(ld.mask());
      needs.value(po.step);
    }
  });
  if (k.rings.empty()) {
    // The first loop with a dot that was not pipelined says why, at its line; of nested ones the
    // innermost (an outer loop's reason is only that it holds the inner one).
    std::string why;
    SrcLoc at;
    auto holds_another = [&](const ir::Op* loop) {
      bool found = false;
      for (const auto& r : loop->regions)
        ir::walk(static_cast<const ir::Block&>(*r), [&](const ir::Op& op) { found |= k.unpipelined.count(&op) > 0; });
      return found;
    };
    if (!k.unpipelined.empty()) {
      const auto first = std::min_element(k.unpipelined.begin(), k.unpipelined.end(), [&](const auto& a, const auto& b) {
        const bool ia = holds_another(a.first), ib = holds_another(b.first);
        return ia != ib ? ib : a.first->loc.line < b.first->loc.line;
      });
      why = fmt::format(" (the loop here: {})", first->second);
      at = first->first->loc;
    }
    throw CompileError(at, fmt::format("kernel '{}': warp_specialize needs a K loop that pipelines onto wgmma (a "
                                       "runtime loop with one dot, which reads two 16-byte-aligned loads (of carried "
                                       "pointer tiles or of pointers computed from the loop index), or with several "
                                       "wgmma dots whose operands are such loads, values computed before the loop or "
                                       "registers; a tile M a multiple of 16 x num_warps = "
                                       "{}); this kernel has none{}. Alignment is known from the launch: pointers "
                                       "and row strides must be divisible by 16 (a row stride of 1016 elements is "
                                       "not, even though its 2032 bytes are)",
                                       k.f.name, 16 * k.opts.num_warps, why));
  }
  for (const ir::Op* op : needs.ops) {
    const bool writes = op->info().effect == ir::Effect::Writes;
    if (op->kind == ir::OpKind::Dot || writes)
      throw CompileError(op->loc, fmt::format("kernel '{}': with warp_specialize the producer warps compute the K "
                                              "loops' bounds and addresses, and these depend on the result of "
                                              "this {}; compute them from arguments, program ids and loads instead",
                                              k.f.name, op->name()));
  }
  k.producer_ops = std::move(needs.ops);
  k.producer_values = std::move(needs.values);
  // The producers' tiles are spread over their own warps.
  k.producer_layouts = assign_layouts(k.f, KernelPlan::kProducerWarps / k.opts.programs_per_cta,
                                      k.opts.target.has_wgmma(), &k.axis);
}

// Called after plan_roles by plan_kernel, in IR order: the first failing ring names its load.
void check_producer_rings(const KernelPlan& k) {
  ir::walk(k.f.body, [&](const ir::Op& op) {
    const RingPlan* r = k.ring(op);
    if (r && !r->by_tma()) check_producer_copies(k, op, *k.pipeline(op));
  });
}

}  // namespace tessel::lowering
