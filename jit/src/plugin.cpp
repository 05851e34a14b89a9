// Loading kernel plugins (shared libraries that register kernels) with dlopen.
#include <dlfcn.h>

#include <stdexcept>

#include "tessel/jit/registry.hpp"

namespace tessel::jit {

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
}

}  // namespace tessel::jit
