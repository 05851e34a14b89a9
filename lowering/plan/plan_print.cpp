// print_plan: the kernel plan as text. Values are named as the tile IR printout names them
// (`tessel compile K --emit tir`), source locations by file name and line, so a golden plan reads
// next to the IR and a schedule change shows up as a diff of a few lines.
#include <fmt/format.h>

#include <string>
#include <unordered_map>
#include <vector>

#include "plan/access.hpp"
#include "plan/kernel_plan.hpp"
#include "tessel/ir/accessors.hpp"
#include "tessel/ir/printer.hpp"

namespace tessel::lowering {
namespace {

class PlanPrinter {
 public:
  explicit PlanPrinter(const KernelPlan& k) : k_(k), names_(ir::value_names(k.f)) {
    std::vector<std::string> params;
    for (const ir::Param& p : k.f.params) params.push_back(p.name);
    params_ = std::move(params);
  }

  std::string run() {
    header();
    section("layouts", [&] { ir::walk(k_.f.body, [&](const ir::Op& op) { layout_line(op); }); });
    section("dots", [&] { ir::walk(k_.f.body, [&](const ir::Op& op) { dot_lines(op); }); });
    section("loops", [&] { ir::walk(k_.f.body, [&](const ir::Op& op) { loop_lines(op); }); });
    if (!k_.launch.tensor_maps.empty()) section("tensor maps", [&] { tensor_maps(); });
    if (k_.opts.warp_specialize) section("producer warps", [&] { producer(); });
    section("shared memory", [&] { shared(); });
    return std::move(out_);
  }

 private:
  template <class F>
  void section(const char* title, F body) {
    out_ += fmt::format("\n{}:\n", title);
    const size_t before = out_.size();
    body();
    if (out_.size() == before) out_ += "  (none)\n";
  }
  void line(int indent, const std::string& s) { out_ += std::string(2 * indent, ' ') + s + "\n"; }
  void shared();  // the slots, where they lie, and every step of their use

  std::string name(const ir::Value* v) const {
    auto it = names_.find(v);
    return it == names_.end() ? "%?" : it->second;
  }
  static std::string where(const ir::Op& op) {
    if (!op.loc.known() || !op.loc.file) return "";
    std::string file = op.loc.file;
    if (size_t slash = file.find_last_of('/'); slash != std::string::npos) file = file.substr(slash + 1);
    return fmt::format(" at {}:{}", file, op.loc.line);
  }
  // "%12 = load" or "store" (no result)
  std::string op_name(const ir::Op& op) const {
    std::string s;
    for (size_t i = 0; i < op.results.size(); ++i) s += (i ? ", " : "") + name(op.results[i]);
    return s.empty() ? std::string(op.name()) : fmt::format("{} = {}", s, op.name());
  }

  void header() {
    const Options& o = k_.opts;
    out_ += fmt::format("plan of kernel '{}' for {}\n", k_.f.name, o.target.arch());
    out_ += fmt::format("launch: entry {}, {} threads per CTA ({} warps x {} program{}{}), cluster of {} CTA{}, {} "
                        "tensor map{}\n",
                        k_.launch.symbol, k_.launch.threads, o.num_warps, o.programs_per_cta, o.programs_per_cta == 1 ? "" : "s",
                        o.warp_specialize ? fmt::format(" + {} producer warps", KernelPlan::kProducerWarps) : "",
                        k_.launch.cluster_ctas, k_.launch.cluster_ctas == 1 ? "" : "s", k_.launch.tensor_maps.size(),
                        k_.launch.tensor_maps.size() == 1 ? "" : "s");
    out_ += fmt::format("options: num_warps {}, num_stages {}, programs_per_cta {}, warp_specialize {}, tma {}, "
                        "precise_math {}{}{}{}{}\n",
                        o.num_warps, o.num_stages, o.programs_per_cta, o.warp_specialize, o.tma, o.precise_math,
                        o.max_registers ? fmt::format(", max_registers {}", o.max_registers) : "",
                        o.stage_mbarriers ? ", stage_mbarriers" : "",
                        o.consumer_registers ? fmt::format(", consumer_registers {}", o.consumer_registers) : "",
                        o.warpgroup_turns ? ", warpgroup_turns" : "");
    if (k_.registers.kernel)
      out_ += fmt::format("registers: {} per thread at launch (.maxnreg); setmaxnreg raises the programs' warps to {} "
                          "and lowers the producer warps to {}\n",
                          k_.registers.kernel, k_.registers.consumers, k_.registers.producers);
  }

  // A tile op's layout, and each tile operand the op reads in another layout than its own,
  // recomputed there or converted (KernelPlan::recomputed).
  void layout_line(const ir::Op& op) {
    const Layout* l = k_.layouts.of_op(op);
    if (!l || op.kind == ir::OpKind::Yield || op.kind == ir::OpKind::For) return;  // loops: their carried values'
    line(1, fmt::format("{}: {}{}", op_name(op), l->str(), access(op, *l)));
    for (const ir::Value* v : op.operands) {
      if (v->type.is_scalar() || v->type.shape != op_shape(op)) continue;
      const Layout& from = k_.layouts.of(v);
      if (!(from == *l))
        line(2, fmt::format("reads {} from {} ({})", name(v), from.str(), k_.recomputed(v) ? "recomputed" : "converted"));
    }
  }
  // A memory op's vector width in its layout: ", 16-byte vectors (8 x f16)".
  std::string access(const ir::Op& op, const Layout& l) const {
    using K = ir::OpKind;
    if (op.kind != K::Load && op.kind != K::Store) return "";
    if (op.kind == K::Load && k_.stages_load(op)) return ", copied into a dot's staging";
    const ir::Value* ptr = op.operands[0];
    if (ptr->type.is_scalar()) return "";
    const ir::Value* mask = op.kind == K::Load ? ir::LoadOp{op}.mask() : ir::StoreOp{op}.mask();
    const ir::DType elem = op.kind == K::Load ? op.results[0]->type.dtype : op.operands[1]->type.dtype;
    const int64_t eb = elem.bytes();
    const int64_t w = access_vector_width(k_.axis, ptr, mask, l, ptr->type.shape, eb);
    return fmt::format(", {}-byte {} ({} x {})", w * eb, w > 1 ? "vectors" : "scalars", w, elem.str());
  }
  static const ir::Shape& op_shape(const ir::Op& op) {
    return op.results.empty() ? op.operands.at(0)->type.shape : op.results[0]->type.shape;
  }

  static std::string tile(const SmemTile& t) {
    return fmt::format("{} rows x {} B{}{}", t.rows, t.row_bytes, t.blocked ? ", blocked" : "",
                       t.warpgroups > 0 ? fmt::format(", {} warpgroup{}", t.warpgroups, t.warpgroups == 1 ? "" : "s")
                                        : "");
  }

  void dot_lines(const ir::Op& op) {
    if (op.kind != ir::OpKind::Dot) return;
    const MmaPlan* m = k_.mma(op);
    if (!m) {
      line(1, fmt::format("{}{}: FMA (no tensor-core instruction for these types on {})", op_name(op), where(op),
                          k_.opts.target.arch()));
      return;
    }
    line(1, fmt::format("{}{}: {}, {}x{}x{}, warps {}x{}", op_name(op), where(op), m->wgmma ? m->wgmma_ptx() : m->in.ptx(),
                        m->M, m->N, m->K, m->wm, m->wn));
    line(2, fmt::format("staging {} B: a {}; b {} at +{}{}", m->smem_bytes(), tile(m->a), tile(m->b), m->b_offset,
                        m->b_by_rows_of_n ? " (b staged [N][K])" : ""));
    for (int i = 0; i < 2; ++i) {
      const ir::Value* v = op.operands[i];
      const bool copy = v->def && v->def->kind == ir::OpKind::Load && k_.stages_load(*v->def);
      line(2, fmt::format("{} {}: {}", i == 0 ? "a" : "b", name(v),
                          i == 0 && m->a_in_registers ? "wgmma reads it from registers (accumulator layout)"
                          : i == 1 && m->b_in_registers
                              ? "mma reads it from registers (its fragments: no staging)"
                          : copy                      ? "a load copied straight into the staging (16-byte copies)"
                                                      : "staged from registers"));
    }
  }

  void loop_lines(const ir::Op& op) {
    if (op.kind != ir::OpKind::For) return;
    const std::string head = fmt::format("for{}", where(op));
    switch (k_.schedule(op)) {
      case LoopSchedule::Sequential: {
        auto why = k_.unpipelined.find(&op);
        line(1, fmt::format("{}: sequential{}", head, why == k_.unpipelined.end() ? "" : ": " + why->second));
        return;
      }
      case LoopSchedule::Pipelined: {
        const PipelinePlan& p = *k_.pipeline(op);
        line(1, fmt::format("{}: pipelined, {} stages of {} B (align {}), copies {} trip{} ahead by cp.async{}", head,
                            p.stages, p.stage_bytes, p.stage_align, p.ahead, p.ahead == 1 ? "" : "s",
                            p.turns ? ", the programs of a CTA take turns at it" : ""));
        if (p.mbarriers)
          line(2, "stages signalled by mbarriers: each thread's copies arrive on full[s], each warp releases the "
                  "stage on empty[s] after the trip's last wgmma; no CTA barrier a trip");
        else if (!p.mbarriers_why.empty())
          line(2, "stages not signalled by mbarriers (stage_mbarriers): " + p.mbarriers_why);
        turns(p);
        pipeline_body(op, p);
        return;
      }
      case LoopSchedule::Ring: {
        const PipelinePlan& p = *k_.pipeline(op);
        const RingPlan& r = *k_.ring(op);
        line(1, fmt::format("{}: ring of {} stages of {} B (align {}){}{}, producers copy by {}, full[s] completes "
                            "after {} arrivals",
                            head, r.stages, r.stage_bytes, r.align, k_.shared_ring() ? " shared by the programs" : "",
                            r.shares ? fmt::format(", continuing the ring of for{}", where(*r.shares)) : "",
                            r.by_tma()        ? "TMA"
                            : r.lean_copies ? "cp.async (each address beside its copy, destinations by class)"
                                            : "cp.async",
                            r.full_arrivals));
        if (!r.tma_why.empty()) line(2, "not by TMA (tma asked for): " + r.tma_why);
        if (p.dots.size() > 1)
          line(2, "the trip's first dot waits on full[s]; each consumer warp releases the stage on empty[s] after "
                  "the trip's last wgmma");
        turns(p);
        pipeline_body(op, p);
        for (size_t i = 0; i < r.tma.size(); ++i) {
          const TmaOperand& t = r.tma[i];
          line(2, fmt::format("operand {} by TMA: map {}{}{}", i == 0 ? "a" : "b", t.map_index,
                              t.view_index >= 0 ? fmt::format(", view map {}", t.view_index) : "",
                              t.multicast ? ", multicast to both CTAs of the cluster" : ""));
        }
        return;
      }
    }
  }

  void turns(const PipelinePlan& p) {
    if (p.warpgroup_turns)
      line(2, fmt::format("the {} warpgroups take turns at each trip's wgmma (named barriers): one hands the turn on "
                          "once its products are issued{}",
                          p.warpgroup_turns, p.mbarriers ? ", then issues its copies" : ""));
    else if (!p.warpgroup_turns_why.empty())
      line(2, "no warpgroup turns (warpgroup_turns): " + p.warpgroup_turns_why);
  }

  void pipeline_body(const ir::Op& op, const PipelinePlan& p) {
    ir::ForOp loop{op};
    const bool several = p.dots.size() > 1;
    for (const ir::Op* d : p.dots) {
      line(2, fmt::format("dot {}{}{}", op_name(*d), several && d == p.dot ? " (waits for the trip's copies)" : "",
                          p.defers(d) ? ", its wgmma waited for where its result is first read" : ""));
      for (int i = 0; i < 2; ++i) {
        const char* which = i == 0 ? "a" : "b";
        if (const PipelinedOperand* po = p.copy_of(d, i))
          line(3, po->from_iv()
                      ? fmt::format("operand {}: {} from pointers computed from the induction variable, staging +{} "
                                    "({})",
                                    which, op_name(*po->load), po->offset, tile(po->tile))
                      : fmt::format("operand {}: {} from carried {} stepped by {}{}, staging +{} ({})", which,
                                    op_name(*po->load), name(loop.carried(po->carried)), name(po->step),
                                    po->compact() ? " (one pointer per thread)" : "", po->offset, tile(po->tile)));
        else if (const ResidentOperand* r = p.resident_of(d, i))
          line(3, r->reused ? fmt::format("operand {}: {} resident, as an earlier loop of the block staged it ({}){}",
                                          which, name(d->operands[i]), tile(r->tile),
                                          r->kept ? ", kept for a later loop" : "")
                            : fmt::format("operand {}: {} resident, staged once before the loop at +{} ({}){}", which,
                                          name(d->operands[i]), r->offset, tile(r->tile),
                                          r->kept ? ", kept for a later loop" : ""));
        else if (const StagedOperand* so = p.staged_of(d, i))
          line(3, fmt::format("operand {}: {} staged from registers every trip into the stage at +{} ({}){}", which,
                              name(d->operands[i]), so->offset, tile(so->tile),
                              so->address_classes ? ", stores addressed by class" : ""));
        else if (k_.mma(*d)->in_registers(i))
          line(3, fmt::format("operand {}: {} from registers (no staging)", which, name(d->operands[i])));
        else
          line(3, fmt::format("operand {}: {} staged from registers every trip", which, name(d->operands[i])));
      }
    }
    if (!p.resident.empty()) line(2, fmt::format("resident buffer {} B", p.resident_bytes));
    for (const PipelinedOperand& po : p.operands)
      if (po.prefetch())
        line(2, fmt::format("prefetched {}: {}, {}-byte copies{}, staging +{} ({} B){}", op_name(*po.load),
                            po.from_iv() ? "pointers computed from the induction variable"
                                         : fmt::format("from carried {} stepped by {}", name(loop.carried(po.carried)),
                                                       name(po.step)),
                            po.vec_bytes,
                            po.dense ? fmt::format(" as a dense tile in {}{}", po.dense->str(),
                                                   po.reads.empty() ? "" : fmt::format(", read in {} other layout{}",
                                                                                       po.reads.size(),
                                                                                       po.reads.size() == 1 ? "" : "s"))
                                     : "",
                            po.offset, po.bytes, po.barrier_before_read ? ", read after a barrier" : ""));
    if (!p.mask_ops.empty() || !p.step_ops.empty())
      line(2, fmt::format("recomputed for later trips: {} mask op{}, {} step op{}", p.mask_ops.size(),
                          p.mask_ops.size() == 1 ? "" : "s", p.step_ops.size(), p.step_ops.size() == 1 ? "" : "s"));
    if (p.wgmma_in_flight >= 0)
      line(2, fmt::format("wgmma group kept in flight into the next trip (carried {}){}",
                          name(loop.carried(p.wgmma_in_flight)),
                          p.exit_through_wait ? "; tested before the loop and at the latch, the last group waited "
                                                "for on the way out after the last trip"
                                              : ""));
  }

  void tensor_maps() {
    for (size_t i = 0; i < k_.launch.tensor_maps.size(); ++i) {
      const TensorMapRecipe& m = k_.launch.tensor_maps[i];
      line(1, fmt::format("{}: {} at %{}, rows {}, cols {}, row stride {}, box {}x{}, swizzle {} B{}", i,
                          m.elem == TensorMapRecipe::Elem::F16 ? "f16" : "bf16", params_.at(m.base_param),
                          to_string(m.rows, params_), to_string(m.cols, params_),
                          to_string(m.row_stride, params_), m.box_rows, m.box_cols, m.swizzle_bytes,
                          !m.view.empty() ? fmt::format(", row-permuted view for {} warpgroups", view_warpgroups(m))
                                                : ""));
    }
  }

  void producer() {
    line(1, fmt::format("{} warps per program, {} threads; layouts for {} warps", KernelPlan::kProducerWarps /
                        k_.opts.programs_per_cta, k_.producer_threads(), KernelPlan::kProducerWarps /
                        k_.opts.programs_per_cta));
    std::string ops;
    ir::walk(k_.f.body, [&](const ir::Op& op) {
      if (!k_.producer_ops.count(&op)) return;
      if (!ops.empty()) ops += ", ";
      ops += op.results.empty() ? fmt::format("{}{}", op.name(), where(op)) : name(op.results[0]);
    });
    line(1, fmt::format("computes {} op{}: {}", k_.producer_ops.size(), k_.producer_ops.size() == 1 ? "" : "s", ops));
  }

  const KernelPlan& k_;
  std::unordered_map<const ir::Value*, std::string> names_;
  std::vector<std::string> params_;
  std::string out_;
};

}  // namespace

void PlanPrinter::shared() {
  using Kind = SharedSlots::Event::Kind;
  const SharedPlan& sp = k_.shared;
  if (sp.slots.empty()) return;
  const SharedSlots::Placement& at = sp.placement;
  const int P = k_.opts.programs_per_cta;
  line(1, fmt::format("{} bytes{}", at.total,
                      P > 1 ? fmt::format(" ({} programs' regions of {} bytes, then the CTA's)", P, at.region) : ""));
  for (size_t s = 0; s < sp.slots.size(); ++s) {
    const SharedSlots::Slot& slot = sp.slots[s];
    int takes = 0, pins = 0;
    for (const SharedSlots::Event& e : sp.events) {
      if (e.slot != static_cast<int>(s)) continue;
      takes += e.kind == Kind::Take;
      pins += e.kind == Kind::Pin;
    }
    std::string use;
    if (pins) use += fmt::format("pinned {} time{}{}", pins, pins == 1 ? "" : "s", slot.pinned ? " (to the end)" : "");
    if (takes) use += fmt::format("{}{} transient request{}", use.empty() ? "" : ", ", takes, takes == 1 ? "" : "s");
    line(1, fmt::format("slot {}: {} B at +{}, align {}{}: {}", s, slot.bytes, at.offset.at(s), slot.align,
                        slot.cta ? ", the CTA's" : "", use));
  }
  if (sp.turn_bytes) line(1, fmt::format("the programs' turn words: {} B at +{}", sp.turn_bytes, at.turns));
  int barriers = 0;
  std::string steps;
  for (const SharedSlots::Event& e : sp.events) {
    barriers += e.kind == Kind::Barrier;
    steps += (steps.empty() ? "" : "; ") + e.str();
  }
  line(1, fmt::format("{} steps, {} barriers: {}", sp.events.size(), barriers, steps));
}

std::string print_plan(const KernelPlan& k) { return PlanPrinter(k).run(); }

}  // namespace tessel::lowering
