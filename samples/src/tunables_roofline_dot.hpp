// The tensor-core roofline probes (private to samples/src): the matmul sample kernel per dtype,
// timed at a size where its K loop keeps the tensor cores busy.
#pragma once
#include <string>
#include <vector>

#include "tessel/samples/tunables.hpp"

namespace tessel::samples::tunable {

// A dot probe's tunable name and the dtype of the ceiling it measures.
struct DotProbe {
  const char* name;   // "roofline_dot_f16"
  const char* dtype;  // "f16"
};
// f16, bf16, tf32, in the order they are measured and drawn.
const std::vector<DotProbe>& dot_probes();

// The probes as tunables: M x N x K (8192^3 by default), flops 2 M N K, bytes the compulsory
// A, B and C traffic; each checked against a host reference at a sample of C.
std::vector<Tunable> dot_probe_tunables();

}  // namespace tessel::samples::tunable
