// Per-thread tensor-map cache (tensor_map_cache.hpp).
#include "tessel/runtime/tensor_map_cache.hpp"

namespace tessel::rt {

void TensorMapCache::clear() {
  used_ = 0;
  hits_ = misses_ = 0;
}

TensorMapCache& thread_tensor_map_cache() {
  thread_local TensorMapCache cache;
  return cache;
}

}  // namespace tessel::rt
