// Options that select a compiled variant of a kernel (beyond its meta-parameters).
#pragma once
#include <string>

namespace tessel::jit {

struct CompileOptions {
  int num_warps = 4;   // warps per program instance on the GPU
  int num_stages = 1;  // software-pipelining depth of runtime loops (GPU)
  friend bool operator==(const CompileOptions&, const CompileOptions&) = default;
};

}  // namespace tessel::jit
