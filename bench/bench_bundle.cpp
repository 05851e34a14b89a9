// The production runtime against the JIT on the fastest matmul config: f16 4096^3 on a
// 128x256x64 tile, 8 warps, 4 stages, TMA producer warps (sm_90a), launched
//   - from a bundle (rt::Bundle: tensor maps encoded by the runtime at each launch),
//   - by the JIT (jit::Kernel),
//   - from a bundle of the same tile without producer warps (what bundles ran before).
//   - by cuLaunchKernel itself on the image the TMA bundle loaded, its arguments and tensor
//     maps prepared once (the floor of a launch call).
// GPU time per launch (do_bench's method, bench_timer.hpp) and host time per launch call (the
// median of 10 batches of 200 launches of a 256^3 problem, each batch timed up to its last call
// and then synchronised: few enough that the driver's queue never fills and blocks a call).
// Each output is spot-checked. Writes JSON (argv[1]). Needs an sm_90 GPU.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iterator>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <unistd.h>
#include <random>
#include <string>
#include <vector>

#include "bench_timer.hpp"
#include "tessel/interp/float_formats.hpp"
#include "tessel/jit/bundle_writer.hpp"
#include "tessel/runtime/bundle.hpp"
#include "tessel/runtime/driver.hpp"
#include "tessel/runtime/module.hpp"
#include "tessel/runtime/tensor_map.hpp"
#include "tessel/samples/matmul_kernels.hpp"

using namespace tessel;
namespace fs = std::filesystem;

namespace {

jit::tune::Config tile(bool producers) {
  jit::tune::Config c{jit::Meta{{"BLOCK_M", 128}, {"BLOCK_N", 256}, {"BLOCK_K", 64}, {"GROUP_M", 8}}, {8, 4}};
  c.opts.warp_specialize = c.opts.tma = producers;
  return c;
}

// A bundle of `matmul` whose only config is `c`, for sm_90a, with the unit-stride variant.
fs::path export_one(const fs::path& dir, const jit::tune::Config& c) {
  jit::Kernel k{"matmul", &samples::matmul_kernel<lang::f16, lang::f16>, samples::kMatmulParams,
                samples::kMatmulMeta, jit::tune::Autotune{{c}, jit::tune::KeySpec{{{"M"}, {"N"}, {"K"}}}, {}, {}}};
  const jit::KernelEntry e = jit::entry_of(k, "C = A @ B");
  jit::ExportOptions o;
  o.archs = {"sm_90a"};
  o.tune_db = dir / "none.json";
  o.variants.insert(o.variants.begin(), jit::ExportVariant{"div16_one", true, {"stride_ak", "stride_bn", "stride_cn"}});
  const jit::KernelEntry* ks[] = {&e};
  jit::export_bundle(ks, dir, o);
  return dir;
}

struct Problem {
  int n;
  std::vector<uint16_t> a, b;
  rt::DeviceBuffer da, db, dc;
  explicit Problem(int n_) : n(n_), a(size_t(n_) * n_), b(size_t(n_) * n_), da(a.size() * 2), db(b.size() * 2), dc(a.size() * 2) {
    std::mt19937 rng(static_cast<uint32_t>(n));
    std::uniform_real_distribution<double> d(-1.0, 1.0);
    for (auto& v : a) v = interp::f16_from_double(d(rng));
    for (auto& v : b) v = interp::f16_from_double(d(rng));
    da.upload(a.data(), a.size() * 2);
    db.upload(b.data(), b.size() * 2);
  }
  unsigned grid() const { return static_cast<unsigned>(((n + 127) / 128) * ((n + 255) / 256)); }
  // Worst error of 64 sampled outputs relative to sum |a||b|.
  double check() const {
    std::vector<uint16_t> c(a.size());
    dc.download(c.data(), c.size() * 2);
    std::mt19937_64 g(7);
    double worst = 0;
    for (int s = 0; s < 64; ++s) {
      const int64_t i = g() % n, j = g() % n;
      double acc = 0, mag = 0;
      for (int64_t k = 0; k < n; ++k) {
        const double p = interp::f16_to_double(a[i * n + k]) * interp::f16_to_double(b[k * n + j]);
        acc += p, mag += std::fabs(p);
      }
      const double got = interp::f16_to_double(c[i * n + j]);
      worst = std::max(worst, std::isfinite(got) ? std::fabs(got - acc) / std::max(mag, 1e-30) : 1.0);
    }
    return worst;
  }
};

// cuLaunchKernel on the image a bundle kernel loaded for problem `p`'s variant, with the
// arguments and tensor maps built once: what a launch call costs without any launcher.
class RawLaunch {
 public:
  RawLaunch(const fs::path& bundle_root, rt::BundleKernel& k, const Problem& p) {
    const int n = p.n;
    const int v = k.variant_for(p.da.ptr(), p.db.ptr(), p.dc.ptr(), n, n, n, n, int32_t{1}, n, int32_t{1}, n,
                                int32_t{1});
    const std::optional<rt::BundleKernel::LoadedVariant> l = k.loaded(static_cast<size_t>(v));
    if (!l) throw std::runtime_error("raw launch: launch the bundle kernel first");
    const rt::BundleVariant& var = k.info().variants.at(static_cast<size_t>(v));
    const rt::BundleImage* im = nullptr;
    for (const auto& i : var.images)
      if (i.file == l->file) im = &i;
    std::ifstream in(bundle_root / l->file, std::ios::binary);
    const std::vector<char> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    module_.emplace(rt::Module::load_cubin(bytes));
    fn_ = module_->get_function(var.entry).handle();
    shared_ = static_cast<unsigned>(im->launch.shared_bytes);
    if (shared_ > 48 * 1024) module_->get_function(var.entry).set_max_dynamic_shared(static_cast<int>(shared_));
    threads_ = static_cast<unsigned>(im->launch.threads);
    grid_ = p.grid();
    ptrs_ = {p.da.ptr(), p.db.ptr(), p.dc.ptr()};
    ints_ = {n, n, n, n, 1, n, 1, n, 1};
    const std::array<int64_t, 12> as_ints{0, 0, 0, n, n, n, n, 1, n, 1, n, 1};
    for (size_t i = 0; i < 3; ++i) params_.push_back(&ptrs_[i]);
    for (size_t i = 0; i < ints_.size(); ++i) params_.push_back(&ints_[i]);
    for (size_t m = 0; m < im->launch.tensor_maps.size(); ++m) {
      const rt::TensorMapRecipe& r = im->launch.tensor_maps[m];
      rt::encode_tensor_map(maps_[m], r, as_ints, ptrs_.at(static_cast<size_t>(r.base_param)), "matmul");
      params_.push_back(&maps_[m]);
    }
    params_.push_back(nullptr);
  }
  void launch() {
    const CUresult r =
        rt::cu().LaunchKernel(fn_, grid_, 1, 1, threads_, 1, 1, shared_, nullptr, params_.data(), nullptr);
    if (r != CUDA_SUCCESS) throw std::runtime_error(fmt::format("cuLaunchKernel: error {}", static_cast<int>(r)));
  }

 private:
  std::optional<rt::Module> module_;
  CUfunction fn_ = nullptr;
  unsigned grid_ = 0, threads_ = 0, shared_ = 0;
  std::array<CUdeviceptr, 3> ptrs_{};
  std::array<int32_t, 9> ints_{};
  alignas(64) std::array<CUtensorMap, LaunchSpec::kMaxTensorMaps> maps_{};
  std::vector<void*> params_;
};

}  // namespace

int main(int argc, char** argv) {
  const std::string json_path = argc > 1 ? argv[1] : "tessel_bench_bundle.json";
  jit::Device& dev = jit::Device::current();
  fmt::print("device: {}\n", dev.describe());
  if (dev.kind() != jit::BackendKind::Cuda || dev.arch() != "sm_90") {
    fmt::print(stderr, "bench_bundle needs an sm_90 GPU\n");
    return 1;
  }
  // The runtime half (buffers, bundles, raw launches) works in the context current on the thread,
  // which tessel's JIT leaves as it found it: the program makes device 0's its own.
  rt::Context ctx(0);
  const fs::path root = fs::temp_directory_path() / fmt::format("tessel_bench_bundle_{}", ::getpid());
  rt::Bundle with = rt::Bundle::open(export_one(root / "tma", tile(true)));
  rt::Bundle without = rt::Bundle::open(export_one(root / "plain", tile(false)));
  rt::BundleKernel& kt = with.kernel("matmul");
  rt::BundleKernel& kp = without.kernel("matmul");

  struct Way {
    std::string name;
    std::function<void(Problem&)> launch;
  };
  auto bundle_launch = [](rt::BundleKernel& k) {
    return [&k](Problem& p) {
      const int n = p.n;
      k.launch(nullptr, rt::Dim3{p.grid()}, p.da.ptr(), p.db.ptr(), p.dc.ptr(), n, n, n, n, int32_t{1}, n, int32_t{1},
               n, int32_t{1});
    };
  };
  const jit::tune::Config jt = tile(true);
  std::vector<Way> ways{
      {"bundle_tma", bundle_launch(kt)},
      {"jit_tma",
       [&](Problem& p) {
         const jit::DevicePtr<uint16_t> a{p.da.ptr()}, b{p.db.ptr()}, c{p.dc.ptr()};
         const int n = p.n;
         samples::k_matmul.launch(jit::Grid{p.grid()}, jt.meta, jt.opts, a, b, c, n, n, n, n, 1, n, 1, n, 1);
       }},
      {"bundle_no_producers", bundle_launch(kp)},
  };
  std::optional<RawLaunch> raw;  // made once the TMA bundle has loaded its image for `small`
  bench::Timer timer;
  Problem big(4096), small(256);
  bool failed = false;
  std::string json = fmt::format("{{\n  \"device\": \"{}\",\n  \"kernels\": {{\n", dev.describe());
  // Host time per launch call: the median over batches that stay below the queue's depth.
  auto host_us_per_call = [&](const std::function<void()>& call) {
    for (int i = 0; i < 50; ++i) call();
    dev.synchronize();
    constexpr int kBatches = 10, kCalls = 200;
    std::vector<double> per_call;
    for (int b = 0; b < kBatches; ++b) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < kCalls; ++i) call();
      per_call.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
                         kCalls);
      dev.synchronize();
    }
    std::sort(per_call.begin(), per_call.end());
    return per_call[kBatches / 2];
  };
  for (size_t w = 0; w < ways.size(); ++w) {
    Way& way = ways[w];
    big.dc.fill_u32(0x7fc0dead);
    const double ms = timer.median_ms([&](int) { way.launch(big); }, 5, 50);
    const double err = big.check();
    const double host_us = host_us_per_call([&] { way.launch(small); });
    const double small_err = small.check();
    failed |= err >= 1e-2 || small_err >= 1e-2;
    fmt::print("{:<22} 4096^3 {:.4f} ms ({:.1f} TFLOP/s)  launch call {:.2f} us  max rel err {:.1e} / {:.1e}\n", way.name,
               ms, 2.0 * 4096.0 * 4096.0 * 4096.0 / (ms * 1e-3) / 1e12, host_us, err, small_err);
    json += fmt::format("    \"{}\": {{\"ms\": {:.5f}, \"launch_call_us\": {:.3f}}}{}\n", way.name, ms, host_us,
                        w + 1 < ways.size() ? "," : "");
  }
  // The floor: cuLaunchKernel on the TMA bundle's image, nothing prepared per call.
  raw.emplace(root / "tma", kt, small);
  small.dc.fill_u32(0x7fc0dead);
  const double raw_us = host_us_per_call([&] { raw->launch(); });
  const double raw_err = small.check();
  failed |= raw_err >= 1e-2;
  fmt::print("{:<22} launch call {:.2f} us  max rel err {:.1e}\n", "raw_cuLaunchKernel", raw_us, raw_err);
  json += fmt::format("    ,\"raw_cuLaunchKernel\": {{\"launch_call_us\": {:.3f}}}\n", raw_us);
  json += "  }\n}\n";
  std::FILE* f = std::fopen(json_path.c_str(), "w");
  std::fputs(json.c_str(), f);
  std::fclose(f);
  std::error_code ec;
  fs::remove_all(root, ec);
  return failed ? 1 : 0;
}
