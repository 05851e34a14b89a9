// Software pipelining of a K loop (num_stages >= 2): which loads are issued ahead, into which
// stage buffers, and how far.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "plan/affine.hpp"
#include "plan/mma_layout.hpp"
#include "tessel/ir/ir.hpp"

namespace tessel::lowering {

struct KernelPlan;  // kernel_plan.hpp

// A dot operand whose load is issued S - 1 trips ahead. Its pointers are either the carried
// pointer tile `carried`, which the loop advances by the loop-invariant offset tile `step` each
// trip, or (carried = -1, step null) computed in the body from the induction variable and
// values from outside the loop (an implicit GEMM's im2col addresses): those ops are lowered
// again for trip i + S - 1, as the masks are (PipelinePlan::mask_ops).
struct PipelinedOperand {
  const ir::Op* load = nullptr;
  int carried = -1;
  const ir::Value* step = nullptr;
  bool from_iv() const { return carried < 0; }
  SmemTile tile;
  int64_t offset = 0;  // byte offset of its staging inside one stage's buffer
  const ir::Op* dot = nullptr;  // the dot reading it, as its operand `operand` (0: a, 1: b)
  int operand = 0;
  // A prefetched load (dot null): a load of the body no dot copies (a packed weight that is
  // unpacked and scaled on its way to a dot, its scales), issued by cp.async with the dots'
  // operands into the stage, in its own layout: each thread copies exactly the vectors of
  // `vec_bytes` (4, 8 or 16) it reads back in the trip (no barrier between), vector g of
  // thread t at offset + (g * threads + t) * vec_bytes (consecutive threads, consecutive
  // chunks); `bytes` in all. Masked-off vectors are zero-filled: `other` is absent or zero.
  int64_t vec_bytes = 0, bytes = 0;
  // A dense prefetch: copied as a row-major tile of the load's shape at `offset`, in layout
  // `dense` (16-byte runs, each element once, by its owner), and read back element by element
  // at the coordinates of whatever layout a reader wants, after a barrier
  // (`barrier_before_read`: the trip's first such read). Taken where a thread's registers are
  // not what it should copy: its layout has runs under 4 bytes (a row of f16 scales in a
  // register-B dot's layout, one per lane; its pointers, computed from the induction variable,
  // are recomputed in `dense`), or its users read it in other layouts (`reads`: a register-B
  // dot's words, loaded in 16-byte runs and read by every lane of a quad whole), which the
  // read gives them without a conversion.
  std::optional<Layout> dense;
  std::vector<Layout> reads;
  bool barrier_before_read = false;
  bool prefetch() const { return dot == nullptr; }
  // Compact pointers (a dot's carried copy in a cp.async-pipelined loop, or in the producer
  // warps' copy of a ring loop of several dots, in the producers' layouts, whose pointer tile is
  // affine: a pointer parameter plus, along each tile dimension d, the index times strides[d]
  // elements, every element stepping alike): the loop carries one pointer per thread, its first
  // register's, and derives register r's from it, sum_d (c_d(r) - c_d(0)) * strides[d]
  // elements further (c_d: the layout's constant part of the coordinate), one multiply-add per
  // runtime stride. Empty: a carried pointer per register (two registers each).
  std::vector<Poly> strides;
  bool compact() const { return !strides.empty(); }
};

// A dot operand defined before the loop (attention's Q): staged once, before the first trip,
// into a buffer of its own the loop keeps (rather than through registers every trip). Loops of
// one block that read the same such operand in the same staging (attention's unmasked and
// masked key loops) share one buffer: the first stages it, the later ones read it
// (share_residents in kernel_plan.cpp), so its registers die at the first loop.
struct ResidentOperand {
  const ir::Op* dot = nullptr;
  int operand = 0;
  SmemTile tile;
  int64_t offset = 0;  // byte offset inside the resident bytes (resident_bytes), for the dump
  bool reused = false;  // an earlier loop of the block staged it and kept it: read it there
  bool kept = false;    // a later loop of the block reads it: it stays staged after this loop
  const ir::Value* value() const { return dot->operands.at(static_cast<size_t>(operand)); }
};

// A dot operand computed in the body of a single-dot wgmma loop (a weight tile dequantised in
// registers): its dot stages it from registers every trip, into its place in the trip's stage
// buffer rather than into one scratch buffer, so the stages rotate it like the copies and a
// wgmma group left in flight still reads the previous trip's while this trip writes its own
// (PipelinePlan::wgmma_in_flight). Where the stages would not fit the target's shared memory
// with it, the dot stages it into a scratch buffer as before.
struct StagedOperand {
  const ir::Op* dot = nullptr;
  int operand = 0;
  SmemTile tile;
  int64_t offset = 0;  // byte offset inside one stage's buffer
  // The stores take their addresses by class: one register (made before the loop) per class of
  // stores whose offsets differ by a constant in every thread, so ptxas adds the trip's uniform
  // stage base in the address. Not where a trip also waits for more than a 16-byte vector a
  // thread of loads no copy covers: the classes' registers are what ptxas would hide that
  // latency with (W4A16 128x128x128 w8 s3, words and scales not prefetched: 28% slower with
  // them on the H100, at 127 registers against 156).
  bool address_classes = false;
};

struct PipelinePlan {
  // The body's dots on tensor cores, in block order. Every trip's copies are one cp.async group
  // into one stage buffer; the first dot waits for it and issues the copies S - 1 trips ahead,
  // the later dots read the same stage. A dot operand is a pipelined copy (`operands`), resident
  // (`resident`) or computed in the body and staged from registers by its dot, every trip.
  std::vector<const ir::Op*> dots;
  const ir::Op* dot = nullptr;  // dots.front()
  int stages = 1;
  int64_t stage_bytes = 0;              // one stage's buffer (both operands), a multiple of stage_align
  int64_t stage_align = 128;            // 1024 for wgmma: its swizzle atoms start 1024-aligned
  std::vector<PipelinedOperand> operands;  // the dots' copied operands, then the prefetched loads
  // Body ops the loads' masks, and the pointers of from_iv() operands, are computed from
  // (block order): lowered again with the induction variable of the trip being issued.
  std::vector<const ir::Op*> mask_ops;
  std::vector<const ir::Op*> step_ops;  // body ops the pointer steps are computed from (block order)
  // A loop's only dot, on wgmma, both operands stage copies or staged into the stage
  // (StagedOperand), whose result only feeds the next
  // trip's accumulator: the carried value's
  // index. Each trip then waits only for the previous trip's wgmma group (wait_group 1), so
  // the tensor cores run across trips, and issues its copies after that wait (the buffer they
  // overwrite was read by the group just waited for; with several warpgroups after a barrier
  // past every warpgroup's wait); the exit waits for the last group. -1: every trip waits for
  // its own group.
  int wgmma_in_flight = -1;
  // With a group in flight, no turns, and a dot operand staged from registers (a dequantised
  // weight) or 2 stages: the loop is tested before it and at the latch and leaves through the
  // last group's wait (LoopFrame::leave_through_wait). A wait where the path that runs no trip
  // joins makes ptxas serialise every wgmma there (C7515: 18-21% on the H100); the other loops
  // keep the header's way out (the new form moved their registers, and the turns pass on
  // before the wait).
  bool exit_through_wait = false;
  // Dots of a several-dot wgmma loop (no group left in flight) whose
  // group is committed without a wait: the emitter waits for it where its result is first read
  // (wait_group n, n the groups committed after it). A dot is deferred when a later dot of the
  // trip is issued before its result's first read, or when an earlier dot is deferred (its own
  // wait would retire that one too). In FlashAttention-3's rotated loop (Q K_j^T, then
  // P_{j-1} V_{j-1}, then block j's softmax) the softmax waits only for Q K^T and runs beside
  // the P V product, which the trip's end waits for. Block order.
  std::vector<const ir::Op*> deferred_waits;
  bool defers(const ir::Op* dot) const;
  // How many trips ahead the copies run: S - 1.
  int ahead = 1;
  // Programs sharing a CTA (programs_per_cta > 1) take turns at this wgmma loop, the prologue's
  // copies issued before the turn (ping-pong, program_groups.cpp). Not for rings (shared rings
  // hand their turns over themselves).
  bool turns = false;
  // Options::stage_mbarriers on a loop of several wgmma dots: every thread's copies of a trip
  // arrive on the stage's full[s] mbarrier (cp.async.mbarrier.arrive) and the trip's first dot
  // waits on it, then issues the copies `ahead` trips on (S - 2 from 3 stages, else 1), which
  // wait on empty[s]: each warp arrives there after the trip's last wgmma group is done. No CTA
  // barrier a trip, so the warpgroups are not held in step: one's softmax can run beside
  // another's wgmma. Trip n of every run of the loop uses stage n mod S in phase n / S (a
  // counter across runs); copies are issued only for trips that run. `mbarriers_why`: why the
  // option asked for it and the loop does not take it (else empty).
  bool mbarriers = false;
  std::string mbarriers_why;
  // Options::warpgroup_turns on a loop of several wgmma dots whose stages are signalled
  // (mbarriers, or a ring of producer warps) and whose dots split the program's rows among
  // G >= 2 warpgroups: in each trip warpgroup g waits for its turn (a named barrier) before its
  // first wgmma and hands the turn to warpgroup g + 1 mod G once its products are issued (before
  // it first waits for a wgmma group, passes a barrier or ends the trip); the copies the trip
  // issues (mbarriers) follow the hand-over. The tensor cores then take the warpgroups' products
  // in turn while the others run their softmax (FlashAttention-3's ping-pong). G, or 0;
  // `warpgroup_turns_why`: why the option asked for turns and the loop does not take them.
  int warpgroup_turns = 0;
  std::string warpgroup_turns_why;
  std::vector<ResidentOperand> resident;
  int64_t resident_bytes = 0;
  std::vector<StagedOperand> staged;

  // Where operand `i` of `dot` comes from: its copy, its resident staging, or null for both
  // (staged from registers by the dot).
  const PipelinedOperand* copy_of(const ir::Op* dot, int i) const;
  const PipelinedOperand* prefetch_of(const ir::Op* load) const;  // a prefetched load's entry, or null
  size_t dot_copies() const;  // the operands that are dot operands (not prefetched loads)
  const ResidentOperand* resident_of(const ir::Op* dot, int i) const;
  const StagedOperand* staged_of(const ir::Op* dot, int i) const;
};

// The plan for a for loop when options ask for num_stages >= 2 and the loop matches: one or
// more dots in its body, all on tensor cores (k.dots), at least one operand a load its dot
// copies by cp.async (k.staged_loads), every such load reading carried pointer tiles yielded as
// `carried + step` with `step` not depending on the trip and a mask depending on the induction
// variable and loop-invariant values only through pure ops, and nothing in the body that
// writes memory or loops. Under warp specialisation (rings) one dot whose two operands are
// such copies, or several wgmma dots whose operands are copies, resident or in registers (one
// program per CTA, nothing prefetched). Otherwise nullopt, with `why` (when not null) saying
// what did not match; the loop is single-stage.
std::optional<PipelinePlan> plan_pipeline(const KernelPlan& k, const ir::Op& loop, std::string* why);

// After plan_roles: the producer warps' copies of ring loops of several dots carry compact
// pointers (PipelinedOperand::strides) where their layouts allow, so that a producer holds one
// pointer per operand whatever the tile (it keeps few registers under consumer_registers).
void compact_ring_pointers(KernelPlan& k);

}  // namespace tessel::lowering
