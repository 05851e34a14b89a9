// Target parsing, PTX version defaults and hardware limits.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "tessel/lowering/target.hpp"

using namespace tessel::lowering;

TEST_CASE("Target::parse accepts Ampere and Hopper names") {
  Target t = Target::parse("sm_90");
  CHECK(t.sm == 90);
  CHECK_FALSE(t.accel);
  CHECK(t.arch() == "sm_90");
  Target a = Target::parse("sm_90a");
  CHECK(a.sm == 90);
  CHECK(a.accel);
  CHECK(a.arch() == "sm_90a");
  CHECK(Target::parse("sm_80").arch() == "sm_80");
  CHECK(Target::parse("sm_86").sm == 86);
}

TEST_CASE("Target::parse rejects everything else") {
  for (const char* bad : {"sm_70", "sm_75", "sm_80a", "sm_100", "90", "sm_", "sm_9x", "compute_90", ""})
    CHECK_THROWS_AS(Target::parse(bad), std::invalid_argument);
}

TEST_CASE("PTX versions and subtarget features") {
  Target t = Target::parse("sm_80");
  CHECK(t.resolved_ptx() == default_ptx_version(80));
  CHECK(t.ptx_feature() == "+ptx80");
  t.ptx_version = 78;
  CHECK(t.ptx_feature() == "+ptx78");
  CHECK(max_ptx_version() >= 80);
}

TEST_CASE("target_info: warp size and shared memory limits per architecture") {
  TargetInfo h = target_info(Target::parse("sm_90"));
  CHECK(h.warp_size == 32);
  CHECK(h.max_shared_per_block == 227 * 1024);
  TargetInfo a = target_info(Target::parse("sm_80"));
  CHECK(a.max_shared_per_block == 163 * 1024);
  CHECK(a.static_shared_per_block == 48 * 1024);
  CHECK(target_info(Target::parse("sm_86")).max_shared_per_block == 99 * 1024);
}

TEST_CASE("known_targets is the one table: every row parses back to itself") {
  CHECK(known_target_names() == std::vector<std::string>{"sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a"});
  CHECK(known_targets_text() == "sm_80, sm_86, sm_87, sm_89, sm_90 or sm_90a");
  for (const KnownTarget& k : known_targets()) {
    CAPTURE(k.name);
    Target t = Target::parse(k.name);
    CHECK(t.arch() == k.name);
    REQUIRE(t.known() != nullptr);
    CHECK(t.known()->name == k.name);
    CHECK(t.has_wgmma() == k.wgmma);
    CHECK(t.has_tma() == k.tma);
    CHECK(t.has_clusters() == k.clusters);
    CHECK(t.min_ptx() == k.min_ptx);
    CHECK(t.has_mma());
  }
  try {
    (void)Target::parse("sm_75");
    FAIL("sm_75 parsed");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()) == "unknown GPU architecture 'sm_75' (expected sm_80, sm_86, sm_87, sm_89, sm_90 or sm_90a)");
  }
}

TEST_CASE("feature queries: wgmma on sm_90a only, TMA and clusters on Hopper, none off the table") {
  CHECK(Target::parse("sm_90a").has_wgmma());
  CHECK_FALSE(Target::parse("sm_90").has_wgmma());
  CHECK(Target::parse("sm_90").has_tma());
  CHECK(Target::parse("sm_90").has_clusters());
  CHECK_FALSE(Target::parse("sm_89").has_tma());
  CHECK_FALSE(Target::parse("sm_80").has_clusters());
  CHECK(Target::parse("sm_90a").min_ptx() == 80);
  CHECK(Target::parse("sm_90").min_ptx() == 78);
  Target turing{75};  // a device's own sm, as CudaDevice makes it
  CHECK(turing.known() == nullptr);
  CHECK_FALSE(turing.has_mma());
  CHECK_FALSE(turing.has_wgmma());
  CHECK(turing.min_ptx() == 70);
}
