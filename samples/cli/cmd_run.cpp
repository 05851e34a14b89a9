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
  static bool interpret = false, warp_specialize = false, tma = false;
  static int device = 0;
  static int64_t size = int64_t{1} << 20;
  static uint64_t seed = 1;
  static std::vector<std::string> defines;
  static int64_t rows = 0, cols = 0, row_stride = 0;
  static int num_warps = 4, num_stages = 1, per_cta = 1;
  cmd->add_option("sample", name, "Sample name (see tessel list)")->required();
  cmd->add_flag("--interpret", interpret, "Run on the CPU interpreter even when a GPU is present");
  add_device_option(cmd, device);
  // Kernels index with i32 offsets: 2^31 elements would wrap (and allocate gigabytes first).
  cmd->add_option("--size", size, "Problem size in elements (at most 2^31 - 1)")
      ->check(CLI::Range(int64_t{1}, samples::kMaxI32Offset));
  cmd->add_option("--seed", seed, "Seed of the random inputs");
  cmd->add_option("-D", defines, "Meta-parameter NAME=VALUE (repeatable)");
  cmd->add_option("--rows", rows, "Row samples: number of rows (default: size / cols)")
      ->check(CLI::Range(int64_t{1}, samples::kMaxI32Offset));
  cmd->add_option("--cols", cols, "Row samples: row width (default: the sample's, 1000)")
      ->check(CLI::Range(int64_t{1}, samples::kMaxI32Offset));
  cmd->add_option("--row-stride", row_stride, "Row samples: elements from one row to the next (>= cols; default: cols)")
      ->check(CLI::Range(int64_t{1}, samples::kMaxI32Offset));
  cmd->add_option("--num-warps", num_warps, "Matmul samples: warps per program")
      ->check(CLI::IsMember({1, 2, 4, 8, 16, 32}));
  cmd->add_option("--num-stages", num_stages, "Matmul samples: pipeline depth of the K loop (cp.async stages)")
      ->check(CLI::Range(1, 8));
  cmd->add_option("--programs-per-cta", per_cta, "Matmul samples: programs sharing a CTA (2: ping-pong K loops)")
      ->check(CLI::IsMember({1, 2}));
  cmd->add_flag("--warp-specialize", warp_specialize,
                "Matmul samples: a producer warpgroup per CTA for pipelined wgmma K loops (sm_90a, "
                "--num-stages >= 2; 128 more threads per CTA; a compile error elsewhere)");
  cmd->add_flag("--tma", tma,
                "Matmul samples, with --warp-specialize: the producers copy by TMA (tensor maps built at "
                "launch) where the loads allow it, else by cp.async");
  cmd->callback([&rc] {
    const samples::Sample* s = samples::find_sample(name);
    if (!s) throw UsageError(fmt::format("unknown sample '{}' (see tessel list)", name));
    if (interpret) jit::Device::select(jit::BackendKind::Interpreter);
    jit::Device& dev = use_device(device);
    fmt::print("sample:   {} ({})\n", s->name, s->description);
    fmt::print("device:   {}\n", dev.describe());
    samples::RunConfig config{size, seed, parse_defines(defines), rows, cols, row_stride};
    config.options = jit::CompileOptions{num_warps, num_stages, per_cta, warp_specialize, tma};
    if (s->shape == samples::SampleShape::Rows) {
      int64_t c = cols > 0 ? cols : 1000;  // the row samples' default width
      if (row_stride > 0 && row_stride < c)
        throw UsageError(fmt::format("--row-stride {} is smaller than the row width {}", row_stride, c));
      fmt::print("size:     {} rows x {} columns, row stride {}\n", rows > 0 ? rows : std::max<int64_t>(1, size / c), c,
                 row_stride > 0 ? row_stride : c);
    } else if (s->shape == samples::SampleShape::Matmul) {
      int64_t m = rows > 0 ? rows : 0, n = cols > 0 ? cols : m;
      if (m > 0) fmt::print("size:     M={} N={} K={}, {} warps, {} stage(s)\n", m, n, n, num_warps, num_stages);
      else fmt::print("size:     about {} elements per matrix, {} warps, {} stage(s)\n", size, num_warps, num_stages);
    } else {
      fmt::print("size:     {} elements\n", size);
    }
    auto t0 = std::chrono::steady_clock::now();
    samples::RunResult r = s->run(config);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    fmt::print("launches: {}\n", r.launches);
    fmt::print("time:     {:.1f} ms (including compilation and transfers)\n", ms);
    if (s->shape == samples::SampleShape::Matmul)
      fmt::print("max |error|: {:.3g} (tolerance {:.2g} * sum_k |a||b| per output)\n", r.max_abs_err, r.rtol);
    else
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
