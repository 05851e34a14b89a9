// known_archs: the lowering's table of architectures, or nothing in a build without it.
#include "tessel/jit/targets.hpp"

#ifdef TESSEL_HAS_LOWERING
#include "tessel/lowering/target.hpp"
#endif

namespace tessel::jit {

#ifdef TESSEL_HAS_LOWERING
std::vector<std::string> known_archs() { return lowering::known_target_names(); }
std::string known_archs_text() { return lowering::known_targets_text(); }
#else
std::vector<std::string> known_archs() { return {}; }
std::string known_archs_text() { return "none"; }
#endif

}  // namespace tessel::jit
