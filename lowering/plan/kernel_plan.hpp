// The kernel plan: every decision the lowering makes about a kernel, taken once from the tile IR,
// the options and the target before any LLVM exists, immutable afterwards, and printable
// (print_plan, `tessel compile K --emit plan`). The emitter (emit/) reads it and decides nothing.
//
// Planned here: the layouts of every value (the programs' warps, and the producer warpgroup's
// under warp specialisation), the axis analysis that sets access widths, the tensor-core plan
// of each dot and the loads it copies into its staging, each runtime loop's schedule
// (sequential, software-pipelined through cp.async stages, or a ring filled by producer warps by
// cp.async or TMA, with the reason when a loop with a dot is not pipelined), the tensor maps and
// 2-CTA clusters, the ops the producer warps compute, and the launch record (entry symbol,
// threads per CTA, cluster size, tensor-map parameters), and whether a tile wanted in another
// layout is recomputed there or converted. Not yet planned (decided while emitting, by
// SharedSlots in plan/shared_slots.hpp as the emitter's requests arrive): shared-memory slots
// and the barriers that free them.
#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "plan/axis_analysis.hpp"
#include "plan/layout_assignment.hpp"
#include "plan/mma_layout.hpp"
#include "plan/pipeline_plan.hpp"
#include "plan/shared_slots.hpp"
#include "plan/recompute.hpp"
#include "plan/tma_plan.hpp"
#include "tessel/lowering/compile.hpp"

namespace tessel::lowering {

// A pipelined wgmma K loop under warp specialisation: its stages are a ring of buffers and
// 2 x stages mbarriers (full[s], empty[s]) that producer warps fill and the programs' warps drain.
struct RingPlan {
  // An earlier ring loop of the same block whose ring (buffer, mbarriers, trip count) this loop
  // continues (attention's masked key loop after the unmasked one: both hold K and V alike),
  // or null. Both roles run the loops in order, so the stages keep changing hands in turn.
  const ir::Op* shares = nullptr;
  int stages = 0;            // num_stages, times programs_per_cta when the programs share the ring
  int64_t stage_bytes = 0;   // PipelinePlan::stage_bytes
  int64_t align = 128;       // PipelinePlan::stage_align
  std::vector<TmaOperand> tma;  // per operand when the producers copy by TMA; empty: cp.async
  std::string tma_why;          // Options::tma asked for TMA and the ring copies by cp.async: why
  int full_arrivals = 0;     // arrivals that complete full[s]: producer threads, or TMA issuing warps
  // cp.async producers copy in the few registers setmaxnreg leaves them: each copy's address is
  // computed just before its copy (not all of a trip's at its start), and the copies'
  // destinations are addressed by class (one offset register a class of copies whose offsets
  // differ by a constant in every thread, the rest immediates), not by an offset a copy.
  bool lean_copies = false;
  bool by_tma() const { return !tma.empty(); }
};

// How a runtime loop is emitted.
enum class LoopSchedule {
  Sequential,  // one trip after another, loads where they are
  Pipelined,   // the dot's operand copies run num_stages - 1 trips ahead (cp.async groups)
  Ring,        // producer warps fill a ring the programs' warps drain (warp specialisation)
};

struct KernelPlan {
  KernelPlan(const ir::Function& f, const Options& o);

  const ir::Function& f;
  const Options opts;
  // One producer warpgroup per CTA under warp specialisation: kProducerWarps / programs_per_cta
  // warps per program.
  static constexpr int kProducerWarps = tessel::kProducerWarps;  // options/launch.hpp

  // Layouts for the programs' warps, and for the producer warps (warp specialisation only).
  const AxisAnalysis axis;  // before the layouts: loads take layouts by their access order
  const LayoutAssignment layouts;
  std::optional<LayoutAssignment> producer_layouts;
  const std::vector<int> uses;  // by Value::id
  // By Value::id: a tile wanted in another layout is recomputed there (true) or converted
  // (recompute.hpp).
  const std::vector<bool> recompute;

  std::map<const ir::Op*, MmaPlan> dots;          // dots on tensor cores
  std::set<const ir::Op*> staged_loads;          // loads their dot copies into its staging (cp.async)
  std::map<const ir::Op*, std::string> uncopied_loads;  // loads read by a dot that does not copy them: why
  std::map<const ir::Op*, PipelinePlan> pipelines;  // pipelined loops (Pipelined and Ring)
  std::map<const ir::Op*, std::string> unpipelined;  // loops with a dot left sequential: why
  std::map<const ir::Op*, RingPlan> rings;       // Ring loops
  bool cluster_pair = false;                     // 2-CTA clusters (a multicast TMA operand)
  // Device-side checks (a run-time loop step <= 0) trap without calling __assertfail: the kernel
  // issues wgmma, and ptxas serialises every wgmma of a function that contains a call (C7510),
  // even one on a path that never runs.
  bool checks_trap = false;
  // Warp specialisation: what the producer warps compute (their loops' bounds, the ring loads'
  // pointers, steps and masks, and what those are computed from).
  std::set<const ir::Op*> producer_ops;
  std::set<const ir::Value*> producer_values;

  // The launch record (options/launch_spec.hpp): entry symbol, threads (the programs' warps,
  // then the producer warpgroup), cluster, tensor maps (kernel parameters after the kernel's
  // own); its shared bytes are the emitter's (Compiled::launch).
  LaunchSpec launch;
  // Options::consumer_registers: every thread starts with `kernel` registers (.maxnreg); the
  // programs' warps raise theirs to `consumers` (setmaxnreg.inc) and the producer warps lower
  // theirs to `producers` (setmaxnreg.dec), the CTA's total unchanged. Zeros: no setmaxnreg.
  struct RegisterBudget {
    int kernel = 0, consumers = 0, producers = 0;
  };
  RegisterBudget registers;
  // Shared memory: the slots, their placement and every step of their use (plan/shared_walk.hpp).
  SharedPlan shared;

  const MmaPlan* mma(const ir::Op& dot) const;
  bool stages_load(const ir::Op& load) const { return staged_loads.count(&load) > 0; }
  const PipelinePlan* pipeline(const ir::Op& loop) const;
  const RingPlan* ring(const ir::Op& loop) const;
  LoopSchedule schedule(const ir::Op& loop) const;
  int use_count(const ir::Value* v) const { return v->id < uses.size() ? uses[v->id] : 0; }
  bool recomputed(const ir::Value* v) const { return v->id < recompute.size() && recompute[v->id]; }
  int program_threads() const { return 32 * opts.num_warps; }
  int producer_threads() const { return 32 * kProducerWarps / opts.programs_per_cta; }
  // Programs sharing a CTA under warp specialisation share one ring of all their stages.
  bool shared_ring() const { return opts.warp_specialize && opts.programs_per_cta > 1; }
};

// Checks the kernel and options (checks.hpp) and plans it. Throws CompileError for what the
// lowering cannot do (warp specialisation without a ring loop, producer copies that cannot be
// 16 bytes wide, ...). `f` must outlive the plan.
KernelPlan plan_kernel(const ir::Function& f, const Options& o);

// The plan as text, one decision per line, ops named by their result ids and source lines.
std::string print_plan(const KernelPlan& k);

}  // namespace tessel::lowering
