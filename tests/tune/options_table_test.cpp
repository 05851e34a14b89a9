// The compile-option table (tessel/options/compile_options.def): one rule set, name-based access,
// and the bundle.json / meta.json fields it generates.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "tessel/jit/options.hpp"
#include "tessel/runtime/bundle_manifest.hpp"

using namespace tessel;

TEST_CASE("the table: names, defaults, flags; get and set by name agree with the fields") {
  std::set<std::string> names;
  for (const OptionInfo& o : option_table()) {
    CAPTURE(o.name);
    CHECK(names.insert(std::string(o.name)).second);
    CHECK(option_value(CompileOptions{}, o.name) == o.default_value);
    CHECK(find_option(o.name) == &o);
    CHECK_FALSE(o.help.empty());
    CHECK_FALSE(o.tag.empty());
  }
  CHECK(names == std::set<std::string>{"num_warps", "num_stages", "programs_per_cta", "warp_specialize", "tma",
                                       "precise_math", "max_registers", "stage_mbarriers", "consumer_registers",
                                       "warpgroup_turns"});
  CHECK(find_option("warpgroup_turns")->cli_flag() == "--warpgroup-turns");
  CHECK(find_option("warpgroup_turns")->is_flag);
  CHECK(find_option("warpgroup_turns")->tag == "wt");
  CHECK(find_option("consumer_registers")->cli_flag() == "--consumer-registers");
  CHECK_FALSE(find_option("consumer_registers")->is_flag);
  CHECK(find_option("stage_mbarriers")->cli_flag() == "--stage-mbarriers");
  CHECK(find_option("stage_mbarriers")->is_flag);
  CHECK(find_option("max_registers")->cli_flag() == "--max-registers");
  CHECK(find_option("precise_math")->cli_flag() == "--precise-math");
  CHECK(find_option("precise_math")->is_flag);
  CHECK_FALSE(find_option("num_warps")->is_flag);
  CHECK(find_option("BLOCK") == nullptr);
  CompileOptions o;
  set_option_value(o, "num_warps", 8);
  set_option_value(o, "precise_math", 1);
  CHECK(o.num_warps == 8);
  CHECK(o.precise_math);
  CHECK_THROWS_AS(option_value(o, "nope"), std::logic_error);
  // Aggregate order is the table's: {num_warps, num_stages, programs_per_cta, ...}.
  const CompileOptions all{8, 3, 2, true, true, true};
  CHECK((all.num_warps == 8 && all.num_stages == 3 && all.programs_per_cta == 2 && all.warp_specialize &&
         all.tma && all.precise_math));
}

TEST_CASE("each rule once, with its message; every layer puts its context in front") {
  auto why = [](CompileOptions o) { return option_problem(o); };
  CHECK(why({}) == "");
  CHECK(why({3, 1}) == "num_warps 3 is not a power of two in 1..32");
  CHECK(why({64, 1}) == "num_warps 64 is not a power of two in 1..32");
  CHECK(why({4, 0}) == "num_stages 0 is not in 1..8");
  CHECK(why({4, 9}) == "num_stages 9 is not in 1..8");
  CHECK(why({4, 1, 3}) == "programs_per_cta 3 is not 1 or 2");
  CHECK(why({32, 1, 2}) == "2 programs of 32 warps exceed a CTA's 32 warps (programs_per_cta 2, num_warps 32)");
  CHECK(why({4, 1, 1, false, true}) == "tma needs warp_specialize (tma is how warp_specialize's producers copy)");
  CHECK(why({4, 1, 1, true, true, true}) == "");
  CHECK(why({4, 1, 1, false, false, false, 128}) == "");
  CHECK(why({4, 1, 1, false, false, false, 16}) == "max_registers 16 is not 0 (no limit) or in 24..255");
  CHECK(why({4, 1, 1, false, false, false, 256}) == "max_registers 256 is not 0 (no limit) or in 24..255");
  CHECK(why({8, 2, 1, true, false, false, 0, false, 240}) == "");
  CHECK(why({8, 2, 1, true, false, false, 0, false, 244}) == "consumer_registers 244 is not 0 or a multiple of 8 in 32..256");
  CHECK(why({8, 2, 1, true, false, false, 0, false, 264}) == "consumer_registers 264 is not 0 or a multiple of 8 in 32..256");
  CHECK(why({8, 2, 1, false, false, false, 0, false, 240}).find("consumer_registers needs warp_specialize") == 0);
}

TEST_CASE("bundle.json carries every option; a bundle written before precise_math still loads") {
  rt::BundleConfig c;
  c.name = "default";
  set_options(c, CompileOptions{8, 3, 1, false, false, true});
  CHECK(c.num_warps == 8);
  CHECK(c.precise_math);
  CHECK(options_of(c) == CompileOptions{8, 3, 1, false, false, true});
  rt::BundleManifest m;
  m.tessel_version = "0.1.0";
  rt::BundleKernelInfo k;
  k.name = "k";
  k.params = {{"x", rt::ParamKind::Ptr, "f32"}};
  k.configs = {c};
  k.default_config = "default";
  k.variants = {{"generic", "default", 0, 0, "k", 0, {}}};
  k.variants[0].images.push_back({rt::ImageKind::Ptx, "sm_80", "k.ptx", 10, std::string(64, 'a')});
  k.variants[0].images[0].launch = launch_spec("k", 8, 1, false, 1);
  m.kernels = {k};
  const std::string text = rt::manifest_to_json(m);
  CHECK(text.find("\"precise_math\": true") != std::string::npos);
  CHECK(rt::manifest_from_json(text, "t").kernels[0].configs[0].precise_math);
  // Without the field (an older writer): the default.
  std::string old = text;
  const std::string field = ",\n          \"precise_math\": true";
  REQUIRE(old.find(field) != std::string::npos);
  old.erase(old.find(field), field.size());
  CHECK_FALSE(rt::manifest_from_json(old, "t").kernels[0].configs[0].precise_math);
}
