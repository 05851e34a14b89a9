// Compiler hints (Triton's multiple_of / max_contiguous): promises about an integer or pointer value.
#pragma once
#include <cstdint>
#include <vector>

#include "tessel/lang/tile.hpp"

namespace tessel::lang {

// Each returns `x` unchanged and tells the compiler something about its values that it cannot
// prove itself, so that loads and stores through pointers built from it can use wide vector
// accesses. `x` is an integer (not bool) or pointer scalar or tile; every value is a power of two.
// The per-dim forms take one value per dim (scalars: one); the single-value forms are for
// scalars and 1-D tiles only.
//
// multiple_of(x, n): along each dim, the value at the start of every contiguous run (every
// element, when the compiler knows of no runs) is a multiple of n; for pointers the address in
// bytes is. Typical: multiple_of(stride, 8) for a runtime stride, multiple_of(pid * BLOCK, 16).
// max_contiguous(x, c): along each dim, x is made of aligned runs of c consecutive integers
// (pointers: adjacent elements in memory); c divides the dim's size.
// Typical: max_contiguous(multiple_of(idx, 4), 4) for offsets loaded from memory.
//
// These are promises: a false one gives undefined results on the GPU. The interpreter checks
// them against the data it sees (a run-time error names the element that breaks the promise).
Tile multiple_of(const Operand& x, int64_t n);
Tile multiple_of(const Operand& x, const std::vector<int64_t>& per_dim);
Tile max_contiguous(const Operand& x, int64_t c);
Tile max_contiguous(const Operand& x, const std::vector<int64_t>& per_dim);

// multicast(load(...)): a promise that programs 2j and 2j + 1 load the same tile here, at
// every trip of the loop. Where this load is a K loop operand that warp_specialize + tma
// copies by TMA (sm_90a), the kernel then runs in clusters of two CTAs, programs 2j and 2j + 1
// in the same place of the two (program ids are numbered so, also with programs_per_cta = 2),
// and each CTA copies half of the tile's boxes into both CTAs' shared memory (TMA multicast),
// halving that operand's L2 reads; the grid's x must then be a multiple of 2 programs_per_cta.
// Elsewhere it changes nothing. Returns the loaded tile; a CompileError unless `loaded` is a load's result.
// A false promise gives wrong results on the GPU (the interpreter does not check it).
Tile multicast(const Tile& loaded, Loc loc = Loc::current());

}  // namespace tessel::lang
