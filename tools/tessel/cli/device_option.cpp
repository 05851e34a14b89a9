// --device N: which GPU a command runs on.
#include <fmt/format.h>

#include "commands.hpp"

namespace tessel::cli {

void add_device_option(CLI::App* cmd, int& ordinal) {
  cmd->add_option("--device", ordinal,
                  "The GPU to use, by ordinal as the driver numbers them (default 0; tuned results are keyed by "
                  "the device's name)")
      ->check(CLI::NonNegativeNumber);
}

jit::Device& use_device(int ordinal) {
  try {
    jit::Device& d = jit::Device::get(ordinal);
    jit::Device::set_current(d);
    // Plugins carry their own copy of tessel: their kernels run where this command runs.
    jit::use_device_in_plugins(d.kind() == jit::BackendKind::Interpreter, ordinal);
    return d;
  } catch (const std::out_of_range& e) {
    throw UsageError(fmt::format("--device {}: no such device ({})", ordinal, e.what()));
  }
}

}  // namespace tessel::cli
