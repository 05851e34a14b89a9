// PointerCheck: the names a launch's pointer-argument errors give, and the errors themselves, written
// once here so every PointerArgument specialisation (DLPack, frameworks' tensors) says them alike.
#include "tessel/jit/pointer_argument.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "tessel/jit/device.hpp"
#include "tessel/jit/kernel.hpp"

namespace tessel::jit {

std::string PointerCheck::where() const {
  // Argument numbers count from 1, as a reader counts a call's arguments.
  if (param.empty()) return fmt::format("kernel '{}', argument {}", kernel, index + 1);
  return fmt::format("kernel '{}', parameter '{}' (argument {})", kernel, param, index + 1);
}

void PointerCheck::fail(const std::string& what) const {
  throw std::invalid_argument(fmt::format("{}: {}", where(), what));
}

std::string_view PointerCheck::dtype_name() const { return ir::name_of(scalar); }

namespace detail {

namespace {
std::string device_words(const Device& d) { return fmt::format("device {} ({})", d.ordinal(), d.describe()); }
}  // namespace

void throw_array_on_other_device(const PointerCheck& c, const Device& array_device) {
  // Both devices by ordinal and description: two GPUs of one model differ only by ordinal.
  const std::string launch = c.device ? device_words(*c.device) : std::string("the current device");
  c.fail(fmt::format("the Array is on {}, but the launch runs on {} (copy the data there, or launch with "
                     "LaunchOptions naming the Array's device)",
                     device_words(array_device), launch));
}

}  // namespace detail
}  // namespace tessel::jit
