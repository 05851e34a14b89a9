// The CLI's one namespace: registered kernels, the samples and tunables named like them, chains.
#include "names.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>

#include "commands.hpp"

namespace tessel::cli {
namespace {

// Names that existed under another spelling: said in the error instead of "unknown".
std::string renamed(std::string_view name) {
  if (name == "sum_of_squares") return "sum_squares";
  if (name == "matmul_f32_exact") return "matmul_f32 -D ALLOW_TF32=0";
  return "";
}

std::vector<Name> build_names() {
  std::map<std::string, Name, std::less<>> by_name;
  for (const jit::KernelEntry* k : jit::Registry::global().list()) {
    Name& n = by_name[k->name];
    n.name = k->name;
    n.description = k->description;
    n.kernel = k;
  }
  for (const samples::Sample& s : samples::all_samples()) {
    Name& n = by_name[s.name];
    if (!n.kernel) {
      n.name = s.name;
      n.description = s.description;
      n.chain = s.kernels;
    }
    n.sample = &s;
  }
  for (const samples::Tunable& t : samples::all_tunables()) {
    Name& n = by_name[t.name];
    if (n.name.empty()) {
      n.name = t.name;
      n.description = t.description;
    }
    n.tunable = &t;
    n.probe = t.probe;
  }
  std::vector<Name> out;
  for (auto& [name, n] : by_name) {
    if (!n.tunable && n.kernel && n.kernel->workload) n.tunable = samples::find_tunable_or_workload(name);
    out.push_back(std::move(n));
  }
  return out;
}

// Built on first use and again when the registry grew (a plugin loaded after a first lookup).
const std::vector<Name>& names() {
  static std::vector<Name> cached;
  static size_t registered = 0;
  const size_t now = jit::Registry::global().list().size();
  if (cached.empty() || now != registered) {
    cached = build_names();
    registered = now;
  }
  return cached;
}

[[noreturn]] void unknown(std::string_view command, std::string_view what, std::string_view name) {
  if (std::string to = renamed(name); !to.empty())
    throw UsageError(fmt::format("{}: '{}' is now called '{}' (one name per kernel in every subcommand; see tessel list)",
                                 command, name, to));
  throw UsageError(fmt::format("unknown {} '{}' (see tessel list)", what, name));
}

}  // namespace

std::vector<std::string> Name::commands() const {
  std::vector<std::string> c;
  if (kernel) c.push_back("compile");
  if (runs()) c.push_back("run");
  if (tunable) {
    c.push_back("tune");
    c.push_back("bench");
  }
  return c;
}

std::vector<Name> all_names() { return names(); }

const Name* find_name(std::string_view name) {
  for (const Name& n : names())
    if (n.name == name) return &n;
  return nullptr;
}

const jit::KernelEntry& kernel_for(std::string_view command, std::string_view name) {
  const Name* n = find_name(name);
  if (!n) unknown(command, "kernel", name);
  if (!n->kernel) {
    if (!n->chain.empty())
      throw UsageError(fmt::format("{}: '{}' is a chain of kernels ({}), not one kernel: {} takes one of them", command,
                                   name, fmt::join(n->chain, ", "), command));
    throw UsageError(fmt::format("{}: '{}' is a {} of tune and bench, not a registered kernel", command, name,
                                 n->probe ? "roofline probe" : "tunable"));
  }
  return *n->kernel;
}

const Name& runnable_for(std::string_view command, std::string_view name) {
  const Name* n = find_name(name);
  if (!n) unknown(command, "kernel or sample", name);
  if (!n->runs())
    throw UsageError(fmt::format("{}: '{}' has no sample or workload to make its inputs (a kernel registers one with "
                                 "jit::entry_of(kernel, description, Workload{{...}}); see docs/cli.md)",
                                 command, name));
  return *n;
}

const samples::Tunable& tunable_for(std::string_view command, std::string_view name) {
  const Name* n = find_name(name);
  if (!n) unknown(command, "kernel", name);
  if (!n->tunable)
    throw UsageError(fmt::format("{}: '{}' has no tuning problem: {} takes the kernels of `tessel tune --list` and "
                                 "kernels registered with a workload (jit::entry_of(kernel, description, "
                                 "Workload{{...}}); see docs/cli.md)",
                                 command, name, command));
  return *n->tunable;
}

}  // namespace tessel::cli
