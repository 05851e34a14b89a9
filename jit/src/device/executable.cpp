// Launch checks shared by every backend.
#include "tessel/jit/executable.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace tessel::jit {

void check_grid(const ExecutableInfo& info, const Grid& grid) {
  const int per_cta = info.programs_per_cta;
  if (per_cta > 1 && grid.x % static_cast<uint32_t>(per_cta) != 0)
    throw std::invalid_argument(fmt::format("kernel '{}' runs {} programs per CTA: the grid's x ({}) must be a multiple "
                                            "of {}",
                                            info.kernel_name, per_cta, grid.x, per_cta));
  const int cluster = per_cta * info.cluster_ctas;
  if (info.cluster_ctas > 1 && grid.x % static_cast<uint32_t>(cluster) != 0)
    throw std::invalid_argument(fmt::format("kernel '{}' runs in clusters of {} CTAs (a multicast load): the grid's x "
                                            "({}) must be a multiple of {}",
                                            info.kernel_name, info.cluster_ctas, grid.x, cluster));
}

}  // namespace tessel::jit
