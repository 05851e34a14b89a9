// Autotuning configs: meta-parameter overrides plus launch options, printed and parsed canonically.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tessel/jit/options.hpp"
#include "tessel/lang/meta.hpp"

namespace tessel::jit::tune {

using lang::Meta;

// One point of a kernel's config space: the autotuner's unit of choice.
struct Config {
  Meta meta;            // meta-parameter overrides (over the kernel's defaults)
  CompileOptions opts;  // num_warps, num_stages (programs_per_cta, warp_specialize)
  // Canonical and deterministic: "BLOCK=1024 num_warps=4 num_stages=1" (meta sorted by name),
  // then " programs_per_cta=2" when it is not 1 and " warp_specialize=1" when it is set.
  std::string str() const;
  // The inverse of str(). num_warps/num_stages may be left out (then the CompileOptions
  // defaults); CompileError on malformed text (a token without '=', a non-integer value, a name
  // given twice, num_warps not a power of two in 1..32, num_stages < 1, programs_per_cta not 1
  // or 2, warp_specialize not 0 or 1).
  static Config parse(std::string_view s);
  friend bool operator==(const Config&, const Config&) = default;
};

// The Cartesian product of meta axes x warps x stages, in a fixed order: the first meta axis
// varies slowest, num_stages fastest. CompileError for an axis with no values, a name given
// twice or a meta axis named num_warps/num_stages.
std::vector<Config> product(const std::vector<std::pair<std::string, std::vector<int64_t>>>& meta_axes,
                            const std::vector<int>& num_warps, const std::vector<int>& num_stages = {1});

}  // namespace tessel::jit::tune
