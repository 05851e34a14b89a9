// Tunables: the sample kernels (and their unfused chains) as autotuning problems — a config
// space, a tuning key, default problem sizes and a factory of tune::Problem with random inputs.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tessel/jit/registry.hpp"
#include "tessel/jit/tune/key.hpp"
#include "tessel/jit/tune/tuner.hpp"
#include "tessel/samples/report_results.hpp"

namespace tessel::samples {

// A problem size: one value per size name of the tunable ({n} or {rows, cols}).
struct SizeArgs {
  std::vector<int64_t> dims;
  friend bool operator==(const SizeArgs&, const SizeArgs&) = default;
};

struct Tunable {
  std::string name;                     // "softmax", "chain5_unfused"
  std::string description;
  std::string kernel;                   // the database's kernel name: the registry name, or `name` for a chain
  std::vector<std::string> size_names;  // {"n"} or {"rows", "cols"}
  std::vector<SizeArgs> sizes;          // the default sizes
  // The config space at a size (a row-in-one-tile kernel's BLOCK follows the row width).
  std::function<std::vector<jit::tune::Config>(const SizeArgs&)> configs;
  // The untuned choice (what the samples launch), for `tessel bench`.
  std::function<jit::tune::Config(const SizeArgs&)> default_config;
  // false: the config is pruned at this size (may be empty: keep everything).
  std::function<bool(const jit::tune::Config&, const SizeArgs&)> keep;
  jit::tune::KeySpec key;               // over kernel parameters named like size_names
  // Allocates random inputs on Device::current() and returns the problem at this size.
  std::function<jit::tune::Problem(const SizeArgs&)> make_problem;
  std::string group;                    // fused kernels and their unfused chains share a group
  bool fused = true;                    // false: a chain of several kernel launches
  bool probe = false;                   // a roofline probe, not a sample (left out of --all)

  // "n=1048576", "rows=8192,cols=4096"
  std::string size_str(const SizeArgs& s) const;
  // The values of the key's params at this size (params named like size names).
  std::vector<int64_t> key_values(const SizeArgs& s) const;
};

// Every tunable in a fixed order: samples first, then the roofline probes.
const std::vector<Tunable>& all_tunables();
const Tunable* find_tunable(std::string_view name);

// A registered kernel with a workload as a tunable: its configs (the first the default), key,
// sizes and problems come from the entry (std::invalid_argument without a workload).
Tunable tunable_of(const jit::KernelEntry& e);
// find_tunable(name), else the tunable of `r`'s kernel `name` when it has a workload (made once,
// valid for the life of the process), else nullptr.
const Tunable* find_tunable_or_workload(std::string_view name, const jit::Registry& r = jit::Registry::global());

// `--sizes` text: comma-separated sizes, each `dims` integers joined by 'x' ("8192x4096"); an
// integer may be written 2^K or with a K/M/G suffix (powers of 1024): "1M,16M,64M".
// std::invalid_argument with a one-line reason on malformed text, a wrong number of dimensions or
// a value outside [1, 2^31 - 1].
std::vector<SizeArgs> parse_sizes(std::string_view text, size_t dims);

// The device's ceilings measured with the probes: bandwidth from the best copy config (bytes /
// time), compute from the best FMA-chain config (flops / time), and a tensor-core ceiling per
// dtype from the dot probes (roofline_dot_*), through `timer` (the GPU's). `elements` > 0 runs
// the copy/FMA probes at that size and the dot probes at 64^3 (tests on the interpreter).
report::Roofline measure_roofline(jit::tune::Timer& timer, const jit::tune::TuneOptions& opts = {},
                                  int64_t elements = 0);

}  // namespace tessel::samples
