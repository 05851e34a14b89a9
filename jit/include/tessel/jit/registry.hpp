// A registry of kernels by name, for tools (the CLI) that work on kernels they were not written for.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessel/jit/kernel.hpp"

namespace tessel::jit {

// What `tessel run`, `tessel tune` and `tessel bench` need to run a kernel on inputs they make
// themselves (a kernel registered without one can be listed, compiled, exported and dumped).
struct Workload {
  // What one problem size is: one positive integer per name ({"n"}, {"rows", "cols"},
  // {"M", "N", "K"}); on the command line the values are joined by 'x' (`--sizes 8192x4096`).
  std::vector<std::string> size_names;
  // The sizes `tune` and `bench` use when none is given; `run` uses the first. Not empty.
  std::vector<std::vector<int64_t>> sizes;
  // The problem at one size (one value per size name) on Device::current(): random inputs (held
  // by Problem::inputs), the host reference the output is checked against (Problem::reference,
  // Problem::output), and the bytes and flops of one run. Usually Kernel::make_problem on arrays
  // made here. The configs tried are the kernel's Autotune configs, pruned by Problem::keep.
  std::function<tune::Problem(const std::vector<int64_t>& size)> make_problem;
};

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
  std::optional<Workload> workload;  // empty: no `run`, `tune` or `bench` from the CLI
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

// std::invalid_argument naming `kernel` when `w` is incomplete (see entry_of with a Workload).
void check_workload(const std::string& kernel, const Workload& w);

// The registry entry of a Kernel object (which must outlive the registry's use of it).
template <class... A>
KernelEntry entry_of(Kernel<A...>& k, std::string description) {
  KernelEntry e;
  e.name = k.name();
  e.description = std::move(description);
  e.defaults = k.defaults();
  auto f = k.trace_ir(k.defaults());  // the signature only: no passes (no TESSEL_DUMP_IR dumps per kernel)
  for (size_t i = 0; i < f->params.size(); ++i)
    e.params.push_back(f->params[i].name + ": " + f->body.args[i]->type.str());
  e.build_ir = [&k](const Meta& m, std::vector<ir::ParamSpec> specs) { return k.build_ir(m, std::move(specs)); };
  if (const tune::Autotune* at = k.autotune_spec()) {
    e.configs = at->configs;
    e.key = at->key;
  }
  return e;
}

// The same with a workload, so that `tessel run`, `tessel tune` and `tessel bench` run the kernel
// (std::invalid_argument when the workload has no size names, no sizes, a size with the wrong
// number of values or no make_problem, or the kernel declares no autotuning: a workload's configs
// are the kernel's).
template <class... A>
KernelEntry entry_of(Kernel<A...>& k, std::string description, Workload w) {
  KernelEntry e = entry_of(k, std::move(description));
  if (e.configs.empty())
    throw std::invalid_argument("kernel '" + e.name + "': a workload needs the kernel's autotune configs (Kernel::autotune)");
  check_workload(e.name, w);
  e.workload = std::move(w);
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
//
// A plugin carries its own copy of tessel (its own Device::current()): the macro also defines
// tessel_plugin_use_device, through which the loader's use_device_in_plugins makes the plugin's
// copy use the device the tool chose (the interpreter, or a GPU by ordinal).
#define TESSEL_PLUGIN_KERNELS(registry)                                                                    \
  extern "C" __attribute__((visibility("default"))) void tessel_plugin_use_device(int interpreter, int ordinal) { \
    ::tessel::jit::detail::plugin_use_device(interpreter, ordinal);                                        \
  }                                                                                                        \
  extern "C" __attribute__((visibility("default"))) void tessel_plugin_register(::tessel::jit::Registry& registry)

namespace tessel::jit {
// dlopen()s `path` and calls its tessel_plugin_register with `r`. Throws std::runtime_error
// naming the library and the reason (not found, no entry point, a kernel registered twice).
void load_plugin(const std::string& path, Registry& r = Registry::global());
// Makes every loaded plugin's copy of tessel use the interpreter (`interpreter`) or GPU `ordinal`
// on the calling thread, as this copy does (plugins built before this entry point are skipped).
void use_device_in_plugins(bool interpreter, int ordinal);

namespace detail {
// The plugin side of use_device_in_plugins (compiled into the plugin by TESSEL_PLUGIN_KERNELS).
inline void plugin_use_device(int interpreter, int ordinal) {
  if (interpreter) Device::select(BackendKind::Interpreter);
  else Device::set_current(ordinal);
}
}  // namespace detail
}  // namespace tessel::jit
