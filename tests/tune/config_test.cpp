// Configs: canonical text, parsing errors, the product of axes.
#include <doctest/doctest.h>

#include <random>
#include <set>

#include "tessel/ir/error.hpp"
#include "tessel/jit/tune/config.hpp"

using namespace tessel;
using jit::tune::Config;

TEST_CASE("config text is canonical: meta sorted by name, then warps and stages") {
  Config c{jit::tune::Meta{{"ZETA", 3}, {"BLOCK", 1024}}, {8, 3}};
  CHECK(c.str() == "BLOCK=1024 ZETA=3 num_warps=8 num_stages=3");
  CHECK(Config{{}, {}}.str() == "num_warps=4 num_stages=1");
  // programs_per_cta appears only when it is not 1, and parses back.
  Config two{{}, {4, 3, 2}};
  CHECK(two.str() == "num_warps=4 num_stages=3 programs_per_cta=2");
  CHECK(Config::parse(two.str()) == two);
  CHECK_THROWS_AS(Config::parse("num_warps=4 programs_per_cta=3"), CompileError);
}

TEST_CASE("tma is written as 1 only when set and round-trips; only 0 or 1 parse") {
  Config t{{}, {8, 4, 1, true, true}};
  CHECK(t.str() == "num_warps=8 num_stages=4 warp_specialize=1 tma=1");
  CHECK(Config::parse(t.str()) == t);
  CHECK_FALSE(Config::parse("warp_specialize=1 tma=0").opts.tma);
  CHECK_THROWS_AS(Config::parse("tma=2"), CompileError);
  CHECK_THROWS_AS(Config::parse("tma=yes"), CompileError);
}

TEST_CASE("precise_math (the first option added through the options table) is written only when set") {
  jit::CompileOptions o;
  o.precise_math = true;
  Config p{jit::tune::Meta{{"BLOCK", 256}}, o};
  CHECK(p.str() == "BLOCK=256 num_warps=4 num_stages=1 precise_math=1");
  CHECK(Config::parse(p.str()) == p);
  CHECK(Config::parse("precise_math=0") == Config{});
  CHECK_THROWS_AS(jit::tune::product({{"precise_math", {0, 1}}}, {4}), CompileError);
}

TEST_CASE("warp_specialize is written as 1 only when set, and parses 0 or 1 and nothing else") {
  // Unset: the text is what it was before the option existed (databases keep their keys).
  CHECK(Config{{}, {4, 3, 2, false}}.str() == "num_warps=4 num_stages=3 programs_per_cta=2");
  Config ws{jit::tune::Meta{{"BLOCK_K", 64}}, {4, 3, 1, true}};
  CHECK(ws.str() == "BLOCK_K=64 num_warps=4 num_stages=3 warp_specialize=1");
  CHECK(Config::parse(ws.str()) == ws);
  Config both{{}, {4, 3, 2, true}};
  CHECK(both.str() == "num_warps=4 num_stages=3 programs_per_cta=2 warp_specialize=1");
  CHECK(Config::parse(both.str()) == both);
  CHECK(Config::parse("warp_specialize=0 num_stages=3") == Config{{}, {4, 3, 1, false}});
  CHECK_FALSE(Config::parse("warp_specialize=0").opts.warp_specialize);
  CHECK(Config::parse("warp_specialize=1").opts.warp_specialize);
  for (const char* bad : {"warp_specialize=2", "warp_specialize=-1", "warp_specialize=true", "warp_specialize=01",
                          "warp_specialize=", "warp_specialize=1 warp_specialize=1"}) {
    CAPTURE(bad);
    std::string why;
    try {
      Config::parse(bad);
    } catch (const CompileError& e) {
      why = e.what();
    }
    CHECK(why.find(bad) != std::string::npos);  // the message quotes the config
    CHECK((why.find("warp_specialize must be 0 or 1") != std::string::npos ||
           why.find("given twice") != std::string::npos));
  }
  // A launch option, not a meta-parameter.
  CHECK_THROWS_AS(jit::tune::product({{"warp_specialize", {0, 1}}}, {4}), CompileError);
}

TEST_CASE("config parse inverts str over random configs") {
  std::mt19937 rng(7);
  for (int t = 0; t < 200; ++t) {
    Config c;
    const int metas = rng() % 4;
    for (int i = 0; i < metas; ++i)
      c.meta.set(std::string(1, char('A' + rng() % 26)) + "_" + std::to_string(rng() % 5),
                 static_cast<int64_t>(rng() % 100000) - 50000);
    // Valid options only (parse checks them): two programs share a CTA's 32 warps, and tma
    // needs warp_specialize.
    c.opts.programs_per_cta = 1 + rng() % 2;
    c.opts.num_warps = 1 << (rng() % (c.opts.programs_per_cta == 2 ? 5 : 6));
    c.opts.num_stages = 1 + rng() % 5;
    c.opts.warp_specialize = rng() % 2 == 1;
    c.opts.tma = c.opts.warp_specialize && rng() % 2 == 1;
    c.opts.precise_math = rng() % 2 == 1;
    Config back = Config::parse(c.str());
    CHECK(back == c);
    CHECK(back.str() == c.str());
  }
}

TEST_CASE("config parse accepts any order and extra spaces; options default") {
  Config c = Config::parse("  num_stages=2   BLOCK=256 ");
  CHECK(c.meta == jit::tune::Meta{{"BLOCK", 256}});
  CHECK(c.opts.num_warps == 4);
  CHECK(c.opts.num_stages == 2);
  CHECK(Config::parse("") == Config{});
}

TEST_CASE("config parse rejects malformed text with CompileError saying why") {
  auto why = [](const char* text) {
    try {
      Config::parse(text);
    } catch (const CompileError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(why("BLOCK") .find("is not NAME=VALUE") != std::string::npos);
  CHECK(why("=4").find("is not NAME=VALUE") != std::string::npos);
  CHECK(why("BLOCK=12x").find("not an integer") != std::string::npos);
  CHECK(why("BLOCK=").find("not an integer") != std::string::npos);
  CHECK(why("BLOCK=1 BLOCK=2").find("given twice") != std::string::npos);
  CHECK(why("num_warps=3").find("power of two") != std::string::npos);
  CHECK(why("num_warps=64").find("power of two") != std::string::npos);
  CHECK(why("num_stages=0").find("num_stages 0 is not in 1..8") != std::string::npos);
  CHECK(why("num_stages=9").find("num_stages 9 is not in 1..8") != std::string::npos);
  CHECK(why("num_warps=32 programs_per_cta=2").find("2 programs of 32 warps exceed a CTA's 32 warps") !=
        std::string::npos);
  CHECK(why("tma=1").find("config 'tma=1': tma needs warp_specialize") != std::string::npos);
  CHECK(why("precise_math=2").find("precise_math must be 0 or 1") != std::string::npos);
}

TEST_CASE("product enumerates meta axes x warps x stages in a fixed order") {
  auto cs = jit::tune::product({{"BLOCK", {128, 256, 1024}}, {"ROWS", {1, 2}}}, {2, 4}, {1, 3});
  REQUIRE(cs.size() == 3 * 2 * 2 * 2);
  CHECK(cs[0].str() == "BLOCK=128 ROWS=1 num_warps=2 num_stages=1");
  CHECK(cs[1].str() == "BLOCK=128 ROWS=1 num_warps=2 num_stages=3");
  CHECK(cs[2].str() == "BLOCK=128 ROWS=1 num_warps=4 num_stages=1");
  CHECK(cs[4].str() == "BLOCK=128 ROWS=2 num_warps=2 num_stages=1");
  CHECK(cs[8].str() == "BLOCK=256 ROWS=1 num_warps=2 num_stages=1");
  CHECK(cs.back().str() == "BLOCK=1024 ROWS=2 num_warps=4 num_stages=3");
  std::set<std::string> unique;
  for (const auto& c : cs) unique.insert(c.str());
  CHECK(unique.size() == cs.size());
  // Stages default to {1}; no meta axes gives warps alone.
  auto w = jit::tune::product({}, {1, 8});
  REQUIRE(w.size() == 2);
  CHECK(w[1].str() == "num_warps=8 num_stages=1");
}

TEST_CASE("product refuses empty axes, duplicate names and bad options") {
  CHECK_THROWS_AS(jit::tune::product({{"BLOCK", {}}}, {4}), CompileError);
  CHECK_THROWS_AS(jit::tune::product({{"BLOCK", {1}}, {"BLOCK", {2}}}, {4}), CompileError);
  CHECK_THROWS_AS(jit::tune::product({{"num_warps", {1}}}, {4}), CompileError);
  CHECK_THROWS_AS(jit::tune::product({{"BLOCK", {1}}}, {}), CompileError);
  CHECK_THROWS_AS(jit::tune::product({{"BLOCK", {1}}}, {4}, {}), CompileError);
  CHECK_THROWS_AS(jit::tune::product({{"BLOCK", {1}}}, {6}), CompileError);
}

TEST_CASE("config meta values must fit a 32-bit int (a kernel reads them into C++ ints)") {
  // 2^32 + 128 would be read as 128 by `const int BLOCK = m["BLOCK"]`.
  try {
    Config::parse("BLOCK=4294967424 num_warps=4");
    FAIL("no error");
  } catch (const CompileError& e) {
    CHECK(std::string(e.what()).find("config 'BLOCK=4294967424 num_warps=4': the value of 'BLOCK' does not fit a "
                                     "32-bit int: 4294967424") != std::string::npos);
  }
  CHECK_THROWS_AS(Config::parse("NEG=-2147483649"), CompileError);
  CHECK(Config::parse("BLOCK=2147483647 NEG=-2147483648").meta["NEG"] == INT32_MIN);
  CHECK_THROWS_AS(jit::tune::product({{"BLOCK", {128, int64_t{1} << 32}}}, {4}), CompileError);
}
