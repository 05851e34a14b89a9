// Shared-memory slots: the buffers a kernel's reductions, layout conversions, dot stagings and
// pipelined stages use, which of them a request may take, where a barrier must come first, and
// where each slot lies in the kernel's one dynamic shared array. No LLVM: the emitter makes a
// request, emits the barrier this says it needs, and takes the slot (emit/lowerer.cpp).
//
// A slot is handed out only when no thread can still be using it: a barrier has passed since
// its last use. Transient requests (write, barrier, read) reuse a free slot, grow one, or add a
// second (so back-to-back reductions alternate and cost one barrier each); a large request
// prefers a barrier over a second large slot. Pinned slots (a pipelined loop's stages, a ring)
// are never freed by barriers; an unpinned one stays busy until the next barrier.
//
// The planner drives it (plan/shared_walk.hpp: the requests in the order the emitter will make
// them) and keeps the outcome as the kernel's SharedPlan, which the emitter follows step by step.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tessel::lowering {

class SharedSlots {
 public:
  struct Slot {
    int64_t bytes = 0;
    int64_t align = 16;       // its offset is a multiple of this
    bool busy = false;        // touched since the last barrier
    bool pinned = false;      // owned by a pipelined loop or ring: never freed or handed out
    bool cta = false;         // one for the CTA, after the programs' regions
    bool was_pinned = false;  // pinned by a user that synchronises through barriers: later pins may take it
  };
  // A request's slot: `slot` == slots().size() adds one; `barrier_first`: emit a barrier, then take().
  struct Choice {
    int slot = -1;
    bool barrier_first = false;
  };
  // One step of the requests' history: a slot taken (`bytes`, `align`) or pinned, unpinned,
  // used again, a barrier, a loop's begin, latch (after its barrier, if any) or exit.
  struct Event {
    enum class Kind : uint8_t { Take, Pin, Unpin, Touch, Barrier, LoopBegin, Latch, LoopExit };
    Kind kind = Kind::Barrier;
    int slot = -1;
    int64_t bytes = 0, align = 0;
    friend bool operator==(const Event&, const Event&) = default;
    std::string str() const;  // "take 0 (512 B, align 16)", "barrier", ...
  };
  // Where the slots lie: offsets by slot, one program's region (programs_per_cta > 1: program g's
  // slots at g * region), the turn words' offset, the total bytes and the array's alignment.
  struct Placement {
    std::vector<int64_t> offset;
    int64_t region = 0, turns = 0, total = 0, align = 16;
  };

  // `max_shared_per_block`, `shared_per_sm`: the target's limits (TargetInfo).
  SharedSlots(int programs_per_cta, int64_t max_shared_per_block, int64_t shared_per_sm);

  const std::vector<Slot>& slots() const { return slots_; }
  // Every step so far, in order: what a walk of the IR before emission must reproduce
  // (plan/shared_walk.hpp).
  const std::vector<Event>& events() const { return events_; }

  // A transient buffer of `bytes` (write, barrier, read).
  Choice choose(int64_t bytes) const;
  // A pinned buffer; `touch` false: its users synchronise through mbarriers, not barriers;
  // `cta`: one for the whole CTA. `turn_bytes`: the turn words laid out after the regions.
  Choice choose_pinned(int64_t bytes, int64_t align, bool touch, bool cta, int64_t turn_bytes) const;
  // Takes the chosen slot (after the barrier the choice asked for): grows it to `bytes` and
  // `align` and marks it in use.
  void take(const Choice& c, int64_t bytes, int64_t align);
  void take_pinned(const Choice& c, int64_t bytes, int64_t align, bool touch, bool cta);
  void unpin(int slot);
  void touch(int slot);  // used again (its reads emitted)
  void barrier();        // every thread met: all but pinned slots are free

  // Loops: the body is lowered as if it were entered from before the loop only. At the latch a
  // barrier is needed when a slot still in use there is one the body touches before its first
  // barrier (the next trip would race with this one); after the loop the slots in use are those
  // in use before it or at the latch.
  void loop_begin();
  bool latch_needs_barrier() const;
  void latch_done();  // after the latch's barrier, if any
  void loop_exit();

  // The kernel's shared bytes as laid out so far (alignment slack included).
  int64_t committed(int64_t turn_bytes) const;
  // The largest new slot a request may still add without costing occupancy: nonzero only when
  // the kernel already holds more than half the SM's shared memory, up to the block's limit.
  int64_t growable(int64_t turn_bytes) const;
  // The largest slot a transient request could take without growing anything (pinned excluded).
  int64_t reusable() const;

  Placement place(int64_t turn_bytes) const;

 private:
  // Of the slots `eligible` accepts, the smallest that holds `bytes`, else the largest (it will
  // grow); -1 when none is eligible.
  int best_fit(int64_t bytes, const std::function<bool(const Slot&)>& eligible) const;
  void mark_busy(int slot);  // touch() without its event

  struct Loop {
    std::vector<bool> entry_busy, latch_busy;
    std::vector<bool> touched;  // slots used before the body's first barrier
    bool barrier_seen = false;
  };
  int programs_;
  int64_t max_block_, per_sm_;
  std::vector<Slot> slots_;
  std::vector<Loop> loops_;  // innermost last
  std::vector<Event> events_;
};

// The kernel's shared memory, planned (KernelPlan::shared): every step the emitter will take, in
// order, and the decisions it will ask for on the way, each list in the order of its questions:
// a request's slot and whether a barrier comes first, whether a loop's latch needs a barrier, a
// layout conversion's budget (plan/shared_exchange.hpp); then the slots and where they lie.
struct SharedPlan {
  std::vector<SharedSlots::Event> events;
  std::vector<SharedSlots::Choice> requests;
  std::vector<bool> latch_barriers;
  std::vector<int64_t> budgets;
  std::vector<SharedSlots::Slot> slots;
  SharedSlots::Placement placement;
  int64_t turn_bytes = 0;  // the programs' turn words (several programs a CTA), after the slots
};

}  // namespace tessel::lowering
