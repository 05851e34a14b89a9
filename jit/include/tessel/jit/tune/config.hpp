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
  CompileOptions opts;  // the options table (tessel/options/compile_options.def)
  // Canonical and deterministic: "BLOCK=1024 num_warps=4 num_stages=1" (meta sorted by name),
  // then the other options in table order where they are not their defaults, a flag as 1
  // (" programs_per_cta=2 warp_specialize=1 precise_math=1"): texts stored before an option
  // existed read the same.
  std::string str() const;
  // The inverse of str(). Options may be left out (then their defaults); CompileError on
  // malformed text (a token without '=', a non-integer value, a name given twice, a flag not 0
  // or 1) and on options that break a rule of tessel::option_problem ("config '...': num_warps 3
  // is not a power of two in 1..32").
  static Config parse(std::string_view s);
  friend bool operator==(const Config&, const Config&) = default;
};

// The Cartesian product of meta axes x warps x stages, in a fixed order: the first meta axis
// varies slowest, num_stages fastest. CompileError for an axis with no values, a name given
// twice or a meta axis named after a compile option.
std::vector<Config> product(const std::vector<std::pair<std::string, std::vector<int64_t>>>& meta_axes,
                            const std::vector<int>& num_warps, const std::vector<int>& num_stages = {1});

}  // namespace tessel::jit::tune
