// `tessel list`: kernels with their parameters and meta-parameters, and the runnable samples.
#include <fmt/format.h>

#include "commands.hpp"
#include "tessel/samples/sample.hpp"

namespace tessel::cli {

void add_list(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand("list", "List kernels (with meta-parameters) and samples");
  cmd->callback([&rc] {
    fmt::print("kernels:\n");
    for (const auto* k : jit::Registry::global().list()) {
      fmt::print("  {:<20} {}\n", k->name, k->description);
      fmt::print("  {:<20}   params: {}\n", "", fmt::join(k->params, ", "));
      fmt::print("  {:<20}   meta:   {}\n", "", k->defaults.str());
    }
    fmt::print("samples (tessel run NAME):\n");
    for (const auto& s : samples::all_samples()) fmt::print("  {:<26} {}\n", s.name, s.description);
    rc = 0;
  });
}

}  // namespace tessel::cli
