// tessel: the command-line tool (list, compile, run, tune, bench, report, ...).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <new>
#include <string_view>
#include <system_error>

#include "commands.hpp"
#include "tessel/ir/error.hpp"
#include "tessel/jit/cache.hpp"
#include "tessel/jit/device.hpp"
#include "tessel/jit/registry.hpp"
#include "tessel/runtime/ptxas.hpp"
#include "tessel/samples/sample.hpp"

namespace tessel::cli {

std::string os_error_text(const std::system_error& e) {
  std::string_view what = e.what();
  constexpr std::string_view kPrefix = "filesystem error: ";  // libstdc++'s, says nothing to a user
  if (what.starts_with(kPrefix)) what.remove_prefix(kPrefix.size());
  return std::string(what);
}

jit::Meta parse_defines(const std::vector<std::string>& defs) {
  jit::Meta m;
  for (const auto& d : defs) {
    auto eq = d.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError(fmt::format("-D expects NAME=VALUE, got '{}'", d));
    std::string name = d.substr(0, eq), value = d.substr(eq + 1);
    for (const auto& [prior, v] : m.values())
      if (prior == name)
        throw UsageError(fmt::format("-D {} is given twice ({} and {}); give each meta-parameter once", name, v, value));
    try {
      size_t used = 0;
      long long v = std::stoll(value, &used);
      if (used != value.size()) throw std::invalid_argument(value);
      // Checked here too, so the message names the flag (Meta::set would name this line).
      if (v < jit::Meta::kMin || v > jit::Meta::kMax)
        throw UsageError(fmt::format("-D {}: {} does not fit a 32-bit int ({} .. {}); meta-parameters are ints",
                                     name, value, jit::Meta::kMin, jit::Meta::kMax));
      m.set(name, v);
    } catch (const std::logic_error&) {
      throw UsageError(fmt::format("-D {}: '{}' is not an integer", name, value));
    }
  }
  return m;
}

void check_defines(const jit::Meta& meta, const std::vector<const jit::KernelEntry*>& kernels, const std::string& what) {
  for (const auto& [name, v] : meta.values()) {
    if (std::any_of(kernels.begin(), kernels.end(), [&](const jit::KernelEntry* k) { return k->defaults.has(name); }))
      continue;
    std::vector<std::string> have;
    for (const jit::KernelEntry* k : kernels)
      if (std::find(have.begin(), have.end(), k->defaults.str()) == have.end()) have.push_back(k->defaults.str());
    throw UsageError(fmt::format("{} has no meta-parameter '{}' (it has: {})", what, name, fmt::join(have, "; ")));
  }
}

}  // namespace tessel::cli

int main(int argc, char** argv) {
  using namespace tessel;
  CLI::App app{"tessel: a tile-language JIT for GPU kernels written in C++"};
  app.require_subcommand(1);
  // The version, the build (the cache keys' build id) and the ptxas tessel would run: scripts and
  // tests ask here rather than search for ptxas their own way.
  app.set_version_flag("--version", [] {
    const std::string ptxas = rt::find_ptxas();
    return fmt::format("tessel {} (build {})\nptxas: {}", jit::cache::tessel_version(), jit::cache::tessel_build_id(),
                       ptxas.empty() ? fmt::format("not found ({})", rt::ptxas_not_found_hint()) : ptxas);
  });
  int rc = 0;
  cli::add_list(app, rc);
  cli::add_compile(app, rc);
  cli::add_run(app, rc);
  cli::add_cache(app, rc);
  cli::add_export(app, rc);
  cli::add_dump(app, rc);
  cli::add_tune(app, rc);
  cli::add_bench(app, rc);
  cli::add_report(app, rc);
  // Plugins load while the command line is parsed, before any subcommand runs.
  app.add_option_function<std::vector<std::string>>(
         "--plugin",
         [](const std::vector<std::string>& libs) {
           for (const auto& l : libs) {
             try {
               jit::load_plugin(l);
             } catch (const std::exception& e) {
               throw cli::UsageError(e.what());  // a bad plugin is the user's input: exit 1
             }
           }
         },
         "Load kernels from a shared library (TESSEL_PLUGIN_KERNELS); give it before the subcommand")
      ->trigger_on_parse();
  try {
    samples::register_sample_kernels();
    app.parse(argc, argv);
    return rc;
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 1;
  } catch (const KernelError& e) {  // the user's kernel function threw: "error in kernel NAME: ..."
    fmt::print(stderr, "tessel: {}\n", e.what());
    return 1;
  } catch (const UserError& e) {  // input or environment (cli::UsageError too): not tessel's bug
    fmt::print(stderr, "tessel: error: {}\n", e.what());
    return 1;
  } catch (const CompileError& e) {
    fmt::print(stderr, "tessel: {}\n", e.what());
    return 1;
  } catch (const jit::GpuRequiredError& e) {  // TESSEL_REQUIRE_GPU=1 on a machine without a usable GPU
    fmt::print(stderr, "tessel: error: {}\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {  // the machine's memory, not a tessel bug (sizes are checked first)
    fmt::print(stderr, "tessel: error: out of host memory (an allocation failed); expected a problem size that "
                       "fits this machine's memory\n");
    return 1;
  } catch (const std::system_error& e) {  // the OS refused (filesystem_error too): names the call and path
    fmt::print(stderr, "tessel: error: {}\n", cli::os_error_text(e));
    return 1;
  } catch (const InternalError& e) {
    fmt::print(stderr, "tessel: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "tessel: internal error: {}\n", e.what());
    return 2;
  } catch (...) {  // a plugin's code may throw anything; nothing may terminate the CLI
    fmt::print(stderr, "tessel: internal error: an exception that is not a std::exception (thrown by a plugin?)\n");
    return 2;
  }
}
