// `tessel run SAMPLE`: run a sample on random inputs, check it against its host reference.
#include <fmt/format.h>

#include <chrono>

#include "commands.hpp"
#include "tessel/jit/device.hpp"
#include "tessel/samples/sample.hpp"

namespace tessel::cli {

void add_run(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand("run", "Run a sample on random inputs and verify it against a host reference");
  static std::string name;
  static bool interpret = false;
  static int64_t size = int64_t{1} << 20;
  static uint64_t seed = 1;
  static std::vector<std::string> defines;
  cmd->add_option("sample", name, "Sample name (see tessel list)")->required();
  cmd->add_flag("--interpret", interpret, "Run on the CPU interpreter even when a GPU is present");
  cmd->add_option("--size", size, "Problem size in elements")->check(CLI::Range(int64_t{1}, int64_t{1} << 31));
  cmd->add_option("--seed", seed, "Seed of the random inputs");
  cmd->add_option("-D", defines, "Meta-parameter NAME=VALUE (repeatable)");
  cmd->callback([&rc] {
    const samples::Sample* s = samples::find_sample(name);
    if (!s) throw UsageError(fmt::format("unknown sample '{}' (see tessel list)", name));
    if (interpret) jit::Device::select(jit::BackendKind::Interpreter);
    jit::Device& dev = jit::Device::current();
    fmt::print("sample:   {} ({})\n", s->name, s->description);
    fmt::print("device:   {}\n", dev.describe());
    fmt::print("size:     {} elements\n", size);
    auto t0 = std::chrono::steady_clock::now();
    samples::RunResult r = s->run(samples::RunConfig{size, seed, parse_defines(defines)});
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    fmt::print("launches: {}\n", r.launches);
    fmt::print("time:     {:.1f} ms (including compilation and transfers)\n", ms);
    fmt::print("max |error|: {:.3g} (tolerance {:.2g} + {:.2g}*|ref|)\n", r.max_abs_err, r.atol, r.rtol);
    if (r.verified) {
      fmt::print("verified: {} elements match the host reference on the {}\n", r.checked,
                 dev.kind() == jit::BackendKind::Cuda ? "GPU" : "CPU interpreter");
      rc = 0;
    } else {
      fmt::print("FAILED: {} of {} elements differ from the host reference; first: {}\n", r.mismatches, r.checked,
                 r.first_mismatch);
      rc = 3;
    }
  });
}

}  // namespace tessel::cli
