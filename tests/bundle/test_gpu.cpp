// Bundles on a real GPU: export here, open, launch through rt::Bundle and check against the host.
// Each case runs only when a CUDA driver is present; otherwise it says so and returns.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "bundle_test_util.hpp"
#include "tessel/jit/bundle_writer.hpp"
#include "tessel/runtime/bundle.hpp"
#include "tessel/runtime/runtime.hpp"
#include "tessel/samples/sample.hpp"

using namespace tessel;
using namespace tessel::bundle_test;

namespace {

bool gpu_or_skip() {
  if (rt::Driver::get().available()) return true;
  MESSAGE("SKIPPED (no CUDA driver): bundle GPU tests — " << rt::Driver::get().unavailable_reason());
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

TEST_CASE("GPU: an exported add runs from the bundle, aligned (div16) and misaligned (generic), at odd sizes") {
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

TEST_CASE("GPU: the single-file bundle and a PTX-only bundle launch the same kernel correctly") {
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

TEST_CASE("GPU: a corrupted image is refused at load, before the driver sees it") {
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
