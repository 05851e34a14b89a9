// Picks the process's Device: the GPU when usable, else (or on request) the CPU interpreter;
// under TESSEL_REQUIRE_GPU=1 an unusable GPU is an error instead of a silent interpreter run.
#include "tessel/jit/device.hpp"

#include <cstdlib>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "interpreter_device.hpp"
#include "tessel/runtime/error.hpp"
#include "tessel/runtime/log.hpp"

namespace tessel::jit {
namespace {
std::mutex g_mu;
std::unique_ptr<Device> g_device;
bool g_force_interpreter = false;

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string_view(v) != "0";
}

// What a run that must use the GPU (the device runs of the tests, CI) gets instead of the
// interpreter: the reason, and the knob that made it an error.
[[noreturn]] void refuse_interpreter(const std::string& why) {
  throw GpuRequiredError("TESSEL_REQUIRE_GPU=1: the GPU is required, but " + why);
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

void Device::release(uint64_t addr) noexcept {
  try {
    free(addr);
  } catch (const rt::CudaError& e) {
    // The name must outlive the process's report (note_release_failure keeps the pointer).
    rt::note_release_failure(e.code(), e.call() == "cuMemFree" ? "cuMemFree" : "Device::free");
  } catch (...) {
    rt::note_release_failure(CUDA_ERROR_UNKNOWN, "Device::free");
  }
}

Device& Device::current() {
  // Said once, when the backend is chosen, after the lock is released (a sink may ask for
  // Device::current()): a warning only for the fallback nobody asked for.
  std::optional<std::pair<rt::LogLevel, std::string>> said;
  std::unique_lock lock(g_mu);
  if (!g_device) {
    // An explicit select(Interpreter) (the CLI's --interpret) is a request in code, honoured
    // always; the environment's TESSEL_INTERPRET=1 is not, when the GPU is required.
    const bool require_gpu = env_flag("TESSEL_REQUIRE_GPU");
    if (g_force_interpreter) {
      g_device = std::make_unique<InterpreterDevice>("requested with --interpret");
      said.emplace(rt::LogLevel::Info, "kernels run on the CPU interpreter (requested with --interpret)");
    } else if (env_flag("TESSEL_INTERPRET")) {
      if (require_gpu)
        refuse_interpreter("TESSEL_INTERPRET=1 asks for the CPU interpreter (unset one of the two)");
      g_device = std::make_unique<InterpreterDevice>("requested with TESSEL_INTERPRET");
      said.emplace(rt::LogLevel::Info, "kernels run on the CPU interpreter (requested with TESSEL_INTERPRET=1)");
    } else {
      std::string why;
      g_device = make_cuda_device(why);
      if (!g_device) {
        if (require_gpu)
          refuse_interpreter("it is not usable: " + why + "; refusing to fall back to the CPU interpreter");
        g_device = std::make_unique<InterpreterDevice>(why);
        said.emplace(rt::LogLevel::Warn, "no usable GPU (" + why +
                                             "): kernels run on the CPU interpreter (TESSEL_INTERPRET=1 asks for it "
                                             "and silences this; TESSEL_REQUIRE_GPU=1 makes it an error)");
      } else {
        said.emplace(rt::LogLevel::Info, "kernels run on " + g_device->name() + " (" + g_device->arch() + ")");
      }
    }
  }
  Device& d = *g_device;
  lock.unlock();
  if (said) rt::log(said->first, said->second);
  return d;
}

void Device::select(BackendKind kind) {
  std::lock_guard lock(g_mu);
  if (g_device && g_device->kind() != kind)
    throw std::logic_error("Device::select: a different backend is already in use");
  g_force_interpreter = kind == BackendKind::Interpreter;
}

}  // namespace tessel::jit
