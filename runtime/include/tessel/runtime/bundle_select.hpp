// Choosing what a bundle launch runs: config by problem size, variant by argument facts,
// image by the device's sm. Pure functions, testable without a GPU.
#pragma once
#include <cuda.h>

#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tessel/runtime/bundle_manifest.hpp"

namespace tessel::rt {

// What a launch's arguments satisfy: bit i of div16 when argument i (a pointer's address or an
// integer's value) is divisible by 16, bit i of equal1 when integer argument i equals 1.
struct ArgFacts {
  uint32_t div16 = 0;
  uint32_t equal1 = 0;
  friend bool operator==(const ArgFacts&, const ArgFacts&) = default;
};

namespace detail {
// The facts of one argument (the types a bundle launch accepts).
inline void add_fact(ArgFacts& f, unsigned i, CUdeviceptr p) {
  if (p % 16 == 0) f.div16 |= 1u << i;
}
template <class I>
  requires std::is_same_v<I, int32_t> || std::is_same_v<I, int64_t>
inline void add_fact(ArgFacts& f, unsigned i, I v) {
  if (v % 16 == 0) f.div16 |= 1u << i;
  if (v == 1) f.equal1 |= 1u << i;
}
inline void add_fact(ArgFacts&, unsigned, float) {}
inline void add_fact(ArgFacts&, unsigned, double) {}
}  // namespace detail

// The facts of launch arguments (CUdeviceptr, int32_t, int64_t, float, double).
template <class... A>
ArgFacts arg_facts(const A&... args) {
  ArgFacts f;
  unsigned i = 0;
  (detail::add_fact(f, i++, args), ...);
  return f;
}

// Whether a launch with `f` may run a variant that assumes (div16, equal1).
constexpr bool satisfies(ArgFacts f, uint32_t div16, uint32_t equal1) {
  return (div16 & ~f.div16) == 0 && (equal1 & ~f.equal1) == 0;
}

// The variants of `config` (indices into k.variants) in the order a launch tries them: most
// assumptions first, ties in manifest order — so the first one whose assumptions hold is the
// most specialised that may run (what Triton's AOT linker dispatch does).
std::vector<uint16_t> variant_order(const BundleKernelInfo& k, std::string_view config);

// The variant of `config` a launch with `facts` runs, skipping those with usable[i] == 0 (all
// usable when `usable` is empty); -1 when none may run.
int select_variant(const BundleKernelInfo& k, std::string_view config, ArgFacts facts,
                   std::span<const uint8_t> usable = {});

// The first tuned rule whose ranges contain the key arguments' values (one per t.key); -1 when none.
int matching_rule(const TunedTable& t, std::span<const int64_t> key_values);

// The config (index into k.configs) for the key arguments' values, one per k.tuned.key: the
// first tuned rule containing them, else the default config.
int select_config(const BundleKernelInfo& k, std::span<const int64_t> key_values);

// The image of a variant to load on a GPU of compute capability `device_sm` (e.g. 90):
//   1. a cubin for exactly that sm (the arch-specific sm_90a one first),
//   2. a cubin for a lower minor of the same major (cubins run on later minors, not majors),
//   3. PTX for the highest sm not above the device's, which the driver JIT-compiles.
// Arch-specific (sm_XXa) code runs only on exactly its sm. -1 when nothing fits.
int pick_image(std::span<const BundleImage> images, int device_sm);

}  // namespace tessel::rt
