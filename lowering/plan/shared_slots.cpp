#include "plan/shared_slots.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "tessel/ir/error.hpp"

namespace tessel::lowering {

namespace {
int64_t round16(int64_t bytes) { return (std::max<int64_t>(bytes, 16) + 15) / 16 * 16; }
int64_t aligned(int64_t at, int64_t align) { return (at + align - 1) / align * align; }
}  // namespace

SharedSlots::SharedSlots(int programs_per_cta, int64_t max_shared_per_block, int64_t shared_per_sm)
    : programs_(programs_per_cta), max_block_(max_shared_per_block), per_sm_(shared_per_sm) {}

int SharedSlots::best_fit(int64_t bytes, const std::function<bool(const Slot&)>& eligible) const {
  int best = -1;
  for (int s = 0; s < static_cast<int>(slots_.size()); ++s) {
    if (!eligible(slots_[s])) continue;
    if (best < 0) {
      best = s;
      continue;
    }
    const int64_t have = slots_[best].bytes;
    const bool fits = slots_[s].bytes >= bytes, best_fits = have >= bytes;
    if (fits ? (!best_fits || slots_[s].bytes < have) : (!best_fits && slots_[s].bytes > have)) best = s;
  }
  return best;
}

SharedSlots::Choice SharedSlots::choose(int64_t bytes) const {
  // Two slots let consecutive reductions skip the barrier that protects a slot from the previous
  // one's readers; a large request prefers a barrier over a second large slot.
  constexpr int kMaxSlots = 2;
  constexpr int64_t kCheapBytes = 4096;
  bytes = std::max<int64_t>(bytes, 16);
  const int n = static_cast<int>(slots_.size());
  int unpinned = 0;
  for (const Slot& slot : slots_) unpinned += !slot.pinned;
  for (int s = 0; s < n; ++s)
    if (!slots_[s].busy && slots_[s].bytes >= bytes) return {s, false};
  bool busy_fits = false;
  for (const Slot& slot : slots_) busy_fits |= slot.busy && !slot.pinned && slot.bytes >= bytes;
  if (!(busy_fits && bytes > kCheapBytes) || unpinned == 0) {
    for (int s = 0; s < n; ++s)
      if (!slots_[s].busy) return {s, false};  // grows it
    if (unpinned < kMaxSlots) return {n, false};
  }
  // After the barrier every slot but the pinned ones is free.
  const int best = best_fit(bytes, [](const Slot& c) { return !c.pinned; });
  TESSEL_ASSERT(best >= 0, "no unpinned shared-memory slot after a barrier");
  return {best, true};
}

void SharedSlots::take(const Choice& c, int64_t bytes, int64_t align) {
  if (c.slot == static_cast<int>(slots_.size())) slots_.emplace_back();
  Slot& slot = slots_.at(c.slot);
  slot.bytes = std::max(slot.bytes, round16(bytes));
  slot.align = std::max(slot.align, align);
  mark_busy(c.slot);
  events_.push_back({Event::Kind::Take, c.slot, bytes, align});
}

SharedSlots::Choice SharedSlots::choose_pinned(int64_t bytes, int64_t align, bool touch, bool cta,
                                               int64_t turn_bytes) const {
  const int n = static_cast<int>(slots_.size());
  // A slot an earlier loop pinned and released is taken again (after a barrier when a thread may
  // still read it) rather than adding one: consecutive pipelined loops share their stages. Only
  // slots of earlier pins, and only for users that synchronise through barriers (`touch`).
  if (!touch || cta) return {n, false};
  int best = best_fit(bytes, [](const Slot& c) { return !c.pinned && !c.cta && c.was_pinned; });
  // A slot of its own would pass the block's limit: take (and grow) one that an earlier request
  // used and released (the rotated attention loop's block 0 staged its Q and K there).
  const int64_t own = round16(bytes) * programs_ + std::max<int64_t>(align, 16);
  if (best < 0 && committed(turn_bytes) + own > max_block_)
    best = best_fit(bytes, [](const Slot& c) { return !c.pinned && !c.cta; });
  if (best < 0) return {n, false};
  return {best, slots_[best].busy};
}

void SharedSlots::take_pinned(const Choice& c, int64_t bytes, int64_t align, bool touch_it, bool cta) {
  const bool fresh = c.slot == static_cast<int>(slots_.size());
  if (fresh) slots_.emplace_back();
  Slot& slot = slots_.at(c.slot);
  slot.bytes = fresh ? round16(bytes) : std::max(slot.bytes, round16(bytes));
  slot.align = fresh ? std::max<int64_t>(align, 16) : std::max(slot.align, std::max<int64_t>(align, 16));
  slot.busy = slot.pinned = true;
  if (fresh) {
    slot.cta = cta;
    slot.was_pinned = touch_it && !cta;
  }
  // Enclosing loops see it written before any barrier of theirs (the next outer trip's prologue
  // copies must wait for this trip's readers).
  if (!fresh || touch_it) mark_busy(c.slot);
  events_.push_back({Event::Kind::Pin, c.slot, bytes, align});
}

void SharedSlots::unpin(int slot) {
  slots_.at(slot).pinned = false;
  mark_busy(slot);
  events_.push_back({Event::Kind::Unpin, slot});
}

void SharedSlots::touch(int slot) {
  mark_busy(slot);
  events_.push_back({Event::Kind::Touch, slot});
}

void SharedSlots::mark_busy(int slot) {
  slots_.at(slot).busy = true;
  // Enclosing loop bodies that have not passed a barrier of their own yet (an inner loop's
  // barriers may run zero times) see this use before their first barrier.
  for (Loop& loop : loops_) {
    if (loop.barrier_seen) continue;
    if (loop.touched.size() <= static_cast<size_t>(slot)) loop.touched.resize(slot + 1, false);
    loop.touched[slot] = true;
  }
}

void SharedSlots::barrier() {
  events_.push_back({Event::Kind::Barrier});
  for (Slot& slot : slots_) slot.busy = slot.pinned;
  if (!loops_.empty()) loops_.back().barrier_seen = true;
}

void SharedSlots::loop_begin() {
  events_.push_back({Event::Kind::LoopBegin});
  Loop loop;
  for (const Slot& slot : slots_) loop.entry_busy.push_back(slot.busy);
  loops_.push_back(std::move(loop));
}

bool SharedSlots::latch_needs_barrier() const {
  const Loop& loop = loops_.back();
  bool clash = false;
  for (size_t s = 0; s < slots_.size() && s < loop.touched.size(); ++s) clash |= slots_[s].busy && loop.touched[s];
  return clash;
}

void SharedSlots::latch_done() {
  events_.push_back({Event::Kind::Latch});
  Loop& loop = loops_.back();
  for (const Slot& slot : slots_) loop.latch_busy.push_back(slot.busy);
}

void SharedSlots::loop_exit() {
  events_.push_back({Event::Kind::LoopExit});
  Loop loop = std::move(loops_.back());
  loops_.pop_back();
  for (size_t s = 0; s < slots_.size(); ++s) {
    const bool before = s < loop.entry_busy.size() && loop.entry_busy[s];
    const bool latch = s < loop.latch_busy.size() && loop.latch_busy[s];
    slots_[s].busy = before || latch;
  }
}

int64_t SharedSlots::committed(int64_t turn_bytes) const {
  // Laid out as place() will: each program's slots, the CTA's, the turn words, plus alignment slack.
  int64_t region = 0, cta = 0;
  for (const Slot& slot : slots_) (slot.cta ? cta : region) += aligned(slot.bytes, slot.align);
  return programs_ * region + cta + turn_bytes + 1024;
}

int64_t SharedSlots::growable(int64_t turn_bytes) const {
  const int64_t c = committed(turn_bytes);
  if (2 * c <= per_sm_ || c >= max_block_) return 0;
  return (max_block_ - c) / programs_ / 16 * 16;
}

int64_t SharedSlots::reusable() const {
  int64_t most = 0;
  for (const Slot& slot : slots_)
    if (!slot.pinned) most = std::max(most, slot.bytes);
  return most;
}

SharedSlots::Placement SharedSlots::place(int64_t turn_bytes) const {
  Placement p;
  p.offset.assign(slots_.size(), 0);
  auto lay_out = [&](bool cta) {
    for (size_t s = 0; s < slots_.size(); ++s) {
      const Slot& slot = slots_[s];
      if (slot.cta != cta) continue;
      p.total = aligned(p.total, slot.align);
      p.align = std::max(p.align, slot.align);
      p.offset[s] = p.total;
      p.total += slot.bytes;
    }
  };
  lay_out(false);  // one program's region
  if (programs_ > 1) {
    p.region = aligned(p.total, p.align);
    p.total = programs_ * p.region;
    lay_out(true);  // the CTA's own slots (shared rings)
    if (turn_bytes > 0) {
      p.turns = aligned(p.total, 8);
      p.total = p.turns + turn_bytes;
    }
  }
  return p;
}

std::string SharedSlots::Event::str() const {
  switch (kind) {
    case Kind::Take: return fmt::format("take {} ({} B, align {})", slot, bytes, align);
    case Kind::Pin: return fmt::format("pin {} ({} B, align {})", slot, bytes, align);
    case Kind::Unpin: return fmt::format("unpin {}", slot);
    case Kind::Touch: return fmt::format("touch {}", slot);
    case Kind::Barrier: return "barrier";
    case Kind::LoopBegin: return "loop begin";
    case Kind::Latch: return "loop latch";
    case Kind::LoopExit: return "loop exit";
  }
  return "?";
}

}  // namespace tessel::lowering
