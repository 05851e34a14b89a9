// Shared-memory slots (plan/shared_slots.hpp): which slot a request takes, where a barrier must
// come first, the loop latch's barrier, and where the slots lie.
#include <doctest/doctest.h>

#include "plan/shared_slots.hpp"

using tessel::lowering::SharedSlots;

namespace {
constexpr int64_t kBlock = 227 * 1024, kSm = 228 * 1024;  // sm_90's limits

// A transient request as the emitter makes it: choose, the barrier it asks for, take.
// Returns the slot; counts the barriers in `barriers`.
int request(SharedSlots& s, int64_t bytes, int& barriers, int64_t align = 16) {
  const SharedSlots::Choice c = s.choose(bytes);
  if (c.barrier_first) {
    ++barriers;
    s.barrier();
  }
  s.take(c, bytes, align);
  return c.slot;
}

// One exchange through shared memory as the emitter makes it: take a slot, write, barrier, read.
int exchange(SharedSlots& s, int64_t bytes, int& barriers) {
  const int slot = request(s, bytes, barriers);
  s.barrier();
  s.touch(slot);  // the reads after the barrier: busy until the next one
  return slot;
}
}  // namespace

TEST_CASE("shared slots: back-to-back exchanges alternate two slots at one barrier each") {
  SharedSlots s(1, kBlock, kSm);
  int barriers = 0;
  CHECK(exchange(s, 512, barriers) == 0);
  CHECK(exchange(s, 512, barriers) == 1);  // slot 0 is still being read: the other one
  CHECK(exchange(s, 256, barriers) == 0);  // slot 1's barrier freed slot 0
  CHECK(exchange(s, 512, barriers) == 1);
  CHECK(barriers == 0);  // none beyond each exchange's own
  CHECK(s.slots().size() == 2);
  CHECK(s.slots()[0].bytes == 512);
  // Two requests with no barrier between: the third finds both busy and waits for one.
  s.barrier();
  request(s, 512, barriers);
  request(s, 512, barriers);
  CHECK(request(s, 256, barriers) == 0);  // the best fit after the barrier
  CHECK(barriers == 1);
  CHECK(s.slots().size() == 2);
}

TEST_CASE("shared slots: a free slot grows; a large request prefers a barrier to a second large slot") {
  SharedSlots s(1, kBlock, kSm);
  int barriers = 0;
  CHECK(exchange(s, 100, barriers) == 0);
  CHECK(s.slots()[0].bytes == 112);  // rounded up to 16
  // 64 KiB with slot 0 busy and too small: a second slot.
  CHECK(exchange(s, 65536, barriers) == 1);
  // Again 64 KiB, slot 1 busy and big enough: a barrier, not a third 64 KiB slot.
  CHECK(request(s, 65536, barriers) == 1);
  CHECK(barriers == 1);
  // A free slot that fits is preferred to growing one...
  s.barrier();
  CHECK(request(s, 4096, barriers) == 1);
  // ...and with the big one busy, a free small one grows (4 KiB is cheap: no barrier for it).
  s.barrier();
  s.touch(1);
  CHECK(request(s, 4096, barriers) == 0);
  CHECK(s.slots()[0].bytes == 4096);
  CHECK(barriers == 1);
}

TEST_CASE("shared slots: pinned slots survive barriers; a released stage is taken again by the next loop") {
  SharedSlots s(1, kBlock, kSm);
  SharedSlots::Choice c = s.choose_pinned(3 * 32768, 1024, true, false, 0);
  CHECK(c.slot == 0);
  CHECK_FALSE(c.barrier_first);
  s.take_pinned(c, 3 * 32768, 1024, true, false);
  s.barrier();
  CHECK(s.slots()[0].busy);
  CHECK(s.slots()[0].pinned);
  int barriers = 0;
  CHECK(request(s, 512, barriers) == 1);  // never the pinned slot
  s.unpin(0);
  // The next pipelined loop takes the released stages after a barrier (a thread may still read them).
  c = s.choose_pinned(2 * 32768, 1024, true, false, 0);
  CHECK(c.slot == 0);
  CHECK(c.barrier_first);
  // A ring (users synchronised by mbarriers) always gets a slot of its own.
  CHECK(s.choose_pinned(1024, 16, false, false, 0).slot == 2);
}

TEST_CASE("shared slots: a pin that would pass the block's limit takes a released transient slot") {
  SharedSlots s(1, kBlock, kSm);
  int barriers = 0;
  CHECK(exchange(s, 65536, barriers) == 0);  // a dot's staging (the rotated loop's block 0), read after its barrier
  SharedSlots::Choice stages = s.choose_pinned(2 * 65536, 1024, true, false, 0);
  CHECK(stages.slot == 1);  // fits beside it
  s.take_pinned(stages, 2 * 65536, 1024, true, false);
  // Another 64 KiB pin would pass 227 KiB: it takes slot 0 (busy: after a barrier) and grows it.
  SharedSlots::Choice more = s.choose_pinned(65536 + 4096, 1024, true, false, 0);
  CHECK(more.slot == 0);
  CHECK(more.barrier_first);
}

TEST_CASE("shared slots: the loop latch needs a barrier only when a slot used before the body's first barrier is still busy") {
  SharedSlots s(1, kBlock, kSm);
  int barriers = 0;
  s.loop_begin();
  request(s, 512, barriers);  // touched before any barrier of the body
  s.barrier();                // the exchange's barrier
  s.touch(0);                 // its reads: busy at the latch
  CHECK(s.latch_needs_barrier());
  s.barrier();
  s.latch_done();
  s.loop_exit();
  CHECK_FALSE(s.slots()[0].busy);  // free before the loop and after the latch's barrier

  SharedSlots t(1, kBlock, kSm);
  t.loop_begin();
  t.barrier();                 // the body starts with a barrier
  request(t, 512, barriers);   // used after it: the next trip's barrier protects it
  CHECK_FALSE(t.latch_needs_barrier());
  t.latch_done();
  t.loop_exit();
  CHECK(t.slots()[0].busy);  // in use at the latch, so after the loop
}

TEST_CASE("shared slots: placement aligns each slot, repeats the region per program, puts CTA slots and turn words after") {
  SharedSlots s(2, kBlock, kSm);
  int barriers = 0;
  request(s, 100, barriers);  // 112 bytes, align 16
  SharedSlots::Choice ring = s.choose_pinned(3 * 32768 + 64, 1024, false, true, 64);
  s.take_pinned(ring, 3 * 32768 + 64, 1024, false, true);
  s.barrier();
  s.touch(0);                         // slot 0 read after the barrier: busy
  CHECK(request(s, 40000, barriers, 1024) == 2);  // a staging aligned to 1024, a slot of its own
  const SharedSlots::Placement p = s.place(64);
  CHECK(p.offset.at(0) == 0);
  CHECK(p.offset.at(2) == 1024);  // after slot 0's 112 bytes, aligned
  CHECK(p.region == 41984);       // 1024 + 40000, rounded up to the array's 1024
  CHECK(p.offset.at(1) == 2 * p.region);  // the CTA's ring after both programs' regions
  CHECK(p.turns == 2 * p.region + 3 * 32768 + 64);
  CHECK(p.total == p.turns + 64);
  CHECK(p.align == 1024);
  // What the emitter budgets with: committed counts both regions, the ring, the turns and slack.
  const int64_t committed = 2 * (112 + 40960) + 99328 + 64 + 1024;
  CHECK(s.committed(64) == committed);
  CHECK(s.reusable() == 40000);
  // Over half the SM's shared memory already (one CTA a SM): a slot may grow up to the block's limit.
  CHECK(s.growable(64) == (kBlock - committed) / 2 / 16 * 16);
  SharedSlots small(1, kBlock, kSm);
  request(small, 1024, barriers);
  CHECK(small.growable(0) == 0);  // growing would cost occupancy
}
