// The end of a split-K kernel (w4a16_splitk, w4a16_gemv, conv2d_bn_relu_splitk): program_id(2) is the slice
// of K a program multiplied over. Each program stores its f32 partial product `acc` at
// part[program_id(2)][at], then adds 1 to its output tile's counter with Order::acq_rel (every
// partial store of the program precedes its arrival, and the last arrival sees them all). The
// program that arrives last (it reads num_programs(2) - 1) sums the slices in slice order, so the
// sum is the same whichever program comes last, hands the sum to `finish` (which stores the
// output), and resets the counter to 0 for the next launch. `count` has one i32 per output tile
// (program_id(0), program_id(1)), zero before the first launch; `slice` is the elements of one
// slice of `part`.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "tessel/tessel.hpp"

namespace tessel::samples {

// `rows` rows of K in about `want` slices of whole `block`-row blocks (the host side of a split-K
// launch): `per` rows a slice (the kernels' k_per_split), `count` slices (grid.z); the last may be
// shorter, and more slices than blocks give one block each.
struct KSlices {
  int64_t per = 0, count = 0;
};
inline KSlices k_slices(int64_t rows, int64_t block, int64_t want) {
  const int64_t blocks = (rows + block - 1) / block, per = (blocks + want - 1) / want * block;
  return {per, (rows + per - 1) / per};
}

// `blocks` K blocks (all tiles' of a stream-K kernel) shared by about `want` programs: `per` blocks
// a program (the kernels' `units`), `count` programs (the grid), none empty.
inline KSlices stream_k_split(int64_t blocks, int64_t want) { return k_slices(blocks, 1, want < 1 ? 1 : want); }

template <class Finish>
void split_k_sum_last(lang::Ptr<lang::f32> part, lang::Ptr<lang::i32> count, const lang::Tile& acc,
                      const lang::Tile& at, const lang::Tile& ok, const lang::Tile& slice, Finish finish) {
  using namespace tessel::lang;
  store(part + program_id(2) * slice + at, acc, ok);
  auto counter = count + program_id(0) * num_programs(1) + program_id(1);
  auto arrived = atomic_add(counter, 1, Order::acq_rel);
  auto splits = num_programs(2);
  // The slices' loads go out `unroll` at a time (zeros past the last slice), then add in slice
  // order: one memory latency per `unroll` slices, not one a slice (w4a16_gemv's times on an
  // H100 followed its slice count, session 41). Up to 8 at a time, at most 4096 f32 loaded a
  // group (32 registers a thread of 128, beside the running sum).
  int64_t numel = 1;
  for (int64_t d : acc.shape()) numel *= d;
  const int unroll = static_cast<int>(std::clamp<int64_t>(4096 / numel, 1, 8));
  for ([[maybe_unused]] auto last : range(0, where(arrived == splits - 1, 1, 0))) {
    Var sum{load(part + at, ok, 0.0f)};
    for (auto s : range(1, splits, unroll)) {
      std::vector<Tile> slices{load(part + s * slice + at, ok, 0.0f)};
      for (int u = 1; u < unroll; ++u) slices.push_back(load(part + (s + u) * slice + at, ok & (s + u < splits), 0.0f));
      Tile t = sum.get();
      for (const Tile& x : slices) t = t + x;  // past the last slice: + 0
      sum = t;
    }
    finish(sum.get());
    store(counter, 0);
  }
}

}  // namespace tessel::samples
