// bundle.json: SHA-256, the JSON round trip, determinism and every validation rule's message.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "bundle_test_util.hpp"
#include "tessel/jit/cache.hpp"
#include "tessel/runtime/sha256.hpp"

using namespace tessel;
using namespace tessel::bundle_test;

namespace {
// The BundleError message of parsing `text`, or "" when it parses.
std::string parse_error(const std::string& text) {
  try {
    rt::manifest_from_json(text, "test");
  } catch (const rt::BundleError& e) {
    CHECK(e.code() == CUDA_ERROR_INVALID_IMAGE);
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// bundle.json of `m` as an older writer wrote it: format `version`, each image's launch record
// as the fields of version 2 (producer_warps, shared_bytes, cluster_ctas when not 1,
// tensor_maps when any) or, for version 1, none of them. `drop_launch`: only drop the record.
std::string as_version(const rt::BundleManifest& m, int version, bool drop_launch = false) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(rt::manifest_to_json(m));
  j["format_version"] = version;
  for (auto& k : j["kernels"])
    for (auto& v : k["variants"])
      for (auto& im : v["images"]) {
        const nlohmann::ordered_json l = im["launch"];
        im.erase("launch");
        if (drop_launch || version < 2) continue;
        im["producer_warps"] = l["producer_warps"];
        im["shared_bytes"] = l["shared_bytes"];
        if (l["cluster_ctas"] != 1) im["cluster_ctas"] = l["cluster_ctas"];
        if (!l["tensor_maps"].empty()) im["tensor_maps"] = l["tensor_maps"];
      }
  return j.dump(2) + "\n";
}

// The JSON of small_manifest() with one substring replaced (must occur).
std::string edited(const std::string& from, const std::string& to) {
  std::string j = rt::manifest_to_json(small_manifest());
  size_t at = j.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  return j.replace(at, from.size(), to);
}
}  // namespace

TEST_CASE("sha256 matches the FIPS 180-4 test vectors, across block boundaries and incremental updates") {
  CHECK(rt::sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(rt::sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(rt::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  const std::string million(1000000, 'a');
  CHECK(rt::sha256_hex(million) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // 55, 56 and 64 bytes straddle the padding boundary; pieces of odd lengths must give the same.
  for (size_t len : {55, 56, 63, 64, 65, 119, 120, 1000}) {
    std::string s(len, '\0');
    for (size_t i = 0; i < len; ++i) s[i] = static_cast<char>(i * 31 + 7);
    rt::Sha256 h;
    for (size_t i = 0; i < len; i += 13) h.update(s.data() + i, std::min<size_t>(13, len - i));
    auto d = h.finish();
    std::string hex;
    for (uint8_t b : d) hex += "0123456789abcdef"[b >> 4], hex += "0123456789abcdef"[b & 15];
    CHECK(hex == rt::sha256_hex(s));
  }
  CHECK(rt::sha256_hex("abd") != rt::sha256_hex("abc"));
}

TEST_CASE("a manifest survives bundle.json unchanged, and the text is deterministic") {
  const rt::BundleManifest m = small_manifest();
  const std::string text = rt::manifest_to_json(m);
  rt::BundleManifest back = rt::manifest_from_json(text, "test");
  CHECK(back == m);
  CHECK(rt::manifest_to_json(back) == text);
  CHECK(contains(text, "\"format\": \"tessel-bundle\""));
  CHECK(contains(text, "\"div16\": [\n            \"x\",\n            \"n\"\n          ]"));
  // Unbounded tuned ranges are null, and read back as the int64 limits.
  CHECK(contains(text, "null"));
  CHECK(back.kernels[0].tuned.rules[1].ranges[0].first == INT64_MIN);
  CHECK(rt::signature_string(back.kernels[0]) == "x: ptr<f32>, n: i32, s: f32");
  CHECK(back.kernels[0].find_config("small")->meta_value("BLOCK") == 128);
  CHECK_FALSE(back.kernels[0].find_config("small")->meta_value("WARPS").has_value());
  // Bundles written before programs_per_cta existed read as one program per CTA; 2 round-trips.
  CHECK(contains(text, "\"programs_per_cta\": 1"));
  std::string old = text;
  for (size_t at; (at = old.find(", \"programs_per_cta\": 1")) != std::string::npos;)
    old.erase(at, std::string(", \"programs_per_cta\": 1").size());
  for (size_t at; (at = old.find(",\n          \"programs_per_cta\": 1")) != std::string::npos;)
    old.erase(at, std::string(",\n          \"programs_per_cta\": 1").size());
  CHECK_FALSE(contains(old, ",\n          \"programs_per_cta\""));  // (images' launch records keep theirs)
  CHECK(rt::manifest_from_json(old, "test") == m);
  rt::BundleManifest two = m;
  two.kernels[0].configs[0].programs_per_cta = 2;
  plain_launches(two.kernels[0]);
  CHECK(rt::manifest_from_json(rt::manifest_to_json(two), "test") == two);
}

TEST_CASE("bundle.json carries warp_specialize: absent reads as false, true and 0/1 read back") {
  const rt::BundleManifest m = small_manifest();
  const std::string text = rt::manifest_to_json(m);
  const std::string field = ",\n          \"warp_specialize\": false";
  CHECK(contains(text, field));
  // Bundles written before the option existed: no field at all.
  std::string old = text;
  for (size_t at; (at = old.find(field)) != std::string::npos;) old.erase(at, field.size());
  CHECK_FALSE(contains(old, "warp_specialize"));
  CHECK(rt::manifest_from_json(old, "test") == m);
  // Set on one config: written as true and read back; the other config stays false.
  rt::BundleManifest ws = m;
  ws.kernels[0].configs[0].warp_specialize = true;
  const std::string ws_text = rt::manifest_to_json(ws);
  CHECK(contains(ws_text, "\"warp_specialize\": true"));
  rt::BundleManifest back = rt::manifest_from_json(ws_text, "test");
  CHECK(back == ws);
  CHECK(back.kernels[0].find_config("default")->warp_specialize);
  CHECK_FALSE(back.kernels[0].find_config("small")->warp_specialize);
  // 0 and 1 stand for false and true (hand-edited or generated JSON).
  CHECK(rt::manifest_from_json(edited("\"warp_specialize\": false", "\"warp_specialize\": 1"), "test") == ws);
  CHECK(rt::manifest_from_json(edited("\"warp_specialize\": false", "\"warp_specialize\": 0"), "test") == m);
}

TEST_CASE("an image's threads per CTA: 32 x num_warps x programs_per_cta, + 128 producers where it has them") {
  rt::BundleConfig c;
  c.num_warps = 4;
  CHECK(c.threads_per_cta(false) == 128);
  CHECK(c.threads_per_cta(true) == 256);
  c.programs_per_cta = 2;
  CHECK(c.threads_per_cta(true) == 384);
  c.num_warps = 8;
  CHECK(c.threads_per_cta(true) == 640);
  CHECK(c.threads_per_cta(false) == 512);
  // The same count as the JIT's cache entries launch: both forward to options/launch.hpp.
  for (int warps : {1, 2, 4, 8, 16, 32})
    for (int per_cta : {1, 2})
      for (bool ws : {false, true}) {
        CAPTURE(warps);
        CAPTURE(per_cta);
        CAPTURE(ws);
        rt::BundleConfig b;
        b.num_warps = warps;
        b.programs_per_cta = per_cta;
        CHECK(b.threads_per_cta(ws) == 32 * warps * per_cta + (ws ? 128 : 0));
        // The launch record the lowering produces (and the JIT's cache stores) counts the same.
        CHECK(b.threads_per_cta(ws) == launch_spec("k", warps, per_cta, ws, 0).threads);
      }
  // Past CUDA's 1024 threads per CTA the manifest is refused, naming why.
  rt::BundleManifest m = small_manifest();
  m.kernels[0].configs[0].num_warps = 32;
  plain_launches(m.kernels[0]);
  CHECK_NOTHROW(rt::validate(m, "t"));  // 1024 threads
  m.kernels[0].configs[0].warp_specialize = true;
  CHECK_THROWS_WITH_AS(rt::validate(m, "t"),
                       doctest::Contains("config 'default': 1152 threads per CTA (num_warps 32, programs_per_cta 1, "
                                         "warp_specialize) exceed 1024"),
                       rt::BundleError);
}

TEST_CASE("malformed or inconsistent bundle.json is rejected with the field and the reason") {
  CHECK(contains(parse_error("{not json"), "bundle test: bundle.json is not valid JSON"));
  CHECK(contains(parse_error("{\"format\": \"zip\"}"), "not a tessel bundle"));
  CHECK(contains(parse_error(edited("\"format_version\": 3", "\"format_version\": 7")),
                 "format version 7 (this runtime reads versions 1 to 3"));
  CHECK(contains(parse_error(edited("\"format_version\": 3", "\"format_version\": 0")), "format version 0"));
  CHECK(contains(parse_error(edited("\"kind\": \"i32\"", "\"kind\": \"u8\"")), "expected one of ptr, i32"));
  CHECK(contains(parse_error(edited("\"entry\": \"scale\"", "\"entri\": \"scale\"")), "missing field 'entry'"));
  CHECK(contains(parse_error(edited("\"size\": 10", "\"size\": \"10\"")), "size: expected an integer"));
  CHECK(contains(parse_error(edited("\"size\": 10", "\"size\": -10")), "negative"));
  CHECK(contains(parse_error(edited("\"config\": \"default\"", "\"config\": \"huge\"")), "unknown config 'huge'"));
  CHECK(contains(parse_error(edited("\"default_config\": \"default\"", "\"default_config\": \"none\"")),
                 "default_config 'none' is not one of its configs"));
  CHECK(contains(parse_error(edited("\"num_warps\": 4", "\"num_warps\": 3")), "num_warps 3 is not a power of two"));
  CHECK(contains(parse_error(edited("\"programs_per_cta\": 1", "\"programs_per_cta\": 3")),
                 "programs_per_cta 3 is not 1 or 2"));
  for (const char* bad : {"2", "-1", "\"yes\"", "null", "1.0"}) {
    CAPTURE(bad);
    CHECK(contains(parse_error(edited("\"warp_specialize\": false", std::string("\"warp_specialize\": ") + bad)),
                   "configs[0].warp_specialize: expected true, false, 0 or 1"));
  }
  CHECK(contains(parse_error(edited("\"x\",\n            \"n\"", "\"x\",\n            \"s\"")),
                 "'s' is f32 and cannot be divisible by 16"));
  CHECK(contains(parse_error(edited("\"x\",\n            \"n\"", "\"x\",\n            \"q\"")), "no parameter 'q'"));
  CHECK(contains(parse_error(edited("\"file\": \"scale.div16.sm_90.cubin\"", "\"file\": \"../etc/passwd\"")),
                 "must be a plain file name in the bundle"));
  CHECK(contains(parse_error(edited("\"file\": \"scale.div16.sm_90.cubin\"", "\"file\": \"scale.generic.sm_80.ptx\"")),
                 "is listed twice"));
  CHECK(contains(parse_error(edited("\"arch\": \"sm_90\"", "\"arch\": \"gfx90a\"")), "unknown arch 'gfx90a'"));
  CHECK(contains(parse_error(edited(std::string(64, 'a'), "abc")), "has no valid sha256"));
  CHECK(contains(parse_error(edited("\"key\": [\n          \"n\"", "\"key\": [\n          \"x\"")),
                 "tuned key 'x' is not an integer parameter"));
  CHECK(contains(parse_error(edited("\"name\": \"generic\"", "\"name\": \"div16\"")), "variant names must be unique"));
}

TEST_CASE("every config needs a generic variant, and names must be unique") {
  rt::BundleManifest m = small_manifest();
  m.kernels[0].variants.erase(m.kernels[0].variants.begin() + 3);  // config "small" loses its only variant
  CHECK_THROWS_WITH_AS(rt::validate(m, "t"), doctest::Contains("config 'small' has no generic variant"),
                       rt::BundleError);
  m = small_manifest();
  m.kernels.push_back(m.kernels[0]);
  CHECK_THROWS_WITH_AS(rt::validate(m, "t"), doctest::Contains("kernel names must be unique"), rt::BundleError);
  m = small_manifest();
  m.kernels[0].params[2].name = "x";
  CHECK_THROWS_WITH_AS(rt::validate(m, "t"), doctest::Contains("parameter names must be unique"), rt::BundleError);
  m = small_manifest();
  m.kernels[0].params[0].element = "";
  CHECK_THROWS_WITH_AS(rt::validate(m, "t"), doctest::Contains("element type if and only if it is a pointer"),
                       rt::BundleError);
  m = small_manifest();
  m.kernels[0].variants[2].equal1 = 0b001;  // x is a pointer: it cannot be specialised == 1
  CHECK_THROWS_WITH_AS(rt::validate(m, "t"), doctest::Contains("cannot be specialised equal to 1"), rt::BundleError);
  m = small_manifest();
  m.kernels[0].tuned.rules[0].ranges[0] = {10, 5};
  CHECK_THROWS_WITH_AS(rt::validate(m, "t"), doctest::Contains("tuned range [10, 5] is empty"), rt::BundleError);
  m = small_manifest();
  m.kernels.clear();
  CHECK_THROWS_WITH_AS(rt::validate(m, "t"), doctest::Contains("no kernels"), rt::BundleError);
  CHECK_NOTHROW(rt::validate(small_manifest(), "t"));
}

TEST_CASE("parse_sm and parameter kinds") {
  bool accel = true;
  CHECK(rt::parse_sm("sm_90", &accel) == 90);
  CHECK_FALSE(accel);
  CHECK(rt::parse_sm("sm_90a", &accel) == 90);
  CHECK(accel);
  CHECK(rt::parse_sm("sm_100") == 100);
  CHECK_FALSE(rt::parse_sm("sm_9").has_value());
  CHECK_FALSE(rt::parse_sm("compute_90").has_value());
  CHECK_FALSE(rt::parse_sm("sm_9x").has_value());
  for (rt::ParamKind k : {rt::ParamKind::Ptr, rt::ParamKind::I32, rt::ParamKind::I64, rt::ParamKind::F32,
                          rt::ParamKind::F64})
    CHECK(rt::parse_param_kind(rt::param_kind_name(k)) == k);
  CHECK_FALSE(rt::parse_param_kind("f16").has_value());
}

namespace {
// A TMA-copying image: `scale` given a matrix-shaped signature (a: ptr<f16>, M, K: i32).
rt::BundleManifest tma_manifest() {
  rt::BundleManifest m = small_manifest();
  rt::BundleKernelInfo& k = m.kernels[0];
  k.params = {{"a", rt::ParamKind::Ptr, "f16"}, {"M", rt::ParamKind::I32, ""}, {"K", rt::ParamKind::I32, ""}};
  k.tuned = {};
  k.configs[0].num_warps = 8;
  k.configs[0].warp_specialize = k.configs[0].tma = true;
  plain_launches(k);
  rt::BundleImage& im = k.variants[0].images[0];  // div16, default config
  im.arch = "sm_90a";
  im.launch.producer_warps = true;
  im.launch.threads = k.configs[0].threads_per_cta(true);
  rt::TensorMapRecipe r;
  r.base_param = 0;
  r.rows = {{1, {1}}};
  r.cols = {{1, {2}}};
  r.row_stride = {{1, {2}}};
  r.box_cols = 64;
  r.box_rows = 128;
  r.view = {{1, 8}, {64, 2}, {8, 4}, {32, 2}};
  im.launch.tensor_maps = {r, r};
  im.launch.tensor_maps[1].view.clear();
  im.launch.tensor_maps[1].box_rows = 8;
  im.launch.tensor_maps[1].elem = rt::TensorMapRecipe::Elem::BF16;
  k.variants[0].shared_bytes = 4096;
  im.launch.shared_bytes = 4096;
  return m;
}
}  // namespace

TEST_CASE("bundle.json carries each image's producer warps, shared memory and tensor maps") {
  const rt::BundleManifest m = tma_manifest();
  const std::string text = rt::manifest_to_json(m);
  CHECK(rt::manifest_from_json(text, "test") == m);
  CHECK(contains(text, "\"tma\": true"));
  CHECK(contains(text, "\"producer_warps\": true"));
  // Polynomials name their parameters.
  CHECK(contains(text, "\"param\": \"a\""));
  rt::BundleManifest renamed = m;
  renamed.kernels[0].params[1].name = "rows_of_a";
  CHECK(contains(rt::manifest_to_json(renamed), "\"rows_of_a\""));
  CHECK(rt::manifest_from_json(rt::manifest_to_json(renamed), "test") == renamed);
  // Version 2 kept the same facts as fields of the image: read into the same launch record.
  const std::string v2 = as_version(m, 2);
  CHECK_FALSE(contains(v2, "\"launch\""));
  CHECK(contains(v2, "\"tensor_maps\""));
  rt::BundleManifest m2 = m;
  m2.format_version = 2;
  CHECK(rt::manifest_from_json(v2, "test") == m2);
  // A broken record names the field, without a dangling dot when it is the record itself.
  std::string no_threads = text;
  no_threads.erase(no_threads.find("\"threads\": "), std::string("\"threads\": 256,").size());
  const std::string e = parse_error(no_threads);
  CHECK(contains(e, "images[0].launch: missing field 'threads'"));
  // Version 3 requires the record.
  CHECK(contains(parse_error(as_version(m, 3, /*drop_launch=*/true)), "images[0]: missing field 'launch'"));
  // Version 1 had neither: images have the producers their config asks for, no maps, the
  // variant's shared memory.
  rt::BundleManifest v1 = small_manifest();
  v1.format_version = 1;
  const std::string old = as_version(v1, 1);
  CHECK_FALSE(contains(old, "producer_warps"));
  CHECK(rt::manifest_from_json(old, "test") == v1);
  // A version-1 bundle of a warp_specialize config compiled its sm_90a images with the producers.
  rt::BundleManifest v1ws = tma_manifest();
  v1ws.format_version = 1;
  v1ws.kernels[0].configs[0].tma = false;
  v1ws.kernels[0].variants[0].images[0].launch.tensor_maps.clear();
  const std::string old_ws = as_version(v1ws, 1);
  CHECK_FALSE(contains(old_ws, "producer_warps"));
  const rt::BundleManifest back_ws = rt::manifest_from_json(old_ws, "test");
  for (const auto& v : back_ws.kernels[0].variants) {
    CAPTURE(v.name);
    const bool producers = v.config == "default" && v.images[0].arch == "sm_90a";
    CHECK(v.images[0].launch.producer_warps == producers);
    CHECK(v.images[0].launch.threads == back_ws.kernels[0].find_config(v.config)->threads_per_cta(producers));
    CHECK(v.images[0].launch.symbol == v.entry);
    CHECK(v.images[0].launch.shared_bytes == v.shared_bytes);
  }
  // Refused: maps on an image without producers, producers outside sm_90a or a ws config, a
  // map whose tensor is not a pointer or whose sizes name a non-integer, boxes TMA cannot copy.
  auto refused = [&](auto edit, const char* why) {
    rt::BundleManifest bad = tma_manifest();
    edit(bad.kernels[0]);
    CAPTURE(why);
    CHECK_THROWS_WITH_AS(rt::validate(bad, "t"), doctest::Contains(why), rt::BundleError);
  };
  using K = rt::BundleKernelInfo;
  refused([](K& k) { k.variants[0].images[0].launch.producer_warps = false; }, "tensor maps need producer warps");
  refused([](K& k) { k.variants[0].images[0].arch = "sm_90"; }, "producer warps need a warp_specialize config and an sm_90a image");
  refused([](K& k) { k.configs[0].warp_specialize = false; }, "tma needs warp_specialize");
  refused([](K& k) { k.configs[0].tma = false; }, "tensor maps need producer warps of a tma config");
  refused([](K& k) { k.variants[0].images[0].launch.tensor_maps[0].base_param = 1; }, "its tensor is not a pointer parameter");
  refused([](K& k) { k.variants[0].images[0].launch.tensor_maps[0].rows = {{1, {0}}}; }, "names a parameter that is not an integer");
  refused([](K& k) { k.variants[0].images[0].launch.tensor_maps[0].box_cols = 128; }, "outside TMA's limits");
  refused([](K& k) { k.variants[0].images[0].launch.tensor_maps[0].swizzle_bytes = 16; }, "outside TMA's limits");
  refused([](K& k) { k.variants[0].images[0].launch.tensor_maps[0].view.resize(5); }, "more than 5 dimensions");
  refused([](K& k) { k.variants[0].images[0].launch.shared_bytes = 8192; }, "shared_bytes 8192 outside");
  refused([](K& k) { k.variants[0].images[0].launch.tensor_maps.resize(9); }, "9 tensor maps (at most 8)");
  refused([](K& k) { k.variants[0].images[0].launch.cluster_ctas = 3; }, "cluster_ctas 3: 1, or 2 for a kernel whose TMA producers multicast");
  refused([](K& k) { k.variants[0].images[0].launch.cluster_ctas = 0; }, "cluster_ctas 0");
  // The record must be the variant's and its config's.
  refused([](K& k) { k.variants[0].images[0].launch.symbol = "other"; }, "launches entry 'other', not the variant's 'scale'");
  refused([](K& k) { k.variants[0].images[0].launch.threads = 256; }, "256 threads and 1 programs per CTA, but its config has 384 and 1");
  refused([](K& k) { k.variants[0].images[0].launch.threads = 100; }, "100 threads per CTA (a multiple of 32");
  refused([](K& k) { k.variants[1].images[0].launch.programs_per_cta = 2; }, "but its config has");
  refused([](K& k) { k.variants[1].images[0].launch.params = 2; }, "a launch record for 2 parameters, not 3");
  // An image in 2-CTA clusters (a multicast load) round-trips; other images write no field.
  rt::BundleManifest paired = tma_manifest();
  paired.kernels[0].variants[0].images[0].launch.cluster_ctas = 2;
  const std::string paired_text = rt::manifest_to_json(paired);
  CHECK(contains(paired_text, "\"cluster_ctas\": 2"));
  CHECK(contains(text, "\"cluster_ctas\": 1"));
  CHECK(rt::manifest_from_json(paired_text, "test") == paired);
  // JSON errors name the field.
  std::string bad_param = text;
  bad_param.replace(bad_param.find("\"param\": \"a\""), 12, "\"param\": \"q\"");
  CHECK(contains(parse_error(bad_param), "tensor_maps[0].param: no parameter 'q'"));
}

TEST_CASE("tensor map shapes: 2-D maps and row-permuted views from the launch's arguments") {
  // Polynomials over the integer arguments: 2 * ints[1] * ints[2] - 3 + ints[0].
  const rt::TensorMapPoly p{{2, {1, 2}}, {-3, {}}, {1, {0}}};
  const int64_t vals[] = {7, 11, 1000003};
  CHECK(rt::evaluate(p, vals) == 2 * 11 * 1000003 - 3 + 7);
  CHECK(rt::evaluate(rt::TensorMapPoly{}, vals) == 0);
  rt::TensorMapRecipe r;
  r.base_param = 0;
  r.rows = {{1, {1}}};                // M
  r.cols = {{1, {2}}};                // K
  r.row_stride = {{1, {2}}, {8, {}}};  // K + 8 elements
  r.box_cols = 64;
  r.box_rows = 8;
  const int64_t ints[] = {0, 1000, 4096};
  rt::TensorMapShape s = rt::tensor_map_shape(r, ints, 0x1000, "k");
  CHECK(s.rank == 2);
  CHECK(s.dims[0] == 4096);
  CHECK(s.dims[1] == 1000);
  CHECK(s.strides[0] == (4096 + 8) * 2);
  CHECK(s.box[0] == 64);
  CHECK(s.box[1] == 8);
  // The view of a 128-row A tile for two warpgroups: (columns, r, h, w, g) with the last
  // dimension long enough for every 64-row block of the M rows.
  r.box_rows = 128;
  r.view = {{1, 8}, {64, 2}, {8, 4}, {32, 2}};
  s = rt::tensor_map_shape(r, ints, 0x1000, "k");
  CHECK(s.rank == 5);
  CHECK(s.dims[1] == 8);
  CHECK(s.dims[2] == 2);
  CHECK(s.dims[3] == 4);
  CHECK(s.dims[4] == (1000 + 31) / 32);
  CHECK(s.strides[0] == 1 * 8208);
  CHECK(s.strides[1] == 64 * 8208);
  CHECK(s.strides[2] == 8 * 8208);
  CHECK(s.strides[3] == 32 * 8208);
  CHECK(s.box[4] == 2);
  // TMA's rules, named with the kernel: 16-byte aligned tensors and row strides.
  CHECK_THROWS_WITH_AS(rt::tensor_map_shape(r, ints, 0x1008, "k"), doctest::Contains("argument 0 16-byte aligned"),
                       std::invalid_argument);
  const int64_t odd[] = {0, 1000, 4092};
  CHECK_THROWS_WITH_AS(rt::tensor_map_shape(r, odd, 0x1000, "k"),
                       doctest::Contains("kernel 'k': its TMA copies need a row stride that is a positive multiple of 16 bytes, got 8200 bytes"),
                       std::invalid_argument);
}
