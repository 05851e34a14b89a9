// Picks the process's Device: the GPU when usable, else (or on request) the CPU interpreter.
#include "tessel/jit/device.hpp"

#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string_view>

#include "interpreter_device.hpp"

namespace tessel::jit {
namespace {
std::mutex g_mu;
std::unique_ptr<Device> g_device;
bool g_force_interpreter = false;

bool env_interpret() {
  const char* v = std::getenv("TESSEL_INTERPRET");
  return v && *v && std::string_view(v) != "0";
}
}  // namespace

// Defined by the GPU backend when it is built (cuda_device.cpp); null when no GPU is usable,
// with the reason in `why`.
std::unique_ptr<Device> make_cuda_device(std::string& why);

std::string Device::gpu_unavailable_reason() {
  std::string why;
  auto d = make_cuda_device(why);
  return d ? "" : why;
}

Device& Device::current() {
  std::lock_guard lock(g_mu);
  if (!g_device) {
    if (g_force_interpreter || env_interpret()) {
      g_device = std::make_unique<InterpreterDevice>(g_force_interpreter ? "requested with --interpret"
                                                                         : "requested with TESSEL_INTERPRET");
    } else {
      std::string why;
      g_device = make_cuda_device(why);
      if (!g_device) g_device = std::make_unique<InterpreterDevice>(why);
    }
  }
  return *g_device;
}

void Device::select(BackendKind kind) {
  std::lock_guard lock(g_mu);
  if (g_device && g_device->kind() != kind)
    throw std::logic_error("Device::select: a different backend is already in use");
  g_force_interpreter = kind == BackendKind::Interpreter;
}

}  // namespace tessel::jit
