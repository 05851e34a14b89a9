// Target parsing, PTX version defaults and hardware limits.
#include <doctest/doctest.h>

#include <stdexcept>

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
