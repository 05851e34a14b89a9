// Export of tunable kernels: every config compiled into the bundle, the tuned table from the
// tuning database of one device (a fake one here), bucket ranges as rules.
#include <doctest/doctest.h>

#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tessel/ir/error.hpp"
#include "tessel/jit/bundle_writer.hpp"
#include "tessel/runtime/bundle.hpp"
#include "tessel/jit/emit.hpp"
#include "tessel/jit/cache.hpp"
#include "tessel/samples/elementwise_kernels.hpp"
#include "tessel/samples/matmul_kernels.hpp"
#include "tune_test_util.hpp"

using namespace tessel;
using namespace tessel::jit::tune;
using tune_test::TempDir;

namespace {

std::vector<Config> configs() {
  return {Config{jit::Meta{{"BLOCK", 256}}, {2, 1}}, Config{jit::Meta{{"BLOCK", 1024}}, {4, 1}},
          Config{jit::Meta{{"BLOCK", 2048}}, {8, 1}}};
}

DbKey key(std::string device, std::string k, std::string version = jit::cache::tessel_version()) {
  return DbKey{"add", std::move(k), std::move(device), "sm_90", std::move(version)};
}

ConfigResult timed(const Config& c, double ms) { return ConfigResult{c, Status::Ok, summarize({ms}), ""}; }

nlohmann::json read_json(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str());
}

}  // namespace

TEST_CASE("export writes every config of a tunable kernel and the tuned table of one device") {
  if (!jit::has_lowering()) {
    MESSAGE("SKIPPED: this build has no lowering, so no export");
    return;
  }
  TempDir dir;
  const auto cs = configs();
  jit::Kernel k{"add", &samples::add_kernel, {"x", "y", "out", "n"}, jit::Meta{{"BLOCK", 1024}},
                Autotune{cs, KeySpec{{{"n"}}}, {}, {}}};
  const jit::KernelEntry e = jit::entry_of(k, "out = x + y");

  Database db;
  const std::string fake = "NVIDIA Fake 9000";
  db.record(key(fake, "n=1024;sig=f32,f32,f32"), timed(cs[0], 0.010));
  db.record(key(fake, "n=1024;sig=f32,f32,f32"), timed(cs[1], 0.020));
  db.record(key(fake, "n=1048576;sig=f32,f32,f32"), timed(cs[0], 0.300));
  db.record(key(fake, "n=1048576;sig=f32,f32,f32"), timed(cs[2], 0.100));
  db.record(key(fake, "n=1048576;sig=f32,f32,f32"), ConfigResult{cs[1], Status::WrongOutput, {}, "differs"});
  // Ignored: another version when this version has the key, another signature, nothing Ok.
  db.record(key(fake, "n=1048576;sig=f32,f32,f32", "0.0.1"), timed(cs[1], 0.001));
  db.record(key(fake, "n=64;sig=f16,f16,f16"), timed(cs[1], 0.001));
  db.record(key(fake, "n=32;sig=f32,f32,f32"), ConfigResult{cs[1], Status::CompileError, {}, "no"});
  // Only in an old version: still used.
  db.record(key(fake, "n=16;sig=f32,f32,f32", "0.0.1"), timed(cs[2], 0.001));
  db.save(dir.path / "tuning.json");

  jit::ExportOptions o;
  o.archs = {"sm_80"};
  o.cubins = false;
  o.tune_db = dir.path / "tuning.json";
  const jit::KernelEntry* ks[] = {&e};
  jit::ExportResult r = jit::export_bundle(ks, dir.path / "bundle", o);
  CHECK(r.configs == 3);
  CHECK(r.tuned_rules == 3);
  CHECK(r.variants == 6);  // div16 and generic per config

  nlohmann::json m = read_json(dir.path / "bundle" / "bundle.json");
  const auto& kj = m["kernels"][0];
  REQUIRE(kj["configs"].size() == 3);
  std::vector<std::string> names;
  for (const auto& c : kj["configs"]) names.push_back(c["name"]);
  CHECK(names == std::vector<std::string>{"BLOCK256_w2_s1", "BLOCK1024_w4_s1", "BLOCK2048_w8_s1"});
  CHECK(kj["configs"][2]["num_warps"] == 8);
  CHECK(kj["default_config"] == "BLOCK256_w2_s1");
  CHECK(kj["tuned"]["key"] == nlohmann::json::array({"n"}));
  const auto& rules = kj["tuned"]["rules"];
  REQUIRE(rules.size() == 3);
  std::map<std::string, std::pair<nlohmann::json, std::string>> by_hi;
  for (const auto& rule : rules) by_hi[rule["ranges"][0][1].dump()] = {rule["ranges"][0], rule["config"]};
  CHECK(by_hi["1024"].first == nlohmann::json::array({513, 1024}));
  CHECK(by_hi["1024"].second == "BLOCK256_w2_s1");
  CHECK(by_hi["1048576"].first == nlohmann::json::array({524289, 1048576}));
  CHECK(by_hi["1048576"].second == "BLOCK2048_w8_s1");
  CHECK(by_hi["16"].first == nlohmann::json::array({9, 16}));
  CHECK(by_hi["16"].second == "BLOCK2048_w8_s1");
  // Every variant's files are in the bundle, named by config.
  int variants = 0;
  for (const auto& v : kj["variants"]) {
    ++variants;
    const std::string name = v["name"];
    CHECK(name.find(std::string(v["config"])) == 0);
    for (const auto& im : v["images"]) CHECK(std::filesystem::exists(dir.path / "bundle" / std::string(im["file"])));
  }
  CHECK(variants == 6);

  // A second device in the database: export must be told which.
  db.record(key("NVIDIA Other", "n=1024;sig=f32,f32,f32"), timed(cs[2], 0.001));
  db.save(dir.path / "tuning.json");
  try {
    jit::export_bundle(ks, dir.path / "bundle2", o);
    FAIL("expected a CompileError");
  } catch (const CompileError& err) {
    CHECK(std::string(err.what()).find("NVIDIA Fake 9000, NVIDIA Other") != std::string::npos);
  }
  o.tune_device = "NVIDIA Other";
  r = jit::export_bundle(ks, dir.path / "bundle2", o);
  CHECK(r.tuned_rules == 1);
  nlohmann::json m2 = read_json(dir.path / "bundle2" / "bundle.json");
  CHECK(m2["kernels"][0]["tuned"]["rules"][0]["config"] == "BLOCK2048_w8_s1");
}

TEST_CASE("export of a tunable kernel with no tuning results has configs and no rules") {
  if (!jit::has_lowering()) {
    MESSAGE("SKIPPED: this build has no lowering, so no export");
    return;
  }
  TempDir dir;
  jit::Kernel k{"add", &samples::add_kernel, {"x", "y", "out", "n"}, jit::Meta{{"BLOCK", 1024}},
                Autotune{configs(), KeySpec{{{"n"}}}, {}, {}}};
  const jit::KernelEntry e = jit::entry_of(k, "out = x + y");
  jit::ExportOptions o;
  o.archs = {"sm_80"};
  o.cubins = false;
  o.tune_db = dir.path / "none.json";
  const jit::KernelEntry* ks[] = {&e};
  jit::ExportResult r = jit::export_bundle(ks, dir.path / "bundle", o);
  CHECK(r.configs == 3);
  CHECK(r.tuned_rules == 0);
  nlohmann::json m = read_json(dir.path / "bundle" / "bundle.json");
  CHECK(m["kernels"][0]["configs"].size() == 3);
  CHECK(m["kernels"][0]["tuned"]["rules"].empty());
}

TEST_CASE("export compiles a tma config with TMA producers where it can: sm_90a, aligned variant") {
  if (!jit::has_lowering()) {
    MESSAGE("SKIPPED: this build has no lowering, so no export");
    return;
  }
  TempDir dir;
  Config plain{jit::Meta{{"BLOCK_M", 64}, {"BLOCK_N", 64}, {"BLOCK_K", 32}}, {4, 1}};
  Config tma{jit::Meta{{"BLOCK_M", 128}, {"BLOCK_N", 256}, {"BLOCK_K", 64}}, {8, 4}};
  tma.opts.warp_specialize = true;
  tma.opts.tma = true;
  jit::Kernel k{"matmul", &samples::matmul_kernel<lang::f16, lang::f16>, samples::kMatmulParams,
                samples::kMatmulMeta, Autotune{{plain, tma}, KeySpec{{{"M"}, {"N"}, {"K"}}}, {}, {}}};
  const jit::KernelEntry e = jit::entry_of(k, "C = A @ B");
  jit::ExportOptions o;
  o.archs = {"sm_90", "sm_90a"};  // (the 192 KiB of stages exceed sm_80's shared memory)
  o.cubins = false;
  o.tune_db = dir.path / "none.json";
  // Unit strides: the variant whose rows are contiguous, as `tessel export --one` makes it.
  o.variants.insert(o.variants.begin(), jit::ExportVariant{"div16_one", true, {"stride_ak", "stride_bn", "stride_cn"}});
  const jit::KernelEntry* ks[] = {&e};
  jit::ExportResult r = jit::export_bundle(ks, dir.path / "bundle", o);
  CHECK(r.configs == 2);
  const rt::Bundle b = rt::Bundle::open(dir.path / "bundle");
  const rt::BundleKernelInfo& info = b.manifest().kernels[0];
  const rt::BundleConfig& cfg = info.configs[1];
  CHECK(cfg.name == "BLOCK_K64_BLOCK_M128_BLOCK_N256_w8_s4_ws_tma");  // the tuning database's name
  CHECK(cfg.warp_specialize);
  CHECK(cfg.tma);
  auto ptx_of = [&](const rt::BundleImage& im) {
    std::ifstream in(dir.path / "bundle" / im.file);
    std::stringstream ptx;
    ptx << in.rdbuf();
    return ptx.str();
  };
  int with_tma = 0, without = 0;
  for (const rt::BundleVariant& v : info.variants) {
    if (v.config != cfg.name) continue;
    for (const rt::BundleImage& im : v.images) {
      CAPTURE(im.file);
      const std::string ptx = ptx_of(im);
      CHECK(ptx.find(im.arch == "sm_90a" ? "wgmma.mma_async" : "mma.sync") != std::string::npos);
      CHECK(im.launch.shared_bytes > 0);
      CHECK(im.launch.shared_bytes <= v.shared_bytes);
      if (v.equal1 != 0 && im.arch == "sm_90a") {
        // Producers copying by TMA: 384 threads, the maps the launch encodes, 3 of them (A in
        // 8-row boxes and as its row-permuted view, B).
        CHECK(im.launch.producer_warps);
        CHECK(im.launch.tensor_maps.size() == 3);
        CHECK(ptx.find("cp.async.bulk.tensor") != std::string::npos);
        CHECK(ptx.find(".maxntid 384, 1, 1") != std::string::npos);
        CHECK(cfg.threads_per_cta(im.launch.producer_warps) == 384);
        for (const rt::TensorMapRecipe& m : im.launch.tensor_maps) CHECK(info.params[m.base_param].kind == rt::ParamKind::Ptr);
        ++with_tma;
      } else {
        // sm_90 (no wgmma), or a variant whose K loop loads are not 16-byte vectors (strides assumed
        // divisible by 16 but not 1, or nothing assumed): the same tile, no producers.
        CHECK_FALSE(im.launch.producer_warps);
        CHECK(im.launch.tensor_maps.empty());
        CHECK(ptx.find("cp.async.bulk.tensor") == std::string::npos);
        CHECK(ptx.find("mbarrier.try_wait") == std::string::npos);
        CHECK(ptx.find(".maxntid 256, 1, 1") != std::string::npos);
        ++without;
      }
    }
  }
  CHECK(with_tma == 1);  // div16_one x sm_90a
  CHECK(without == 5);   // div16_one x sm_90, div16 and generic x both
  // The unit-stride variant is the launch's choice for contiguous matrices of aligned sizes.
  const int64_t n = 256;
  const CUdeviceptr p = 0x10000;
  rt::BundleKernel& bk = const_cast<rt::Bundle&>(b).kernel("matmul");
  const int chosen = bk.variant_for(p, p, p, int32_t{256}, int32_t{256}, int32_t{256}, int32_t{256}, int32_t{1},
                                    int32_t{256}, int32_t{1}, int32_t{256}, int32_t{1});
  (void)n;
  REQUIRE(chosen >= 0);
  CHECK(info.variants[static_cast<size_t>(chosen)].name.find("div16_one") != std::string::npos);
  // A unit-stride name no exported kernel has is an error, as a -D name is.
  o.variants.front().ones = {"stride_ak", "stride_zz"};
  CHECK_THROWS_WITH_AS(jit::export_bundle(ks, dir.path / "bundle2", o),
                       doctest::Contains("assumes 'stride_zz' equal to 1, but no exported kernel has an integer "
                                         "parameter of that name"),
                       CompileError);
}
