// Bundles on a real GPU: export here, open, launch through rt::Bundle and check against the host.
// Each case (doctest suite "gpu") runs only when a CUDA driver is present; otherwise it is a
// visible skip, and a failure under TESSEL_TEST_REQUIRE_GPU=1 (common/gpu_gate.hpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <utility>

#include "../common/gpu_gate.hpp"
#include "bundle_test_util.hpp"
#include "tessel/interp/float_formats.hpp"
#include "tessel/jit/bundle_writer.hpp"
#include "tessel/jit/kernel.hpp"
#include "tessel/samples/matmul_kernels.hpp"
#include "tessel/runtime/bundle.hpp"
#include "tessel/runtime/runtime.hpp"
#include "tessel/samples/sample.hpp"

using namespace tessel;
using namespace tessel::bundle_test;

namespace {

bool gpu_or_skip() {
  if (rt::Driver::get().available()) return true;
  tessel_test::skip_gpu_case("no CUDA driver: bundle GPU tests — " + rt::Driver::get().unavailable_reason());
  return false;
}

constexpr uint32_t kPoison = 0x7fc0dead;

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-100.0f, 100.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// Exports `names` for the GPU present (its own sm, so a cubin when ptxas or the driver can make one)
// plus sm_80 (PTX fallback material) into a fresh bundle.
fs::path export_for_gpu(const TempDir& t, std::initializer_list<const char*> names, const rt::Device& dev) {
  samples::register_sample_kernels();
  std::vector<const jit::KernelEntry*> ks;
  for (const char* n : names) ks.push_back(jit::Registry::global().find(n));
  jit::ExportOptions o;
  const int sm = std::min(dev.sm_arch(), 90);  // the newest target the lowering emits
  o.archs = {"sm_80"};
  if (sm != 80) o.archs.push_back("sm_" + std::to_string(sm));
  jit::export_bundle(ks, t.path / "b", o);
  return t.path / "b";
}

// add over n elements; pointers offset by `misalign` bytes. Returns bad elements (guard zone included).
size_t run_add(rt::BundleKernel& k, size_t n, unsigned misalign, uint32_t seed, int* variant) {
  auto a = random_floats(n, seed), b = random_floats(n, seed + 1);
  rt::DeviceBuffer da(n * 4 + 16), db(n * 4 + 16), dout((n + 16) * 4 + 16);
  da.upload(a.data(), n * 4, misalign);
  db.upload(b.data(), n * 4, misalign);
  dout.fill_u32(kPoison);
  const CUdeviceptr pa = da.ptr() + misalign, pb = db.ptr() + misalign, pout = dout.ptr() + misalign;
  const auto block = static_cast<size_t>(k.meta("BLOCK"));
  *variant = k.variant_for(pa, pb, pout, static_cast<int32_t>(n));
  k.launch(nullptr, rt::Dim3{static_cast<unsigned>((n + block - 1) / block)}, pa, pb, pout, static_cast<int32_t>(n));
  std::vector<float> out(n + 16);
  dout.download(out.data(), out.size() * 4, misalign);
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) bad += out[i] == a[i] + b[i] ? 0 : 1;  // one f32 add: exact
  for (size_t i = n; i < n + 16; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &out[i], 4);
    bad += bits == kPoison ? 0 : 1;
  }
  return bad;
}

}  // namespace

TEST_CASE("GPU: an exported add runs from the bundle, aligned (div16) and misaligned (generic), at odd sizes" *
          doctest::test_suite("gpu")) {
  if (!gpu_or_skip()) return;
  rt::Context ctx(0);
  TempDir t;
  const fs::path dir = export_for_gpu(t, {"add"}, ctx.device());
  rt::Bundle b = rt::Bundle::open(dir);
  rt::BundleKernel& k = b.kernel("add");
  for (size_t n : {size_t{1}, size_t{4097}, size_t{65536}, size_t{1000003}})
    for (unsigned mis : {0u, 4u}) {
      CAPTURE(n);
      CAPTURE(mis);
      int variant = -1;
      CHECK(run_add(k, n, mis, static_cast<uint32_t>(n + mis), &variant) == 0);
      const bool aligned = mis == 0 && n % 16 == 0;
      CHECK(k.info().variants[variant].name == (aligned ? "div16" : "generic"));
      REQUIRE(k.loaded(variant).has_value());
    }
  for (size_t v = 0; v < k.info().variants.size(); ++v) {
    auto l = k.loaded(v);
    REQUIRE(l.has_value());
    MESSAGE(l->variant << ": " << l->file << " (" << l->load_ms << " ms) " << l->note);
    // A cubin for exactly this GPU is preferred; PTX only when the driver rejected it (then said why).
    const std::string arch = "sm_" + std::to_string(ctx.device().sm_arch());
    bool exact_cubin = false;
    for (const auto& im : k.info().variants[v].images) exact_cubin |= im.kind == rt::ImageKind::Cubin && im.arch == arch;
    if (exact_cubin) CHECK((l->kind == rt::ImageKind::Cubin || !l->note.empty()));
  }
}

TEST_CASE("GPU: the single-file bundle and a PTX-only bundle launch the same kernel correctly" *
          doctest::test_suite("gpu")) {
  if (!gpu_or_skip()) return;
  rt::Context ctx(0);
  TempDir t;
  samples::register_sample_kernels();
  const jit::KernelEntry* add = jit::Registry::global().find("add");
  jit::ExportOptions o;
  o.archs = {"sm_80"};  // PTX for an older sm: the driver JIT-compiles it for this GPU
  o.cubins = false;
  o.pack = t.path / "b.tsb";
  std::vector<const jit::KernelEntry*> ks{add};
  jit::export_bundle(ks, t.path / "b", o);
  rt::Bundle b = rt::Bundle::open(t.path / "b.tsb");
  rt::BundleKernel& k = b.kernel("add");
  k.load_all();
  int variant = -1;
  CHECK(run_add(k, 4097, 0, 7, &variant) == 0);
  CHECK(k.loaded(variant)->kind == rt::ImageKind::Ptx);
  CHECK(k.loaded(variant)->arch == "sm_80");
}

// The images of a bundle opened from memory come from the bytes when a variant first loads;
// launches are otherwise the file's: same variants, same results.
TEST_CASE("GPU: a bundle opened from memory, copied or borrowed, launches as the file does" *
          doctest::test_suite("gpu")) {
  if (!gpu_or_skip()) return;
  rt::Context ctx(0);
  TempDir t;
  jit::ExportOptions o;
  o.pack = t.path / "b.tsb";
  samples::register_sample_kernels();
  const int sm = std::min(ctx.device().sm_arch(), 90);
  o.archs = {"sm_80"};
  if (sm != 80) o.archs.push_back("sm_" + std::to_string(sm));
  std::vector<const jit::KernelEntry*> ks{jit::Registry::global().find("add")};
  jit::export_bundle(ks, t.path / "b", o);
  const std::string bytes = read(t.path / "b.tsb");
  rt::Bundle from_file = rt::Bundle::open(t.path / "b.tsb");
  rt::Bundle copied = rt::Bundle::open(std::as_bytes(std::span(bytes)), "copied");
  rt::Bundle borrowed = rt::Bundle::open_borrowed(std::as_bytes(std::span(bytes)), "borrowed");
  for (rt::Bundle* b : {&from_file, &copied, &borrowed}) {
    CAPTURE(b->origin());
    rt::BundleKernel& k = b->kernel("add");
    for (unsigned misalign : {0u, 4u}) {
      CAPTURE(misalign);
      int variant = -1;
      // Aligned pointers and n: div16; misaligned ones and an odd n: generic.
      CHECK(run_add(k, misalign ? 4097 : 4096, misalign, 11 + misalign, &variant) == 0);
      REQUIRE(variant >= 0);
      CHECK(k.info().variants[static_cast<size_t>(variant)].name == (misalign ? "generic" : "div16"));
      auto l = k.loaded(static_cast<size_t>(variant));
      REQUIRE(l.has_value());
      const auto f = from_file.kernel("add").loaded(static_cast<size_t>(variant));
      REQUIRE(f.has_value());
      CHECK(l->file == f->file);  // the same image chosen from memory as from the file
    }
  }
}

TEST_CASE("GPU: a corrupted image is refused at load, before the driver sees it" * doctest::test_suite("gpu")) {
  if (!gpu_or_skip()) return;
  rt::Context ctx(0);
  TempDir t;
  const fs::path dir = export_for_gpu(t, {"add"}, ctx.device());
  rt::Bundle b = rt::Bundle::open(dir);
  rt::BundleKernel& k = b.kernel("add");
  // Damage every image of the generic variant (same size), then launch something that needs it.
  for (const auto& im : k.info().variants[1].images) {
    std::string bytes = read(dir / im.file);
    bytes[bytes.size() / 2] ^= 0x55;
    write(dir / im.file, bytes);
  }
  rt::DeviceBuffer buf(64);
  CUresult r = k.try_launch(nullptr, rt::Dim3{1}, buf.ptr() + 4, buf.ptr() + 4, buf.ptr() + 4, int32_t{3});
  CHECK(r == CUDA_ERROR_INVALID_IMAGE);
  CHECK(std::string(rt::last_bundle_error()).find("is corrupt (sha256") != std::string::npos);
}

namespace {
// The f16 matmul samples' own error bound relative to sum |a||b| (rel_bound<f16> in
// samples/src/matmul_samples.cpp): C's f16 rounding (2^-11 of |C| <= sum |a||b|) plus the f32
// accumulation. A bundle launch of the same kernel must meet it too.
constexpr double kF16MatmulBound = 1e-3;

// The worst error of f16 C = A @ B (row-major, M x K and K x N) against a double reference over
// the f16 inputs, relative to sum |a||b|; 1 for a non-finite (poisoned) output.
double matmul_error(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b, const std::vector<uint16_t>& c,
                    int M, int N, int K) {
  double worst = 0;
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double acc = 0, mag = 0;
      for (int kk = 0; kk < K; ++kk) {
        const double p = interp::f16_to_double(a[static_cast<size_t>(m) * K + kk]) *
                         interp::f16_to_double(b[static_cast<size_t>(kk) * N + n]);
        acc += p, mag += std::fabs(p);
      }
      const double got = interp::f16_to_double(c[static_cast<size_t>(m) * N + n]);
      worst = std::max(worst, std::isfinite(got) ? std::fabs(got - acc) / std::max(mag, 1e-30) : 1.0);
    }
  return worst;
}

// C = A @ B in f16 from a bundle launch, against a double reference over the f16 inputs;
// returns the worst error relative to sum |a||b| (or 1 for a poisoned or wrong-shaped output).
double run_matmul(rt::BundleKernel& k, int M, int N, int K, uint32_t seed, int* variant) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  std::vector<uint16_t> a(static_cast<size_t>(M) * K), b(static_cast<size_t>(K) * N);
  for (auto& v : a) v = interp::f16_from_double(d(rng));
  for (auto& v : b) v = interp::f16_from_double(d(rng));
  // C with a poisoned guard zone after it (fill_u32 wants whole words).
  rt::DeviceBuffer da(a.size() * 2), db(b.size() * 2), dc((static_cast<size_t>(M) * N * 2 + 64 + 3) / 4 * 4);
  da.upload(a.data(), a.size() * 2);
  db.upload(b.data(), b.size() * 2);
  dc.fill_u32(kPoison);
  std::vector<uint16_t> poisoned(static_cast<size_t>(M) * N + 32);
  dc.download(poisoned.data(), poisoned.size() * 2);
  const CUdeviceptr pa = da.ptr(), pb = db.ptr(), pc = dc.ptr();
  const int64_t bm = k.meta("BLOCK_M"), bn = k.meta("BLOCK_N");
  const auto grid = static_cast<unsigned>(((M + bm - 1) / bm) * ((N + bn - 1) / bn));
  *variant = k.variant_for(pa, pb, pc, M, N, K, K, int32_t{1}, N, int32_t{1}, N, int32_t{1});
  k.launch(nullptr, rt::Dim3{grid}, pa, pb, pc, M, N, K, K, int32_t{1}, N, int32_t{1}, N, int32_t{1});
  std::vector<uint16_t> c(static_cast<size_t>(M) * N + 32);
  dc.download(c.data(), c.size() * 2);
  const double worst = matmul_error(a, b, c, M, N, K);
  // Nothing written past C.
  for (size_t i = static_cast<size_t>(M) * N; i < c.size(); ++i)
    if (c[i] != poisoned[i]) return 1.0;
  return worst;
}
}  // namespace

namespace {
// A bundle of `fn` (a matmul sample's kernel function, as `name`) whose only config is the
// 128x256x64 w8 s4 warp_specialize tma tile, with a "div16_one" variant.
template <class Fn>
rt::Bundle export_tma(const TempDir& t, const char* name, Fn fn) {
  jit::tune::Config tma{jit::Meta{{"BLOCK_M", 128}, {"BLOCK_N", 256}, {"BLOCK_K", 64}, {"GROUP_M", 8}}, {8, 4}};
  tma.opts.warp_specialize = true;
  tma.opts.tma = true;
  jit::Kernel kernel{name, fn, samples::kMatmulParams, samples::kMatmulMeta,
                     jit::tune::Autotune{{tma}, jit::tune::KeySpec{{{"M"}, {"N"}, {"K"}}}, {}, {}}};
  const jit::KernelEntry e = jit::entry_of(kernel, "C = A @ B");
  jit::ExportOptions o;
  o.archs = {"sm_90a"};
  o.tune_db = t.path / "none.json";
  o.variants.insert(o.variants.begin(), jit::ExportVariant{"div16_one", true, {"stride_ak", "stride_bn", "stride_cn"}});
  const jit::KernelEntry* ks[] = {&e};
  jit::export_bundle(ks, t.path / "b", o);
  return rt::Bundle::open(t.path / "b");
}
// An sm_90 GPU's context and a bundle exported by export_tma, or a visible skip (open() false).
struct TmaBundle {
  std::optional<rt::Context> ctx;
  TempDir t;
  std::optional<rt::Bundle> bundle;
  template <class Fn>
  bool open(const char* name, Fn fn) {
    if (!gpu_or_skip()) return false;
    ctx.emplace(0);
    if (ctx->device().sm_arch() != 90) {
      tessel_test::skip_gpu_case("sm_" + std::to_string(ctx->device().sm_arch()) +
                                 ", not sm_90: TMA producer warps need sm_90a");
      return false;
    }
    bundle.emplace(export_tma(t, name, fn));
    return true;
  }
};

// The image a bundle kernel loaded for variant `v`; null before it loaded one.
const rt::BundleImage* loaded_image(const rt::BundleKernel& k, int v) {
  const auto l = k.loaded(static_cast<size_t>(v));
  if (!l) return nullptr;
  for (const auto& im : k.info().variants[static_cast<size_t>(v)].images)
    if (im.file == l->file) return &im;
  return nullptr;
}
}  // namespace

TEST_CASE("GPU: a tma config's bundle launches its TMA producers (tensor maps encoded at launch), and falls back" *
          doctest::test_suite("gpu")) {
  TmaBundle tb;
  if (!tb.open("matmul", &samples::matmul_kernel<lang::f16, lang::f16>)) return;
  rt::BundleKernel& k = tb.bundle->kernel("matmul");
  // Sizes divisible by 16 take the TMA variant (edge tiles masked by the maps' bounds); others
  // the generic one, the same tile without producers.
  struct Case {
    int M, N, K;
    bool tma;
  };
  for (const Case& c : {Case{256, 256, 256, true}, Case{272, 528, 320, true}, Case{16, 16, 16, true},
                        Case{257, 263, 129, false}, Case{1, 1, 1, false}}) {
    CAPTURE(c.M);
    CAPTURE(c.N);
    CAPTURE(c.K);
    int variant = -1;
    CHECK(run_matmul(k, c.M, c.N, c.K, static_cast<uint32_t>(c.M + c.N + c.K), &variant) <= kF16MatmulBound);
    REQUIRE(variant >= 0);
    const rt::BundleVariant& v = k.info().variants[static_cast<size_t>(variant)];
    CHECK((v.name.find("div16_one") != std::string::npos) == c.tma);
    const rt::BundleImage* im = loaded_image(k, variant);
    REQUIRE(im != nullptr);
    CHECK(im->launch.producer_warps == c.tma);
    CHECK(im->launch.tensor_maps.empty() == !c.tma);
  }
}

TEST_CASE("GPU: repeated TMA launches reuse their encoded tensor maps, and a new buffer gets a new map" *
          doctest::test_suite("gpu")) {
  TmaBundle tb;
  if (!tb.open("matmul", &samples::matmul_kernel<lang::f16, lang::f16>)) return;
  rt::BundleKernel& k = tb.bundle->kernel("matmul");
  const int M = 256, N = 512, K = 192;
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  auto random_f16 = [&](size_t n) {
    std::vector<uint16_t> v(n);
    for (auto& x : v) x = interp::f16_from_double(d(rng));
    return v;
  };
  std::vector<uint16_t> a1 = random_f16(size_t{M} * K), a2 = random_f16(size_t{M} * K), bm = random_f16(size_t{K} * N);
  rt::DeviceBuffer da1(a1.size() * 2), da2(a2.size() * 2), db(bm.size() * 2), dc(size_t{M} * N * 2);
  da1.upload(a1.data(), a1.size() * 2);
  da2.upload(a1.data(), a1.size() * 2);
  db.upload(bm.data(), bm.size() * 2);
  const unsigned grid = (M / 128) * (N / 256);
  // C = A @ B on the GPU (C poisoned first) against a double reference at every element.
  auto check = [&](const rt::DeviceBuffer& da, const std::vector<uint16_t>& a) {
    dc.fill_u32(kPoison);
    k.launch(nullptr, rt::Dim3{grid}, da.ptr(), db.ptr(), dc.ptr(), M, N, K, K, int32_t{1}, N, int32_t{1}, N,
             int32_t{1});
    std::vector<uint16_t> c(size_t{M} * N);
    dc.download(c.data(), c.size() * 2);
    return matmul_error(a, bm, c, M, N, K);
  };
  rt::TensorMapCache& cache = rt::thread_tensor_map_cache();
  cache.clear();
  CHECK(check(da1, a1) <= kF16MatmulBound);
  const size_t maps = cache.misses();
  CHECK(maps >= 2);  // A and B at least (C is stored without TMA)
  CHECK(cache.hits() == 0);
  // The same arguments: every map comes from the cache; new contents of A are read.
  da1.upload(a2.data(), a2.size() * 2);
  CHECK(check(da1, a2) <= kF16MatmulBound);
  CHECK(cache.hits() == maps);
  CHECK(cache.misses() == maps);
  // Another A buffer, holding what da1 held before: its map is encoded afresh (a stale map
  // would read da1, which now holds a2).
  CHECK(check(da2, a1) <= kF16MatmulBound);
  CHECK(cache.misses() > maps);
}

TEST_CASE("GPU: a bundle of a multicast kernel runs in 2-CTA clusters and refuses grids of odd CTA counts" *
          doctest::test_suite("gpu")) {
  TmaBundle tb;
  if (!tb.open("matmul_paired", &samples::matmul_paired_kernel<lang::f16>)) return;
  rt::BundleKernel& k = tb.bundle->kernel("matmul_paired");
  // 3 x 2 tiles of 128 x 256: two pairs of tile rows (the second half-empty) in 2 columns.
  // Sizes divisible by 16, for the variant with TMA producers.
  const int M = 384, N = 512, K = 192;
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  std::vector<uint16_t> a(size_t{M} * K), bm(size_t{K} * N);
  for (auto& x : a) x = interp::f16_from_double(d(rng));
  for (auto& x : bm) x = interp::f16_from_double(d(rng));
  rt::DeviceBuffer da(a.size() * 2), db(bm.size() * 2), dc(size_t{M} * N * 2);
  da.upload(a.data(), a.size() * 2);
  db.upload(bm.data(), bm.size() * 2);
  auto launch = [&](unsigned programs) {
    return k.try_launch(nullptr, rt::Dim3{programs}, da.ptr(), db.ptr(), dc.ptr(), M, N, K, K, int32_t{1}, N,
                        int32_t{1}, N, int32_t{1});
  };
  const int v = k.variant_for(da.ptr(), db.ptr(), dc.ptr(), M, N, K, K, int32_t{1}, N, int32_t{1}, N, int32_t{1});
  REQUIRE(v >= 0);
  CHECK(launch(3) == CUDA_ERROR_INVALID_VALUE);
  CHECK(std::string(rt::last_bundle_error()).find("in clusters of 2 CTAs (a multicast load): its grid's x (3) must be a "
                                                  "multiple of 2") != std::string::npos);
  const rt::BundleImage* im = loaded_image(k, v);
  REQUIRE(im != nullptr);
  CHECK(im->launch.cluster_ctas == 2);
  for (unsigned programs : {2u, 4u}) {  // two programs loop over the pairs; four take one pair each
    CAPTURE(programs);
    dc.fill_u32(kPoison);
    REQUIRE(launch(programs) == CUDA_SUCCESS);
    std::vector<uint16_t> c(size_t{M} * N);
    dc.download(c.data(), c.size() * 2);
    CHECK(matmul_error(a, bm, c, M, N, K) <= kF16MatmulBound);
  }
}

// One opened bundle serving two GPUs (issue 28): `add` launched on device 0, then 1, then 0
// again, each in its own primary context with buffers allocated there; each context loads its own
// module. Where the driver shows one GPU it says so (not a skip: nothing is wrong with the machine).
TEST_CASE("GPU: one opened bundle launches add on device 0 and device 1, each in its own context" *
          doctest::test_suite("gpu")) {
  if (!gpu_or_skip()) return;
  if (rt::Device::count() < 2) {
    MESSAGE("NOT RUN: one GPU; the two-device bundle case needs two");
    return;
  }
  rt::Context c0(0, /*make_current=*/false), c1(1, /*make_current=*/false);
  TempDir t;
  // Images for both GPUs' sms (they may differ): sm_80 PTX plus each one's own.
  samples::register_sample_kernels();
  jit::ExportOptions o;
  o.archs = {"sm_80"};
  for (const rt::Context* c : {&c0, &c1}) {
    const std::string arch = "sm_" + std::to_string(std::min(c->device().sm_arch(), 90));
    if (std::find(o.archs.begin(), o.archs.end(), arch) == o.archs.end()) o.archs.push_back(arch);
  }
  std::vector<const jit::KernelEntry*> ks{jit::Registry::global().find("add")};
  jit::export_bundle(ks, t.path / "b", o);
  rt::Bundle b = rt::Bundle::open(t.path / "b");
  rt::BundleKernel& k = b.kernel("add");
  uint32_t seed = 21;
  bool first_on_1 = true;
  for (const rt::Context* c : {&c0, &c1, &c0}) {
    CAPTURE(c->device().ordinal());
    c->make_current();
    if (c == &c1 && std::exchange(first_on_1, false))  // device 0's modules are not device 1's
      for (size_t v = 0; v < k.info().variants.size(); ++v) CHECK_FALSE(k.loaded(v).has_value());
    for (unsigned misalign : {0u, 4u}) {  // div16, then generic
      CAPTURE(misalign);
      int variant = -1;
      CHECK(run_add(k, misalign ? 4097 : 65536, misalign, seed++, &variant) == 0);
      REQUIRE(variant >= 0);
      const auto l = k.loaded(static_cast<size_t>(variant));
      REQUIRE(l.has_value());
      MESSAGE("device " << c->device().ordinal() << " (sm_" << c->device().sm_arch() << "): " << l->variant << " from "
                        << l->file);
    }
  }
}
