// Specialisation bits (per-launch facts about arguments) back into IR parameter specs.
#include "tessel/jit/kernel.hpp"

namespace tessel::jit::detail {

std::vector<ir::ParamSpec> specs_from_bits(uint64_t bits, size_t n) {
  std::vector<ir::ParamSpec> specs(n);
  for (size_t i = 0; i < n; ++i) {
    specs[i].div16 = (bits >> (2 * i)) & 1;
    specs[i].equal1 = (bits >> (2 * i)) & 2;
  }
  return specs;
}

}  // namespace tessel::jit::detail
