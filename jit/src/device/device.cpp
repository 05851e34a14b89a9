// Picks the process's backend: the GPUs when usable, else (or on request) the CPU interpreter;
// under TESSEL_REQUIRE_GPU=1 an unusable GPU is an error instead of a silent interpreter run.
// Keeps one Device per GPU and each thread's current device and streams.
#include "tessel/jit/device.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "interpreter_device.hpp"
#include "tessel/runtime/error.hpp"
#include "tessel/runtime/log.hpp"

namespace tessel::jit {

// Defined by the GPU backend when it is built (cuda_device.cpp, else cuda_device_stub.cpp):
// device `ordinal`, or null with the reason in `why`; and the number of GPUs the driver shows.
std::unique_ptr<Device> make_cuda_device(int ordinal, std::string& why);
int cuda_device_count();

namespace {
std::mutex g_mu;
bool g_chosen = false;                        // the backend is chosen (under g_mu)
std::vector<std::unique_ptr<Device>> g_devices;  // one per ordinal; GPUs past 0 made on first use
bool g_force_interpreter = false;
thread_local Device* t_current = nullptr;     // null: device 0
// The thread's current stream per device that has one (few devices: a short list).
thread_local std::vector<std::pair<const Device*, StreamRef>> t_streams;

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string_view(v) != "0";
}

// What a run that must use the GPU (the device runs of the tests, CI) gets instead of the
// interpreter: the reason, and the knob that made it an error.
[[noreturn]] void refuse_interpreter(const std::string& why) {
  throw GpuRequiredError("TESSEL_REQUIRE_GPU=1: the GPU is required, but " + why);
}

// Chooses the backend (under g_mu) and returns what to say about it, said once by the caller
// after the lock is released (a log sink may ask for a Device): a warning only for the fallback
// nobody asked for.
std::optional<std::pair<rt::LogLevel, std::string>> choose_backend() {
  g_chosen = true;
  // An explicit select(Interpreter) (the CLI's --interpret) is a request in code, honoured
  // always; the environment's TESSEL_INTERPRET=1 is not, when the GPU is required.
  const bool require_gpu = env_flag("TESSEL_REQUIRE_GPU");
  if (g_force_interpreter) {
    g_devices.push_back(std::make_unique<InterpreterDevice>("requested with --interpret"));
    return std::pair{rt::LogLevel::Info, std::string("kernels run on the CPU interpreter (requested with --interpret)")};
  }
  if (env_flag("TESSEL_INTERPRET")) {
    if (require_gpu) {
      g_chosen = false;
      refuse_interpreter("TESSEL_INTERPRET=1 asks for the CPU interpreter (unset one of the two)");
    }
    g_devices.push_back(std::make_unique<InterpreterDevice>("requested with TESSEL_INTERPRET"));
    return std::pair{rt::LogLevel::Info, std::string("kernels run on the CPU interpreter (requested with TESSEL_INTERPRET=1)")};
  }
  std::string why;
  std::unique_ptr<Device> gpu0 = make_cuda_device(0, why);
  if (!gpu0) {
    if (require_gpu) {
      g_chosen = false;
      refuse_interpreter("it is not usable: " + why + "; refusing to fall back to the CPU interpreter");
    }
    g_devices.push_back(std::make_unique<InterpreterDevice>(why));
    return std::pair{rt::LogLevel::Warn, "no usable GPU (" + why +
                                             "): kernels run on the CPU interpreter (TESSEL_INTERPRET=1 asks for it "
                                             "and silences this; TESSEL_REQUIRE_GPU=1 makes it an error)"};
  }
  std::string said = "kernels run on " + gpu0->name() + " (" + gpu0->arch() + ")";
  g_devices.resize(std::max(cuda_device_count(), 1));
  g_devices[0] = std::move(gpu0);
  if (g_devices.size() > 1) said += fmt::format(", device 0 of {}", g_devices.size());
  return std::pair{rt::LogLevel::Info, std::move(said)};
}

// Device `ordinal`, choosing the backend first if needed.
Device& device_at(int ordinal) {
  std::optional<std::pair<rt::LogLevel, std::string>> said;
  std::unique_lock lock(g_mu);
  if (!g_chosen) said = choose_backend();
  if (ordinal < 0 || static_cast<size_t>(ordinal) >= g_devices.size())
    throw std::out_of_range(fmt::format("Device::get({}): there {} {} device{} (ordinals 0 to {}), on the {}", ordinal,
                                        g_devices.size() == 1 ? "is" : "are", g_devices.size(),
                                        g_devices.size() == 1 ? "" : "s", g_devices.size() - 1,
                                        g_devices[0]->kind() == BackendKind::Cuda ? "GPU" : "CPU interpreter"));
  std::unique_ptr<Device>& slot = g_devices[static_cast<size_t>(ordinal)];
  if (!slot) {
    std::string why;
    slot = make_cuda_device(ordinal, why);
    if (!slot) throw std::runtime_error(fmt::format("GPU {} is not usable: {}", ordinal, why));
  }
  Device& d = *slot;
  lock.unlock();
  if (said) rt::log(said->first, said->second);
  return d;
}
}  // namespace

std::string Device::gpu_unavailable_reason() {
  std::string why;
  auto d = make_cuda_device(0, why);
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
  if (t_current != nullptr) [[likely]]
    return *t_current;
  Device& d = device_at(0);
  t_current = &d;
  return d;
}

int Device::count() {
  device_at(0);  // chooses the backend
  std::lock_guard lock(g_mu);
  return static_cast<int>(g_devices.size());
}

Device& Device::get(int ordinal) { return device_at(ordinal); }

void Device::set_current(Device& d) { t_current = &d; }

StreamRef Device::current_stream(const Device& d) {
  for (const auto& [dev, s] : t_streams)
    if (dev == &d) return s;
  return {};
}

void Device::set_current_stream(StreamRef s) { set_current_stream(current(), s); }

void Device::set_current_stream(Device& d, StreamRef s) {
  for (auto it = t_streams.begin(); it != t_streams.end(); ++it)
    if (it->first == &d) {
      if (s.handle == nullptr) t_streams.erase(it);
      else it->second = s;
      return;
    }
  if (s.handle != nullptr) t_streams.emplace_back(&d, s);
}

void Device::select(BackendKind kind) {
  std::lock_guard lock(g_mu);
  if (g_chosen && g_devices[0]->kind() != kind)
    throw std::logic_error("Device::select: a different backend is already in use");
  g_force_interpreter = kind == BackendKind::Interpreter;
}

}  // namespace tessel::jit
