// GPU benchmarks of the elementwise samples: bandwidth vs device copy, fused vs unfused,
// host launch overhead vs raw cuLaunchKernel, cold JIT time. Writes JSON (argv[1]).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "bench_timer.hpp"
#include "tessel/lowering/compile.hpp"
#include "tessel/runtime/runtime.hpp"
#include "tessel/samples/elementwise_kernels.hpp"
#include "tessel/samples/sample.hpp"

using namespace tessel;
using namespace tessel::lang;
using jit::Array;
using jit::Grid;
using Clock = std::chrono::steady_clock;

namespace {

// The chain of bench/triton_ref.py (torch.compile's Triton kernel there):
// sigmoid(relu((x + 1) * 2) - 0.5), one input.
void chain_ref_kernel(Ptr<f32> x, Ptr<f32> out, Int n, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto offs = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = offs < n;
  store(out + offs, sigmoid(maximum((load(x + offs, mask) + 1.0f) * 2.0f, 0.0f) - 0.5f), mask);
}
jit::Kernel k_chain_ref{"chain_ref", &chain_ref_kernel, {"x", "out", "n"}, samples::kDefaultBlock};

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Median time of `fn` in ms (see bench_timer.hpp); `fn(i)` gets the repetition index (for rotation).
double time_ms(const std::function<void(int)>& fn, int warmup = 10, int reps = 60) {
  static bench::Timer timer;
  return timer.median_ms(fn, warmup, reps);
}

struct Row {
  std::string name;
  double ms;
  double bytes;  // bytes the fused form must move (the floor)
  double gbps() const { return bytes / (ms * 1e-3) / 1e9; }
};

}  // namespace

int main(int argc, char** argv) {
  std::string json_path = argc > 1 ? argv[1] : "tessel_bench.json";
  jit::Device& dev = jit::Device::current();
  fmt::print("device: {}\n", dev.describe());
  if (dev.kind() != jit::BackendKind::Cuda) {
    fmt::print(stderr, "tessel_bench needs a GPU\n");
    return 1;
  }
  const int64_t n = int64_t{1} << 26;  // 2^26 = 8192 x 8192 fp32 elements, 256 MiB per array
  const int64_t d = 8192;
  const Meta meta{{"BLOCK", argc > 2 ? std::stoll(argv[2]) : 1024}};
  const Grid grid{jit::cdiv(n, meta["BLOCK"])};
  const int warps = argc > 3 ? std::stoi(argv[3]) : 4;
  const jit::CompileOptions opts{warps, 1};

  // Two input sets, alternated between repetitions.
  std::vector<Array<float>> xs, ys;
  for (int s = 0; s < 2; ++s) {
    xs.emplace_back(samples::random_floats(n, 10 + s));
    ys.emplace_back(samples::random_floats(n, 20 + s));
  }
  Array<float> bias(samples::random_floats(d, 30)), out(n), t1(n), t2(n), t3(n), t4(n);

  // Device copy bandwidth (read + write), 1 GiB.
  Array<float> big_a(n * 4), big_b(n * 4);
  double copy_ms = time_ms([&](int) {
    rt::check(rt::cu().MemcpyDtoD(big_b.address(), big_a.address(), big_a.bytes()), "cuMemcpyDtoD");
  });
  double copy_gbps = 2.0 * big_a.bytes() / (copy_ms * 1e-3) / 1e9;
  fmt::print("device copy: {:.0f} GB/s\n", copy_gbps);

  const double B = 4.0 * n;
  std::vector<Row> rows;
  auto X = [&](int i) -> Array<float>& { return xs[i % 2]; };
  auto Y = [&](int i) -> Array<float>& { return ys[i % 2]; };
  rows.push_back({"add", time_ms([&](int i) { samples::k_add.launch(grid, meta, opts, X(i), Y(i), out, n); }), 3 * B});
  rows.push_back({"chain_ref", time_ms([&](int i) { k_chain_ref.launch(grid, meta, opts, X(i), out, n); }), 2 * B});
  rows.push_back({"chain5", time_ms([&](int i) { samples::k_chain5.launch(grid, meta, opts, X(i), Y(i), out, n); }),
                  3 * B});
  rows.push_back({"chain5_unfused", time_ms([&](int i) {
                    samples::k_add.launch(grid, meta, opts, X(i), Y(i), t1, n);
                    samples::k_scale.launch(grid, meta, opts, t1, t2, n, 2.0f);
                    samples::k_relu.launch(grid, meta, opts, t2, t3, n);
                    samples::k_add_scalar.launch(grid, meta, opts, t3, t4, n, -1.0f);
                    samples::k_sigmoid.launch(grid, meta, opts, t4, out, n);
                  }),
                  3 * B});
  rows.push_back({"scale_bias_relu", time_ms([&](int i) {
                    samples::k_scale_bias_relu.launch(grid, meta, opts, X(i), bias, out, n, d);
                  }),
                  2 * B});
  rows.push_back({"scale_bias_relu_unfused", time_ms([&](int i) {
                    samples::k_scale.launch(grid, meta, opts, X(i), t1, n, 2.0f);
                    samples::k_bias_add.launch(grid, meta, opts, t1, bias, t2, n, d);
                    samples::k_relu.launch(grid, meta, opts, t2, out, n);
                  }),
                  2 * B});
  rows.push_back({"bias_gelu_dropout", time_ms([&](int i) {
                    samples::k_bias_gelu_dropout.launch(grid, meta, opts, X(i), bias, out, n, d, 0.1f, 123);
                  }),
                  2 * B});
  rows.push_back({"bias_gelu_dropout_unfused", time_ms([&](int i) {
                    samples::k_bias_add.launch(grid, meta, opts, X(i), bias, t1, n, d);
                    samples::k_gelu.launch(grid, meta, opts, t1, t2, n);
                    samples::k_dropout.launch(grid, meta, opts, t2, out, n, 0.1f, 123);
                  }),
                  2 * B});

  // Host launch overhead: a tiny add, 20000 asynchronous launches, host time per launch;
  // the same PTX launched with raw cuLaunchKernel.
  const int64_t small = 1024;
  Array<float> sx(small), sy(small), so(small);
  auto launch_us = [&](const std::function<void()>& launch) {
    for (int i = 0; i < 1000; ++i) launch();
    dev.synchronize();
    auto t0 = Clock::now();
    const int N = 20000;
    for (int i = 0; i < N; ++i) launch();
    double us = ms_since(t0) * 1e3 / N;
    dev.synchronize();
    return us;
  };
  double tessel_us = launch_us([&] { samples::k_add.launch(Grid{1}, meta, opts, sx, sy, so, small); });
  auto add_ir = samples::k_add.build_ir(meta, {{true, false}, {true, false}, {true, false}, {true, false}});
  lowering::Options lo;
  lo.num_warps = warps;
  auto compiled = lowering::compile(*add_ir, lo);
  rt::Module mod = rt::Module::load_ptx(compiled.ptx);
  rt::Function fn = mod.get_function(compiled.launch.symbol);  // the entry is named for the variant
  uint64_t px = sx.address(), py = sy.address(), po = so.address();
  int32_t pn = small;
  void* params[] = {&px, &py, &po, &pn};
  double raw_us = launch_us([&] {
    rt::cu().LaunchKernel(fn.handle(), 1, 1, 1, 32 * warps, 1, 1, 0, nullptr, params, nullptr);
  });

  // Cold JIT of vector add in this process (LLVM already initialised by the kernels above,
  // so also report a fresh kernel's stages): trace+passes, LLVM IR, PTX, driver module load.
  jit::Kernel fresh{"add_cold", &samples::add_kernel, {"x", "y", "out", "n"}, samples::kDefaultBlock};
  auto t0 = Clock::now();
  auto ir_fn = fresh.build_ir(meta, {{true, false}, {true, false}, {true, false}, {true, false}});
  double trace_ms = ms_since(t0);
  auto t1c = Clock::now();
  auto c2 = lowering::compile(*ir_fn, lo);
  double lower_ms = ms_since(t1c);
  auto t2c = Clock::now();
  rt::Module m2 = rt::Module::load_ptx(c2.ptx);
  rt::Function f2 = m2.get_function(c2.launch.symbol);
  double load_ms = ms_since(t2c);
  double cold_total = ms_since(t0);

  // Disk-cache hit: the same IR compiled again by the device (as a new process would after
  // tracing): key, lookup, checksum, read, load the cubin, get the function. The first
  // compile below may miss (it fills the cache); the second must hit.
  std::shared_ptr<const ir::Function> ir_shared(std::move(ir_fn));
  dev.compile(ir_shared, opts);
  auto t3c = Clock::now();
  auto exe_hit = dev.compile(ir_shared, opts);
  double hit_ms = ms_since(t3c);

  fmt::print("\n{:<28} {:>9} {:>9} {:>8}\n", "kernel (2^26 fp32)", "ms", "GB/s", "of copy");
  std::FILE* js = std::fopen(json_path.c_str(), "w");
  fmt::print(js, "{{\n  \"device\": \"{}\",\n  \"copy_GBps\": {:.1f},\n  \"kernels\": {{\n", dev.describe(), copy_gbps);
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    fmt::print("{:<28} {:>9.4f} {:>9.0f} {:>7.1f}%\n", r.name, r.ms, r.gbps(), 100 * r.gbps() / copy_gbps);
    fmt::print(js, "    \"{}\": {{\"ms\": {:.5f}, \"GBps\": {:.1f}}}{}\n", r.name, r.ms, r.gbps(),
               i + 1 < rows.size() ? "," : "");
  }
  auto speedup = [&](const char* f, const char* u) {
    double a = 0, b = 0;
    for (auto& r : rows) {
      if (r.name == f) a = r.ms;
      if (r.name == u) b = r.ms;
    }
    return b / a;
  };
  double s1 = speedup("chain5", "chain5_unfused"), s2 = speedup("scale_bias_relu", "scale_bias_relu_unfused"),
         s3 = speedup("bias_gelu_dropout", "bias_gelu_dropout_unfused");
  fmt::print("fused speedup: chain5 {:.2f}x, scale_bias_relu {:.2f}x, bias_gelu_dropout {:.2f}x\n", s1, s2, s3);
  fmt::print("launch overhead: tessel {:.2f} us, raw cuLaunchKernel {:.2f} us ({:.2f}x)\n", tessel_us, raw_us,
             tessel_us / raw_us);
  fmt::print("cold JIT (vector add): trace+passes {:.2f} ms, LLVM IR {:.2f} ms, PTX {:.2f} ms, module load {:.2f} ms, "
             "total {:.2f} ms (lowering wall {:.2f} ms)\n",
             trace_ms, c2.ms_to_llvm, c2.ms_to_ptx, load_ms, cold_total, lower_ms);
  fmt::print("disk cache hit (lookup, verify, load cubin, get function): {:.3f} ms\n", hit_ms);
  fmt::print(js, "  }},\n  \"cache_hit_ms\": {:.4f},\n", hit_ms);
  fmt::print(js,
             "  \"speedup\": {{\"chain5\": {:.3f}, \"scale_bias_relu\": {:.3f}, \"bias_gelu_dropout\": {:.3f}}},\n"
             "  \"launch_us\": {{\"tessel\": {:.3f}, \"raw\": {:.3f}}},\n"
             "  \"cold_jit_ms\": {{\"trace_passes\": {:.3f}, \"llvm_ir\": {:.3f}, \"ptx\": {:.3f}, \"module_load\": {:.3f}, "
             "\"total\": {:.3f}}},\n  \"add_regs\": {}, \"add_local_bytes\": {}\n}}\n",
             s1, s2, s3, tessel_us, raw_us, trace_ms, c2.ms_to_llvm, c2.ms_to_ptx, load_ms, cold_total, f2.num_regs(),
             f2.local_size_bytes());
  std::fclose(js);
  return 0;
}
