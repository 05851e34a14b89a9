// Encoded tensor maps, kept per thread for the next launch with the same arguments.
//
// cuTensorMapEncodeTiled costs about 0.27 us of host time per map (run 25b: three maps add
// 0.8 us to a 3.6 us launch call). A kernel launched again and again on the same buffers asks
// for the same maps each time, so encode_tensor_map (tensor_map.hpp) looks here first. The key
// is every input of the encoding that varies (base address, element type, swizzle, rank,
// extents, strides, box), so a hit is exactly the map the driver would encode again: nothing
// can go stale, whichever kernel, bundle or context asked first. Each thread has its own cache
// (no locks on the launch path) of kSlots entries, searched in full (the base address first),
// the oldest replaced: launches that use up to kSlots maps in turn always hit. (A direct-mapped
// first version let two maps of one launch evict each other when their keys shared a slot.)
#pragma once
#include <cuda.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

namespace tessel::rt {

// What cuTensorMapEncodeTiled gets for a recipe and a launch's arguments.
struct TensorMapShape {
  uint32_t rank = 2;
  cuuint64_t dims[5] = {};
  cuuint64_t strides[4] = {};  // bytes, of dimensions 1 .. rank - 1
  cuuint32_t box[5] = {};
  friend bool operator==(const TensorMapShape&, const TensorMapShape&) = default;
};

// Every varying input of one encoding.
struct TensorMapKey {
  uint64_t base = 0;
  TensorMapShape shape;
  uint8_t elem = 0;      // TensorMapRecipe::Elem
  uint16_t swizzle = 0;  // bytes
  friend bool operator==(const TensorMapKey&, const TensorMapKey&) = default;
};

class TensorMapCache {
 public:
  static constexpr size_t kSlots = 16;

  // The map for `key`: the one stored for it, or encode(out) (which may throw; then nothing is
  // stored) stored for next time in place of the oldest entry.
  template <class Encode>
  const CUtensorMap& get(const TensorMapKey& key, Encode&& encode) {
    for (size_t i = 0; i < used_; ++i) {
      Slot& s = slots_[(last_ + kSlots - i) % kSlots];  // the newest first
      if (s.key == key) {  // base, the first member, is compared first
        ++hits_;
        return s.map;
      }
    }
    CUtensorMap fresh;
    encode(fresh);  // may throw: then nothing changes
    last_ = (last_ + 1) % kSlots;
    slots_[last_].key = key;
    slots_[last_].map = fresh;
    used_ = std::min(used_ + 1, kSlots);
    ++misses_;
    return slots_[last_].map;
  }

  size_t hits() const { return hits_; }
  size_t misses() const { return misses_; }
  size_t size() const { return used_; }
  void clear();

 private:
  struct Slot {
    TensorMapKey key;
    alignas(64) CUtensorMap map;
  };
  std::array<Slot, kSlots> slots_{};
  size_t used_ = 0;            // entries in use: the `used_` newest, ending at last_
  size_t last_ = kSlots - 1;   // the newest entry
  size_t hits_ = 0, misses_ = 0;
};

// This thread's cache (the one encode_tensor_map uses).
TensorMapCache& thread_tensor_map_cache();

}  // namespace tessel::rt
