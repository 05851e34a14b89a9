// `tessel list [--json]`: every name the subcommands take — kernels with their parameters,
// meta-parameters and the commands that run them, chains of kernels, roofline probes.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "names.hpp"
#include "tessel/samples/sample.hpp"

namespace tessel::cli {
namespace {

void print_json() {
  nlohmann::json out = {{"kernels", nlohmann::json::array()}, {"samples", nlohmann::json::array()}};
  for (const Name& n : all_names()) {
    if (!n.kernel) continue;
    nlohmann::json meta = nlohmann::json::object();
    for (const auto& [name, v] : n.kernel->defaults.values()) meta[name] = v;
    out["kernels"].push_back({{"name", n.name}, {"description", n.kernel->description}, {"params", n.kernel->params},
                              {"meta", meta}, {"commands", n.commands()}});
  }
  for (const auto& s : samples::all_samples())
    out["samples"].push_back({{"name", s.name}, {"description", s.description}, {"kernels", s.kernels}});
  fmt::print("{}\n", out.dump(2));
}

void print_table() {
  const std::vector<Name> names = all_names();
  fmt::print("kernels (compile, export, dump; the same name in run, tune and bench where listed):\n");
  for (const Name& n : names) {
    if (!n.kernel) continue;
    fmt::print("  {:<20} {}\n", n.name, n.kernel->description);
    fmt::print("  {:<20}   params: {}\n", "", fmt::join(n.kernel->params, ", "));
    fmt::print("  {:<20}   meta:   {}\n", "", n.kernel->defaults.str());
    std::vector<std::string> also = n.commands();
    also.erase(also.begin());  // "compile"
    if (!also.empty()) fmt::print("  {:<20}   also:   {}\n", "", fmt::join(also, ", "));
  }
  fmt::print("chains of kernels (run, tune and bench; compile takes their kernels):\n");
  for (const Name& n : names)
    if (!n.kernel && !n.chain.empty())
      fmt::print("  {:<26} {} [{}]{}\n", n.name, n.description, fmt::join(n.chain, ", "), n.tunable ? "" : " (run only)");
  fmt::print("roofline probes (tune, bench):\n");
  for (const Name& n : names)
    if (n.probe) fmt::print("  {:<26} {}\n", n.name, n.description);
}

}  // namespace

void add_list(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand("list", "List every kernel, chain and probe, and the commands that take each");
  static bool as_json = false;
  cmd->add_flag("--json", as_json, "Print JSON instead of a table");
  cmd->callback([&rc] {
    rc = 0;
    if (as_json) print_json();
    else print_table();
  });
}

}  // namespace tessel::cli
