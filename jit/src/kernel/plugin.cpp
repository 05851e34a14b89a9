// Loading kernel plugins (shared libraries that register kernels) with dlopen.
#include <dlfcn.h>

#include <mutex>
#include <stdexcept>
#include <vector>

#include "tessel/jit/registry.hpp"

namespace tessel::jit {
namespace {
using UseDeviceFn = void (*)(int, int);
std::mutex plugins_mu;
std::vector<UseDeviceFn>& plugin_use_device_fns() {
  static std::vector<UseDeviceFn> fns;
  return fns;
}
}  // namespace

void use_device_in_plugins(bool interpreter, int ordinal) {
  std::vector<UseDeviceFn> fns;
  {
    std::lock_guard lock(plugins_mu);
    fns = plugin_use_device_fns();
  }
  for (UseDeviceFn f : fns) f(interpreter ? 1 : 0, ordinal);
}

void load_plugin(const std::string& path, Registry& r) {
  // RTLD_LOCAL: the plugin's own copy of tessel stays private to it.
  void* lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) throw std::runtime_error("cannot load plugin '" + path + "': " + ::dlerror());
  using RegisterFn = void (*)(Registry&);
  auto fn = reinterpret_cast<RegisterFn>(::dlsym(lib, "tessel_plugin_register"));
  if (!fn)
    throw std::runtime_error("plugin '" + path +
                             "' has no tessel_plugin_register entry point (define it with TESSEL_PLUGIN_KERNELS)");
  try {
    fn(r);  // the library stays loaded: the registry now holds closures into it
  } catch (const std::exception& e) {
    throw std::runtime_error("plugin '" + path + "' failed to register its kernels: " + e.what());
  }
  if (auto use = reinterpret_cast<UseDeviceFn>(::dlsym(lib, "tessel_plugin_use_device"))) {
    std::lock_guard lock(plugins_mu);
    plugin_use_device_fns().push_back(use);
  }
}

}  // namespace tessel::jit
