// The launch record (options/launch_spec.hpp) and its one JSON form (launch_json.hpp), which the
// disk cache and bundles both store: polynomials, views, the record's rules, the round trip and
// errors that name the field.
#include <doctest/doctest.h>

#include <array>
#include <random>
#include <string>
#include <vector>

#include "tessel/options/launch_json.hpp"
#include "tessel/options/launch_spec.hpp"

using namespace tessel;

namespace {
const std::vector<std::string> kNames{"a", "b", "M", "N", "K", "lda"};

// A plain 2-D map of parameter `base`: rows * cols elements given by parameters, 64 x 8 boxes.
TensorMapRecipe plain_map(int base, int rows, int cols, int stride) {
  TensorMapRecipe r;
  r.base_param = base;
  r.rows = {{1, {rows}}};
  r.cols = {{1, {cols}}};
  r.row_stride = {{1, {stride}}};
  r.box_cols = 64;
  r.box_rows = 8;
  return r;
}

// A random record that check() accepts: tensor maps (and clusters) only with producer warps.
LaunchSpec random_spec(std::mt19937_64& rng) {
  const int warps = 1 << (rng() % 4), per_cta = 1 + static_cast<int>(rng() % 2);
  const bool producers = rng() % 2 && warps >= 4;
  LaunchSpec s = launch_spec("k_" + std::to_string(rng() % 1000), warps, per_cta, producers, 6);
  s.shared_bytes = static_cast<int>(rng() % (227 * 1024));
  if (!producers) return s;
  const int maps = static_cast<int>(rng() % 4);
  for (int m = 0; m < maps; ++m) {
    TensorMapRecipe r;
    r.elem = rng() % 2 ? TensorMapRecipe::Elem::BF16 : TensorMapRecipe::Elem::F16;
    r.base_param = static_cast<int>(rng() % 2);
    r.rows = {{1, {2}}};
    r.cols = {{1, {4}}, {-static_cast<int64_t>(rng() % 64), {}}};
    r.row_stride = {{static_cast<int64_t>(1 + rng() % 3), {5, 5}}};
    r.swizzle_bytes = 32 << (rng() % 3);
    r.box_cols = r.swizzle_bytes / 2;
    r.box_rows = 8;
    if (rng() % 2) {
      r.box_rows = 128;
      r.view = row_permuted_view(1 + static_cast<int>(rng() % 2), 128);
    }
    s.tensor_maps.push_back(r);
  }
  if (maps > 0 && rng() % 2) s.cluster_ctas = 2;
  return s;
}
}  // namespace

TEST_CASE("a tensor-map polynomial prints with the parameters' names and evaluates on the arguments") {
  // 2 * args[1] * args[2] - 3 + args[0]
  const TensorMapPoly p{{2, {1, 2}}, {-3, {}}, {1, {0}}};
  const std::array<std::string, 3> names{"M", "K", "lda"};
  CHECK(to_string(p, names) == "2*K*lda + -3 + M");
  CHECK(to_string(TensorMapPoly{}, names) == "0");
  const std::array<int64_t, 3> args{5, 7, 11};
  CHECK(evaluate(p, args) == 2 * 7 * 11 - 3 + 5);
  CHECK(evaluate(TensorMapPoly{}, args) == 0);
}

TEST_CASE("row-permuted views: dimensions, the unit a tile's first row must be a multiple of, warpgroups") {
  // G = 2 warpgroups, 128 rows: columns, then r (8, one row apart), h (2, 64 rows apart),
  // w (4, 8 rows), g (2, 32 rows).
  TensorMapRecipe r;
  r.view = row_permuted_view(2, 128);
  REQUIRE(r.view.size() == 4);
  CHECK(r.view[0] == TensorMapViewDim{1, 8});
  CHECK(r.view[1] == TensorMapViewDim{64, 2});
  CHECK(r.view[2] == TensorMapViewDim{8, 4});
  CHECK(r.view[3] == TensorMapViewDim{32, 2});
  CHECK(view_unit(r) == 32);
  CHECK(view_warpgroups(r) == 2);
  // One warpgroup, 256 rows: i (4 blocks of 64 rows) instead of g.
  r.view = row_permuted_view(1, 256);
  REQUIRE(r.view.size() == 4);
  CHECK(r.view[3] == TensorMapViewDim{64, 4});
  CHECK(view_warpgroups(r) == 1);
  // Six dimensions, or rows that are not whole m64 blocks per warpgroup: no view.
  CHECK(row_permuted_view(2, 256).empty());
  CHECK(row_permuted_view(4, 128).empty());
  CHECK(row_permuted_view(0, 64).empty());
  r.view.clear();
  CHECK(view_unit(r) == 0);
  CHECK(view_warpgroups(r) == 0);
}

TEST_CASE("the launch record's rules, each named") {
  LaunchSpec ok = launch_spec("k", 8, 1, true, 3);
  CHECK(ok.threads == 384);
  CHECK(ok.grid_x_multiple() == 1);
  ok.tensor_maps = {plain_map(0, 1, 2, 2)};
  CHECK(check(ok) == "");
  auto why = [&](auto edit) {
    LaunchSpec s = ok;
    edit(s);
    return check(s);
  };
  CHECK(why([](LaunchSpec& s) { s.symbol.clear(); }) == "no entry symbol");
  CHECK(why([](LaunchSpec& s) { s.threads = 1056; }).find("1056 threads per CTA") == 0);
  CHECK(why([](LaunchSpec& s) { s.threads = 100; }).find("100 threads per CTA") == 0);
  CHECK(why([](LaunchSpec& s) { s.threads = 128; }).find("leave none beside the producer warpgroup") != std::string::npos);
  CHECK(why([](LaunchSpec& s) { s.programs_per_cta = 3; }) == "programs_per_cta 3 (1 or 2)");
  CHECK(why([](LaunchSpec& s) { s.cluster_ctas = 2; }) == "");
  CHECK(why([](LaunchSpec& s) { s.cluster_ctas = 4; }).find("cluster_ctas 4") == 0);
  CHECK(why([](LaunchSpec& s) { s.cluster_ctas = 2, s.tensor_maps.clear(); }).find("cluster_ctas 2") == 0);
  CHECK(why([](LaunchSpec& s) { s.shared_bytes = -1; }).find("shared_bytes -1") == 0);
  CHECK(why([](LaunchSpec& s) { s.shared_bytes = 300000; }).find("shared_bytes 300000") == 0);
  CHECK(why([](LaunchSpec& s) { s.producer_warps = false, s.threads = 256; }) == "tensor maps need producer warps");
  CHECK(why([](LaunchSpec& s) { s.tensor_maps.resize(9, s.tensor_maps[0]); }) == "9 tensor maps (at most 8)");
  CHECK(why([](LaunchSpec& s) { s.tensor_maps[0].base_param = 3; }).find("not one of the kernel's parameters") !=
        std::string::npos);
  CHECK(why([](LaunchSpec& s) { s.tensor_maps[0].rows = {{1, {7}}}; }).find("names no parameter") != std::string::npos);
  CHECK(why([](LaunchSpec& s) { s.tensor_maps[0].box_cols = 128; }).find("outside TMA's limits") != std::string::npos);
  CHECK(why([](LaunchSpec& s) { s.tensor_maps[0].box_rows = 0; }).find("outside TMA's limits") != std::string::npos);
  CHECK(why([](LaunchSpec& s) { s.tensor_maps[0].swizzle_bytes = 256; }).find("swizzle of 256 bytes") !=
        std::string::npos);
  CHECK(why([](LaunchSpec& s) { s.tensor_maps[0].view.resize(5); }).find("more than 5 dimensions") != std::string::npos);
  CHECK(why([](LaunchSpec& s) { s.tensor_maps[0].view = {{0, 8}}; }).find("view dimension") != std::string::npos);
  // A view must be the row permutation of the staged tile its box_rows describe.
  CHECK(why([](LaunchSpec& s) { s.tensor_maps[0].box_rows = 128, s.tensor_maps[0].view = row_permuted_view(2, 128); }) ==
        "");
  CHECK(why([](LaunchSpec& s) { s.tensor_maps[0].box_rows = 64, s.tensor_maps[0].view = row_permuted_view(2, 128); })
            .find("not the row permutation of a 64-row staged tile") != std::string::npos);
  CHECK(why([](LaunchSpec& s) { s.tensor_maps[0].box_rows = 128, s.tensor_maps[0].view = {{1, 8}, {64, 2}, {8, 4}}; })
            .find("not the row permutation") != std::string::npos);
}

TEST_CASE("the launch record's JSON round-trips, names parameters, and is the same text both ways") {
  std::mt19937_64 rng(42);
  int with_maps = 0;
  for (int i = 0; i < 200; ++i) {
    const LaunchSpec s = random_spec(rng);
    CAPTURE(i);
    REQUIRE(check(s) == "");
    with_maps += !s.tensor_maps.empty();
    const nlohmann::ordered_json j = launch_to_json(s, kNames);
    const LaunchSpec back = launch_from_json(j, kNames);
    CHECK(back == s);
    CHECK(launch_to_json(back, kNames).dump() == j.dump());
    // Through text and the sorted-key form the cache uses.
    const nlohmann::json sorted = nlohmann::json::parse(j.dump());
    CHECK(launch_from_json(nlohmann::ordered_json(sorted), kNames) == s);
  }
  CHECK(with_maps > 20);
  LaunchSpec s = launch_spec("k", 8, 1, true, 6);
  s.tensor_maps = {plain_map(1, 2, 4, 5)};
  const std::string text = launch_to_json(s, kNames).dump();
  CHECK(text.find(R"("param":"b")") != std::string::npos);
  CHECK(text.find(R"("rows":[[1,["M"]]])") != std::string::npos);
  CHECK(text.find(R"("row_stride":[[1,["lda"]]])") != std::string::npos);
}

TEST_CASE("a broken launch record names the field and what was expected there") {
  LaunchSpec s = launch_spec("k", 8, 1, true, 6);
  s.tensor_maps = {plain_map(0, 2, 4, 5), plain_map(0, 2, 4, 5)};
  const nlohmann::ordered_json good = launch_to_json(s, kNames);
  auto error = [&](auto edit) -> std::pair<std::string, std::string> {
    nlohmann::ordered_json j = good;
    edit(j);
    try {
      launch_from_json(j, kNames);
    } catch (const LaunchJsonError& e) {
      return {e.path(), e.what()};
    }
    return {"", "no error"};
  };
  using J = nlohmann::ordered_json;
  CHECK(error([](J& j) { j.erase("threads"); }) == std::pair<std::string, std::string>{"", "missing field 'threads'"});
  CHECK(error([](J& j) { j["threads"] = "many"; }).first == "threads");
  CHECK(error([](J& j) { j["symbol"] = 3; }).first == "symbol");
  CHECK(error([](J& j) { j["producer_warps"] = 1; }).second == "expected true or false");
  CHECK(error([](J& j) { j["tensor_maps"] = 5; }).first == "tensor_maps");
  CHECK(error([](J& j) { j["tensor_maps"][1]["param"] = "q"; }) ==
        std::pair<std::string, std::string>{"tensor_maps[1].param", "no parameter 'q'"});
  CHECK(error([](J& j) { j["tensor_maps"][0]["elem"] = "f32"; }).first == "tensor_maps[0].elem");
  CHECK(error([](J& j) { j["tensor_maps"][0]["rows"][0] = 4; }).first == "tensor_maps[0].rows[0]");
  CHECK(error([](J& j) { j["tensor_maps"][0]["rows"][0][1][0] = "Q"; }).first == "tensor_maps[0].rows[0][1][0]");
  CHECK(error([](J& j) { j["tensor_maps"][0]["box"] = J::array({64}); }).first == "tensor_maps[0].box");
  CHECK(error([](J& j) { j["tensor_maps"][0]["view"] = J::array({J::array({1})}); }).first == "tensor_maps[0].view[0]");
  CHECK(error([](J& j) { j = J::array(); }).second == "expected an object");
  // Numbers past an int are named at their field; in range but wrong, check() names them.
  CHECK(error([](J& j) { j["shared_bytes"] = int64_t{1} << 40; }) ==
        std::pair<std::string, std::string>{"shared_bytes", "integer out of range"});
  CHECK(error([](J& j) { j["tensor_maps"][0]["box"][0] = int64_t{-1} << 35; }).first == "tensor_maps[0].box[0]");
  nlohmann::ordered_json big = good;
  big["shared_bytes"] = 300000;
  CHECK(check(launch_from_json(big, kNames)).find("shared_bytes 300000") == 0);
}
