// `tessel list [--json]`: kernels with their parameters and meta-parameters, and the runnable samples.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "tessel/samples/sample.hpp"

namespace tessel::cli {

void add_list(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand("list", "List kernels (with meta-parameters) and samples");
  static bool as_json = false;
  cmd->add_flag("--json", as_json, "Print JSON instead of a table");
  cmd->callback([&rc] {
    rc = 0;
    if (as_json) {
      nlohmann::json out = {{"kernels", nlohmann::json::array()}, {"samples", nlohmann::json::array()}};
      for (const auto* k : jit::Registry::global().list()) {
        nlohmann::json meta = nlohmann::json::object();
        for (const auto& [name, v] : k->defaults.values()) meta[name] = v;
        out["kernels"].push_back({{"name", k->name}, {"description", k->description}, {"params", k->params},
                                  {"meta", meta}});
      }
      for (const auto& s : samples::all_samples())
        out["samples"].push_back({{"name", s.name}, {"description", s.description}, {"kernels", s.kernels}});
      fmt::print("{}\n", out.dump(2));
      return;
    }
    fmt::print("kernels:\n");
    for (const auto* k : jit::Registry::global().list()) {
      fmt::print("  {:<20} {}\n", k->name, k->description);
      fmt::print("  {:<20}   params: {}\n", "", fmt::join(k->params, ", "));
      fmt::print("  {:<20}   meta:   {}\n", "", k->defaults.str());
    }
    fmt::print("samples (tessel run NAME):\n");
    for (const auto& s : samples::all_samples()) fmt::print("  {:<26} {}\n", s.name, s.description);
  });
}

}  // namespace tessel::cli
