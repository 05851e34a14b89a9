// A compiled kernel variant ready to launch on one backend, and its raw argument form.
#pragma once
#include <cstdint>
#include <span>
#include <string>

#include "tessel/jit/stream.hpp"

namespace tessel::jit {

struct Grid {
  uint32_t x = 1, y = 1, z = 1;
};

// Ceiling division, for grid sizes: cdiv(n, BLOCK).
constexpr uint32_t cdiv(int64_t n, int64_t d) { return static_cast<uint32_t>((n + d - 1) / d); }

// One kernel argument as launched: a device address, an integer or a float.
struct RawArg {
  enum Kind : uint8_t { Pointer, Int, Float } kind = Int;
  union {
    uint64_t addr;
    int64_t i;
    double f;
  };
  RawArg() : i(0) {}
  static RawArg pointer(uint64_t a) { RawArg r; r.kind = Pointer; r.addr = a; return r; }
  static RawArg integer(int64_t v) { RawArg r; r.kind = Int; r.i = v; return r; }
  static RawArg floating(double v) { RawArg r; r.kind = Float; r.f = v; return r; }
};

// What a compiled variant reports about itself.
struct ExecutableInfo {
  std::string kernel_name;
  std::string symbol;        // the GPU entry's symbol, as ncu/nsys show it ("" on the interpreter)
  int num_warps = 0;
  int programs_per_cta = 1;
  int cluster_ctas = 1;          // CTAs per cluster: the grid's x must be a multiple of programs_per_cta times it
  bool warp_specialize = false;  // CompileOptions::warp_specialize (the GPU adds a producer warpgroup)
  int registers = -1;        // per thread, from the driver (-1: not known, e.g. interpreter)
  int local_bytes = -1;      // spills and stack, from the driver
  int shared_bytes = 0;
};

// Throws std::invalid_argument when the grid does not suit the variant (with several programs
// per CTA, grid.x must be a multiple of their number). Every backend checks it at launch.
void check_grid(const ExecutableInfo& info, const Grid& grid);

class Executable {
 public:
  virtual ~Executable() = default;
  // Launches on `stream` (asynchronously on the GPU; synchronously in the interpreter). Once
  // compiled, a GPU launch allocates nothing, waits for nothing and leaves the calling thread's
  // CUDA context as it found it, so it may be captured into a CUDA graph.
  virtual void launch(Grid grid, std::span<const RawArg> args, StreamRef stream = {}) = 0;
  virtual const ExecutableInfo& info() const = 0;
};

}  // namespace tessel::jit
