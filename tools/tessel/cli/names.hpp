// One namespace for every subcommand. A name is a registered kernel (compile, export, dump and
// `cache warm` take it; run, tune and bench too when it has a sample, a tunable or a workload),
// a chain of kernels (NAME_unfused: the unfused form of a fused sample, for run, tune and bench)
// or a roofline probe (tune, bench). The same kernel has the same name in every subcommand.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "tessel/jit/registry.hpp"
#include "tessel/samples/sample.hpp"
#include "tessel/samples/tunables.hpp"

namespace tessel::cli {

struct Name {
  std::string name;
  std::string description;
  const jit::KernelEntry* kernel = nullptr;   // a registered kernel of this name
  const samples::Sample* sample = nullptr;    // `run`'s built-in sample of this name
  const samples::Tunable* tunable = nullptr;  // `tune`/`bench`: a built-in tunable or the kernel's workload
  std::vector<std::string> chain;             // a chain's kernels (no kernel of this name)
  bool probe = false;                         // a roofline probe

  bool runs() const { return sample || (kernel && kernel->workload); }
  // "compile run tune bench": the subcommands that take this name (compile stands for compile,
  // export, dump and cache warm).
  std::vector<std::string> commands() const;
};

// Every name, sorted (the global registry, with any plugin loaded, and the built-in samples).
std::vector<Name> all_names();
// The name, or nullptr.
const Name* find_name(std::string_view name);

// What each command takes, or a UsageError that says what `name` is and what to use instead:
// unknown (with the names renamed since: sum_of_squares -> sum_squares), a chain given to compile,
// a kernel without a workload given to run/tune/bench.
const jit::KernelEntry& kernel_for(std::string_view command, std::string_view name);
const Name& runnable_for(std::string_view command, std::string_view name);
const samples::Tunable& tunable_for(std::string_view command, std::string_view name);

}  // namespace tessel::cli
