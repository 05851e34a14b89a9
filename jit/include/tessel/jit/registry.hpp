// A registry of kernels by name, for tools (the CLI) that work on kernels they were not written for.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tessel/jit/kernel.hpp"

namespace tessel::jit {

struct KernelEntry {
  std::string name;
  std::string description;
  Meta defaults;                      // every meta-parameter with its default value
  std::vector<std::string> params;    // "x: ptr<f32>", ...
  // Traces with `meta` over the defaults and the given parameter specialisation (empty: none),
  // and runs the IR passes.
  std::function<std::unique_ptr<ir::Function>(const Meta&, std::vector<ir::ParamSpec>)> build_ir;
  // Autotuning (empty when the kernel is not tunable): its configs, the first being the default,
  // and the tuning key over its integer parameters.
  std::vector<tune::Config> configs;
  tune::KeySpec key;
};

class Registry {
 public:
  static Registry& global();
  // Registers a kernel; a second kernel with the same name is an error (std::invalid_argument).
  void add(KernelEntry e);
  const KernelEntry* find(std::string_view name) const;
  // Sorted by name.
  std::vector<const KernelEntry*> list() const;

 private:
  std::vector<KernelEntry> entries_;
};

// The registry entry of a Kernel object (which must outlive the registry's use of it).
template <class... A>
KernelEntry entry_of(Kernel<A...>& k, std::string description) {
  KernelEntry e;
  e.name = k.name();
  e.description = std::move(description);
  e.defaults = k.defaults();
  auto f = k.build_ir(k.defaults());
  for (size_t i = 0; i < f->params.size(); ++i)
    e.params.push_back(f->params[i].name + ": " + f->body.args[i]->type.str());
  e.build_ir = [&k](const Meta& m, std::vector<ir::ParamSpec> specs) { return k.build_ir(m, std::move(specs)); };
  if (const tune::Autotune* at = k.autotune_spec()) {
    e.configs = at->configs;
    e.key = at->key;
  }
  return e;
}

}  // namespace tessel::jit

// Kernel plugins: a shared library built against tessel defines this entry point (use the
// macro) and registers its kernels; `tessel --plugin LIB.so ...` loads it with dlopen and calls
// it with the CLI's registry, so the CLI lists, compiles, exports and dumps kernels it was not
// built with. The plugin carries its own copy of tessel's compiler code (link tessel::jit).
//
//   TESSEL_PLUGIN_KERNELS(registry) {
//     registry.add(tessel::jit::entry_of(my_kernel, "what it computes"));
//   }
#define TESSEL_PLUGIN_KERNELS(registry) \
  extern "C" __attribute__((visibility("default"))) void tessel_plugin_register(::tessel::jit::Registry& registry)

namespace tessel::jit {
// dlopen()s `path` and calls its tessel_plugin_register with `r`. Throws std::runtime_error
// naming the library and the reason (not found, no entry point, a kernel registered twice).
void load_plugin(const std::string& path, Registry& r = Registry::global());
}  // namespace tessel::jit
