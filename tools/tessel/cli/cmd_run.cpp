// `tessel run NAME`: run a sample, or a kernel registered with a workload (a plugin's), on random
// inputs and check it against its host reference.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "commands.hpp"
#include "option_flags.hpp"
#include "names.hpp"
#include "tessel/jit/device.hpp"
#include "tessel/samples/sample.hpp"
#include "tessel/samples/tunables.hpp"

namespace tessel::cli {
namespace {

// What `tessel run` was given (CLI11 writes into these).
std::string name;
bool interpret = false;
int device = 0;
int64_t size = int64_t{1} << 20;
uint64_t seed = 1;
std::vector<std::string> defines;
int64_t rows = 0, cols = 0, row_stride = 0;
jit::CompileOptions options;  // the option flags (--num-warps, ...: option_flags.hpp)
std::string sizes;
std::string conv;  // --conv BxHxWxCxK
int64_t splits = 0;  // --splits

// The size line of a built-in sample.
void print_sample_size(const samples::Sample& s) {
  if (s.shape == samples::SampleShape::Rows) {
    int64_t c = cols > 0 ? cols : 1000;  // the row samples' default width
    if (row_stride > 0 && row_stride < c)
      throw UsageError(fmt::format("--row-stride {} is smaller than the row width {}", row_stride, c));
    fmt::print("size:     {} rows x {} columns, row stride {}\n", rows > 0 ? rows : std::max<int64_t>(1, size / c), c,
               row_stride > 0 ? row_stride : c);
  } else if (s.shape == samples::SampleShape::Matmul) {
    int64_t m = rows > 0 ? rows : 0, n = cols > 0 ? cols : m;
    if (m > 0) fmt::print("size:     M={} N={} K={}, {} warps, {} stage(s)\n", m, n, n, options.num_warps,
                          options.num_stages);
    else fmt::print("size:     about {} elements per matrix, {} warps, {} stage(s)\n", size, options.num_warps,
                    options.num_stages);
  } else if (s.shape == samples::SampleShape::Conv) {
    fmt::print("size:     {}, {} warps, {} stage(s)\n", conv.empty() ? std::string("2x14x14x64x64 (BxHxWxCxK)") : conv,
               options.num_warps, options.num_stages);
  } else {
    fmt::print("size:     {} elements\n", size);
  }
}

// --conv BxHxWxCxK: the convolution samples' batch, input height and width, input and output channels.
samples::RunConfig::ConvSize parse_conv(const std::string& text) {
  samples::RunConfig::ConvSize c;
  if (text.empty()) return c;
  std::vector<samples::SizeArgs> parsed;
  try {
    parsed = samples::parse_sizes(text, 5);
  } catch (const std::invalid_argument& e) {
    throw UsageError(fmt::format("--conv '{}': {} (want BxHxWxCxK)", text, e.what()));
  }
  if (parsed.size() != 1) throw UsageError(fmt::format("--conv '{}': one size (BxHxWxCxK)", text));
  const std::vector<int64_t>& d = parsed.front().dims;
  c.batch = d.at(0), c.h = d.at(1), c.w = d.at(2), c.c = d.at(3), c.k = d.at(4);
  return c;
}

// The problem size of a kernel run through its workload: --sizes, else --size for a workload of
// one size name (`elements` > 0 when given), else the workload's first size.
std::vector<int64_t> workload_size(const jit::KernelEntry& k, const std::string& text, int64_t elements) {
  const jit::Workload& w = *k.workload;
  if (!text.empty()) {
    std::vector<samples::SizeArgs> parsed;
    try {
      parsed = samples::parse_sizes(text, w.size_names.size());
    } catch (const std::invalid_argument& e) {
      throw UsageError(fmt::format("{} (kernel '{}' takes {})", e.what(), k.name,
                                   fmt::join(w.size_names, "x")));
    }
    if (parsed.size() != 1) throw UsageError(fmt::format("--sizes '{}': run takes one size", text));
    return parsed.front().dims;
  }
  if (elements > 0) {
    if (w.size_names.size() != 1)
      throw UsageError(fmt::format("--size: kernel '{}' takes a size of {} values ({}): give --sizes", k.name,
                                   w.size_names.size(), fmt::join(w.size_names, "x")));
    return {elements};
  }
  return w.sizes.front();
}

}  // namespace

void add_run(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand(
      "run", "Run a kernel (a sample, a chain or a plugin's workload) on random inputs, verified against a host reference");
  cmd->add_option("name", name, "Kernel or sample name (see tessel list)")->required();
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
  cmd->add_option("--conv", conv,
                  "Convolution samples: batch x height x width x input channels x output channels, e.g. "
                  "32x56x56x64x64 (default 2x14x14x64x64)");
  cmd->add_option("--splits", splits,
                  "Split samples (attention_decode*, w4a16_splitk, w4a16_gemv, conv2d_bn_relu_splitk): the K or KV slices; "
                  "conv2d_bn_relu_streamk: the programs (default: the sample's)")
      ->check(CLI::Range(int64_t{1}, int64_t{4096}));
  add_option_flags(cmd, options);
  cmd->add_option("--sizes", sizes,
                  "Kernels run through their workload: one problem size, its values joined by 'x' (default: the "
                  "workload's first)");
  cmd->callback([cmd, &rc] {
    const Name& n = runnable_for("run", name);
    if (interpret) jit::Device::select(jit::BackendKind::Interpreter);
    jit::Device& dev = use_device(device);
    samples::RunResult r;
    const auto t0 = std::chrono::steady_clock::now();
    if (n.sample) {
      const samples::Sample& s = *n.sample;
      samples::RunConfig config;
      config.meta = parse_defines(defines);
      std::vector<const jit::KernelEntry*> kernels;
      for (const std::string& k : s.kernels)
        if (const jit::KernelEntry* e = jit::Registry::global().find(k)) kernels.push_back(e);
      if (!kernels.empty()) check_defines(config.meta, kernels, fmt::format("sample '{}'", s.name));
      fmt::print("sample:   {} ({})\n", s.name, s.description);
      fmt::print("device:   {}\n", dev.describe());
      config.n = size;
      config.seed = seed;
      config.rows = rows;
      config.cols = cols;
      config.row_stride = row_stride;
      check_option_flags(options);
      config.options = options;
      config.conv = parse_conv(conv);
      config.splits = splits;
      print_sample_size(s);
      r = s.run(config);
    } else {
      const jit::KernelEntry& k = *n.kernel;
      const std::vector<int64_t> dims = workload_size(k, sizes, cmd->count("--size") > 0 ? size : 0);
      const jit::Meta overrides = parse_defines(defines);
      check_defines(overrides, {&k}, fmt::format("kernel '{}'", k.name));
      // -D and the option flags given override the first config the kernel's prune keeps; the
      // rest keep its values.
      auto adjust = [&](jit::tune::Config c) {
        for (const auto& [m, v] : overrides.values()) c.meta.set(m, v);
        override_given_options(*cmd, options, c.opts);
        check_option_flags(c.opts);
        return c;
      };
      fmt::print("kernel:   {} ({})\n", k.name, k.description);
      fmt::print("device:   {}\n", dev.describe());
      fmt::print("size:     {}\n", n.tunable->size_str(samples::SizeArgs{dims}));
      jit::tune::Config used;
      r = samples::run_workload(k, dims, adjust, used);
      fmt::print("config:   {}\n", used.str());
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    fmt::print("launches: {}\n", r.launches);
    fmt::print("time:     {:.1f} ms (including compilation and transfers)\n", ms);
    if (n.sample && n.sample->shape == samples::SampleShape::Matmul)
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
