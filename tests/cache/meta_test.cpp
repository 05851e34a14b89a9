// meta.json: round trip, and any single changed byte is detected.
#include <doctest/doctest.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "cache_test_util.hpp"
#include "tessel/lowering/compile.hpp"

namespace cache = tessel::jit::cache;
namespace ir = tessel::ir;

namespace {
cache::EntryMeta with_files(cache::EntryMeta m, const cache::Entry& e) {
  m.files[cache::kTirFile] = {e.tir.size(), cache::file_hash(e.tir)};
  m.files[cache::kPtxFile] = {e.ptx.size(), cache::file_hash(e.ptx)};
  return m;
}
}  // namespace

TEST_CASE("meta.json round-trips every field") {
  for (uint64_t seed : {1u, 7u, 1234u}) {
    cache::Entry e = cache_test::random_entry(seed, 100 + seed);
    cache::EntryMeta m = with_files(e.meta, e);
    m.local_bytes = static_cast<int>(seed % 97);
    m.spill_bytes = static_cast<int>(seed % 13);
    m.programs_per_cta = 1 + static_cast<int>(seed % 2);
    m.warp_specialize = seed > 5;  // (2, off), (2, on), (1, on)
    m.params = {{"a", "ptr<f16>", true, false}, {"b", "ptr<f16>", true, false}, {"c", "ptr<f16>", true, false},
                {"M", "i32", false, false},     {"lda", "i32", true, false},    {"K", "i32", false, false}};
    m.launch = tessel::launch_spec(m.kernel + "_v", m.num_warps, m.programs_per_cta, m.warp_specialize, 6);
    m.launch.shared_bytes = static_cast<int>(seed * 101 % 200000);
    if (seed > 5) {  // tensor maps: rows M, cols K - 1, stride lda * 2 (parameters 3, 5, 4)
      tessel::TensorMapRecipe t;
      t.elem = seed == 7 ? tessel::TensorMapRecipe::Elem::BF16 : tessel::TensorMapRecipe::Elem::F16;
      t.base_param = 0;
      t.rows = {{1, {3}}};
      t.cols = {{1, {5}}, {-1, {}}};
      t.row_stride = {{2, {4}}};
      t.box_cols = 32;
      t.box_rows = 1 + static_cast<int>(seed % 256);
      t.swizzle_bytes = 64;
      m.launch.tensor_maps = {t, t, t};
      m.launch.tensor_maps[1].base_param = 1;
      m.launch.tensor_maps[2].box_rows = 128;  // a row-permuted view
      m.launch.tensor_maps[2].view = tessel::row_permuted_view(1 + static_cast<int>(seed % 2), 128);
      m.launch.cluster_ctas = 2;
    }
    cache::EntryMeta back = cache::parse_meta(cache::meta_to_json(m));
    CHECK(back.key == m.key);
    CHECK(back.kernel == m.kernel);
    CHECK(back.params == m.params);
    CHECK(back.specialisation == m.specialisation);
    CHECK(back.num_warps == m.num_warps);
    CHECK(back.num_stages == m.num_stages);
    CHECK(back.programs_per_cta == m.programs_per_cta);
    CHECK(back.warp_specialize == m.warp_specialize);
    CHECK(back.launch == m.launch);
    CHECK(back.registers == m.registers);
    CHECK(back.local_bytes == m.local_bytes);
    CHECK(back.spill_bytes == m.spill_bytes);
    CHECK(back.arch == m.arch);
    CHECK(back.cubin_arch == m.cubin_arch);
    CHECK(back.cubin_tool == m.cubin_tool);
    CHECK(back.ptx_version == m.ptx_version);
    CHECK(back.tessel_version == m.tessel_version);
    CHECK(back.tessel_build == m.tessel_build);
    CHECK(back.llvm_version == m.llvm_version);
    CHECK(back.created == m.created);
    CHECK(back.files == m.files);
    CHECK(cache::meta_to_json(back) == cache::meta_to_json(m));
  }
}

TEST_CASE("meta.json written before warp_specialize existed reads as without it") {
  cache::Entry e = cache_test::random_entry(5, 0);
  const std::string text = cache::meta_to_json(with_files(e.meta, e));
  // The same entry as an older tessel wrote it: no warp_specialize field, checksum and canonical
  // form redone the way meta_to_json makes them (sorted keys, the sum over the compact body).
  nlohmann::json j = nlohmann::json::parse(text);
  REQUIRE(j.contains("warp_specialize"));
  CHECK(j["warp_specialize"] == false);
  j.erase("warp_specialize");
  j.erase("checksum");
  j["checksum"] = cache::file_hash(j.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace));
  const std::string old = j.dump(2, ' ', true, nlohmann::json::error_handler_t::replace) + "\n";
  REQUIRE(old.find("warp_specialize") == std::string::npos);
  cache::EntryMeta back = cache::parse_meta(old);
  CHECK_FALSE(back.warp_specialize);
  CHECK(back.key == e.meta.key);
  // A value that is not a boolean is an unreadable entry, not a silent default.
  j.erase("checksum");
  j["warp_specialize"] = 2;
  j["checksum"] = cache::file_hash(j.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace));
  CHECK_THROWS_AS(cache::parse_meta(j.dump(2, ' ', true, nlohmann::json::error_handler_t::replace) + "\n"),
                  std::runtime_error);
}

TEST_CASE("an entry launches the threads the lowering compiled for: + a producer warpgroup with warp_specialize") {
  cache::EntryMeta m;
  // CudaKernel launches meta.launch.threads for PTX whose .maxntid the lowering set from the
  // same formula (options/launch.hpp, through launch_spec): checked against the arithmetic
  // written out here.
  for (int warps : {1, 2, 4, 8, 16, 32})
    for (int per_cta : {1, 2})
      for (bool ws : {false, true}) {
        CAPTURE(warps);
        CAPTURE(per_cta);
        CAPTURE(ws);
        m.num_warps = warps;
        m.programs_per_cta = per_cta;
        m.warp_specialize = ws;
        m.launch = tessel::launch_spec("k", warps, per_cta, ws, 0);
        CHECK(m.launch.threads == 32 * warps * per_cta + (ws ? 128 : 0));
      }
}

TEST_CASE("flipping any one bit of meta.json makes it unreadable") {
  cache::Entry e = cache_test::random_entry(99, 321);
  std::string text = cache::meta_to_json(with_files(e.meta, e));
  REQUIRE_NOTHROW(cache::parse_meta(text));
  std::mt19937_64 rng(5);
  size_t rejected = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    std::string bad = text;
    bad[i] = static_cast<char>(bad[i] ^ (1 << (rng() % 8)));
    bool threw = false;
    try {
      cache::parse_meta(bad);
    } catch (const std::runtime_error&) {
      threw = true;
    }
    INFO("byte ", i, " of ", text.size());
    CHECK(threw);
    rejected += threw;
  }
  CHECK(rejected == text.size());
}

TEST_CASE("truncated, empty or foreign meta.json is rejected with a reason") {
  cache::Entry e = cache_test::random_entry(3, 0);
  std::string text = cache::meta_to_json(with_files(e.meta, e));
  for (size_t n : {size_t{0}, size_t{1}, text.size() / 2, text.size() - 2}) {
    INFO("length ", n);
    CHECK_THROWS_AS(cache::parse_meta(text.substr(0, n)), std::runtime_error);
  }
  CHECK_THROWS_WITH_AS(cache::parse_meta("{\"format\": 1}\n"), doctest::Contains("canonical"), std::runtime_error);
  CHECK_THROWS_WITH_AS(cache::parse_meta("{\n  \"format\": 1\n}\n"), doctest::Contains("checksum"), std::runtime_error);
}

TEST_CASE("meta.json written before the build id existed reads with an empty build") {
  cache::Entry e = cache_test::random_entry(9, 0);
  REQUIRE(e.meta.tessel_build.size() == 16);
  nlohmann::json j = nlohmann::json::parse(cache::meta_to_json(with_files(e.meta, e)));
  CHECK(j["tessel_build"] == e.meta.tessel_build);
  j.erase("tessel_build");
  j.erase("checksum");
  j["checksum"] = cache::file_hash(j.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace));
  cache::EntryMeta back = cache::parse_meta(j.dump(2, ' ', true, nlohmann::json::error_handler_t::replace) + "\n");
  CHECK(back.tessel_build.empty());  // `tessel cache info` says "build unknown"
  CHECK(back.key == e.meta.key);
}

TEST_CASE("a meta.json whose launch record is missing or broken is unreadable, naming the field") {
  cache::Entry e = cache_test::random_entry(11, 0);
  const std::string text = cache::meta_to_json(with_files(e.meta, e));
  auto rewritten = [&](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json j = nlohmann::json::parse(text);
    edit(j);
    j.erase("checksum");
    j["checksum"] = cache::file_hash(j.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace));
    return j.dump(2, ' ', true, nlohmann::json::error_handler_t::replace) + "\n";
  };
  auto error_of = [](const std::string& t) {
    try {
      cache::parse_meta(t);
    } catch (const std::runtime_error& err) {
      return std::string(err.what());
    }
    return std::string("no error");
  };
  CHECK(cache::parse_meta(rewritten([](nlohmann::json&) {})).launch == e.meta.launch);
  CHECK(error_of(rewritten([](nlohmann::json& j) { j.erase("launch"); })).find("launch") != std::string::npos);
  CHECK(error_of(rewritten([](nlohmann::json& j) { j["launch"]["threads"] = 33; })).find("33 threads") !=
        std::string::npos);
  CHECK(error_of(rewritten([](nlohmann::json& j) { j["launch"].erase("symbol"); })).find("symbol") !=
        std::string::npos);
  // A tensor map naming a parameter the kernel does not have.
  const std::string bad = error_of(rewritten([](nlohmann::json& j) {
    j["launch"]["producer_warps"] = true;
    j["launch"]["threads"] = 256;
    j["launch"]["tensor_maps"] = nlohmann::json::parse(
        R"([{"param": "y", "elem": "f16", "rows": [], "cols": [], "row_stride": [], "box": [64, 8],)"
        R"( "swizzle_bytes": 128, "view": []}])");
  }));
  CHECK(bad.find("launch.tensor_maps[0].param") != std::string::npos);
  CHECK(bad.find("no parameter 'y'") != std::string::npos);
}
