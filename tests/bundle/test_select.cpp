// Launch dispatch as pure functions: argument facts, variant order and choice, tuned configs, images.
#include <doctest/doctest.h>

#include <vector>

#include "bundle_test_util.hpp"
#include "tessel/runtime/bundle.hpp"
#include "tessel/runtime/bundle_select.hpp"

using namespace tessel;
using namespace tessel::bundle_test;

TEST_CASE("argument facts: addresses and integers divisible by 16, integers equal to 1; floats carry none") {
  rt::ArgFacts f = rt::arg_facts(CUdeviceptr{0x7f0000001000}, CUdeviceptr{0x7f0000001004}, int32_t{48}, int32_t{1},
                                 int64_t{-32}, int64_t{17}, 16.0f, 32.0);
  CHECK(f.div16 == 0b010101);
  CHECK(f.equal1 == 0b001000);
  CHECK(rt::arg_facts() == rt::ArgFacts{});
  CHECK(rt::arg_facts(int32_t{0}).div16 == 1);  // 0 is divisible by 16, as in Triton
}

TEST_CASE("satisfies: every assumption of the variant must hold") {
  rt::ArgFacts f{0b1011, 0b0100};
  CHECK(rt::satisfies(f, 0, 0));
  CHECK(rt::satisfies(f, 0b1011, 0b0100));
  CHECK(rt::satisfies(f, 0b0001, 0));
  CHECK_FALSE(rt::satisfies(f, 0b0100, 0));
  CHECK_FALSE(rt::satisfies(f, 0, 0b0001));
}

TEST_CASE("the most specialised variant whose assumptions hold is chosen, ties in manifest order") {
  const rt::BundleManifest m = small_manifest();
  const rt::BundleKernelInfo& k = m.kernels[0];
  // default config: div16 (x, n: 2 assumptions), one (n == 1: 1), generic (0).
  CHECK(rt::variant_order(k, "default") == std::vector<uint16_t>{0, 2, 1});
  CHECK(rt::variant_order(k, "small") == std::vector<uint16_t>{3});
  CHECK(rt::variant_order(k, "nope").empty());
  // x aligned and n = 4096: div16.
  CHECK(rt::select_variant(k, "default", rt::arg_facts(CUdeviceptr{4096}, int32_t{4096}, 1.0f)) == 0);
  // x misaligned: generic (n is not 1).
  CHECK(rt::select_variant(k, "default", rt::arg_facts(CUdeviceptr{4100}, int32_t{4096}, 1.0f)) == 1);
  // n = 1 (and x misaligned): the equal1 variant.
  CHECK(rt::select_variant(k, "default", rt::arg_facts(CUdeviceptr{4100}, int32_t{1}, 1.0f)) == 2);
  // x aligned, n = 1: div16 needs n % 16 == 0, so equal1 wins.
  CHECK(rt::select_variant(k, "default", rt::arg_facts(CUdeviceptr{4096}, int32_t{1}, 1.0f)) == 2);
  // Unusable variants (no image for the GPU) are skipped; none usable: -1.
  const std::vector<uint8_t> no_div16{0, 1, 1, 1};
  CHECK(rt::select_variant(k, "default", rt::arg_facts(CUdeviceptr{4096}, int32_t{4096}, 1.0f), no_div16) == 1);
  const std::vector<uint8_t> none{0, 0, 0, 1};
  CHECK(rt::select_variant(k, "default", rt::ArgFacts{}, none) == -1);
}

TEST_CASE("tuned configs: the first rule whose ranges contain the key, else the default") {
  const rt::BundleManifest m = small_manifest();
  const rt::BundleKernelInfo& k = m.kernels[0];  // key n: [1, 4096] -> small, [min, 0] -> small
  auto config_name = [&](int64_t n) {
    int64_t key[] = {n};
    return k.configs[rt::select_config(k, key)].name;
  };
  CHECK(config_name(1) == "small");
  CHECK(config_name(4096) == "small");
  CHECK(config_name(4097) == "default");
  CHECK(config_name(-5) == "small");
  CHECK(config_name(1000003) == "default");
  rt::BundleKernelInfo untuned = k;
  untuned.tuned = {};
  CHECK(untuned.configs[rt::select_config(untuned, {})].name == "default");
}

TEST_CASE("images: exact cubin, then an older minor's cubin, then the newest PTX the GPU can JIT") {
  const std::string s(64, '0');
  auto cubin = [&](const char* arch) { return rt::BundleImage{rt::ImageKind::Cubin, arch, std::string(arch) + ".cubin", 1, s, {}}; };
  auto ptx = [&](const char* arch) { return rt::BundleImage{rt::ImageKind::Ptx, arch, std::string(arch) + ".ptx", 1, s, {}}; };
  const std::vector<rt::BundleImage> both{cubin("sm_80"), ptx("sm_80"), cubin("sm_90"), ptx("sm_90")};
  CHECK(rt::pick_image(both, 90) == 2);   // H100: its own cubin
  CHECK(rt::pick_image(both, 80) == 0);   // A100
  CHECK(rt::pick_image(both, 86) == 0);   // sm_80 cubins run on sm_86
  CHECK(rt::pick_image(both, 89) == 0);
  CHECK(rt::pick_image(both, 100) == 3);  // a newer major: PTX for sm_90, JIT-compiled by the driver
  CHECK(rt::pick_image(both, 75) == -1);  // older than anything in the bundle
  const std::vector<rt::BundleImage> ptx_only{ptx("sm_80"), ptx("sm_90")};
  CHECK(rt::pick_image(ptx_only, 90) == 1);
  CHECK(rt::pick_image(ptx_only, 87) == 0);
  // Arch-specific code runs only on exactly its sm, and is preferred there.
  const std::vector<rt::BundleImage> accel{cubin("sm_90"), cubin("sm_90a"), ptx("sm_90a")};
  CHECK(rt::pick_image(accel, 90) == 1);
  CHECK(rt::pick_image(accel, 100) == -1);
  const std::vector<rt::BundleImage> accel_ptx{ptx("sm_90a"), ptx("sm_80")};
  CHECK(rt::pick_image(accel_ptx, 90) == 0);
  CHECK(rt::pick_image(accel_ptx, 100) == 1);
}

TEST_CASE("a BundleKernel dispatches through its tuned table and variants without a GPU") {
  // small_manifest() written out with placeholder images of the recorded sizes: opening checks
  // sizes only, and dispatch needs no image contents.
  TempDir t;
  const rt::BundleManifest m = small_manifest();
  write(t.path / "bundle.json", rt::manifest_to_json(m));
  for (const auto& v : m.kernels[0].variants)
    for (const auto& im : v.images) write(t.path / im.file, std::string(im.size, 'x'));
  rt::Bundle b = rt::Bundle::open(t.path);
  rt::BundleKernel& k = b.kernel("scale");
  auto variant = [&](CUdeviceptr x, int32_t n) { return k.info().variants[k.variant_for(x, n, 2.0f)].name; };
  CHECK(variant(0x1000, 8192) == "div16");    // default config (n > 4096), all assumptions hold
  CHECK(variant(0x1008, 8192) == "generic");  // x misaligned
  CHECK(variant(0x1000, 4097) == "generic");  // n not a multiple of 16
  CHECK(variant(0x1000, 4096) == "small");    // the tuned rule [1, 4096] picks config small
  CHECK(variant(0x1000, 1) == "small");       // ... before the default config's equal1 variant
  CHECK(variant(0x1000, -16) == "small");     // the rule [min, 0]
  CHECK(k.config_for(CUdeviceptr{0}, int32_t{100}, 1.0f).meta_value("BLOCK") == 128);
  CHECK(k.config_for(CUdeviceptr{0}, int32_t{100000}, 1.0f).meta_value("BLOCK") == 1024);
  CHECK(k.meta("BLOCK") == 1024);  // the default config
  // Opening checked the sizes; verify() checks contents, and these placeholders do not match.
  CHECK_THROWS_WITH_AS(b.verify(), doctest::Contains("is corrupt (sha256"), rt::BundleError);
}
