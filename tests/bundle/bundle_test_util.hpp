// Shared helpers of the bundle tests: temporary directories, file edits, a small manifest.
#pragma once
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../common/scoped_fs_env.hpp"
#include "tessel/runtime/bundle_files.hpp"
#include "tessel/runtime/bundle_manifest.hpp"

namespace tessel::bundle_test {

namespace fs = std::filesystem;

// A fresh directory under the system temporary directory, removed with its contents.
using tessel_test::TempDir;

inline std::string read(const fs::path& p) { return rt::read_file_bytes(p).value(); }
inline void write(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

// Each image's launch record as the writer makes it for a plain (no producer warps) image of
// its variant: the variant's entry and shared memory, its config's threads.
inline void plain_launches(rt::BundleKernelInfo& k) {
  for (rt::BundleVariant& v : k.variants) {
    const rt::BundleConfig& c = *k.find_config(v.config);
    for (rt::BundleImage& im : v.images) {
      im.launch = launch_spec(v.entry, c.num_warps, c.programs_per_cta, false, static_cast<int>(k.params.size()));
      im.launch.shared_bytes = v.shared_bytes;
    }
  }
}

// A consistent two-variant manifest of one kernel (x: ptr<f32>, n: i32, s: f32), no files.
inline rt::BundleManifest small_manifest() {
  rt::BundleManifest m;
  m.tessel_version = "0.1.0";
  rt::BundleKernelInfo k;
  k.name = "scale";
  k.description = "out = x * s \"quoted\"";
  k.params = {{"x", rt::ParamKind::Ptr, "f32"}, {"n", rt::ParamKind::I32, ""}, {"s", rt::ParamKind::F32, ""}};
  k.configs = {{"default", {{"BLOCK", 1024}}, 4, 1}, {"small", {{"BLOCK", 128}}, 1, 1}};
  k.default_config = "default";
  k.tuned.key = {"n"};
  k.tuned.rules = {{{{1, 4096}}, "small"}, {{{INT64_MIN, 0}}, "small"}};
  const std::string sum(64, 'a');
  k.variants = {
      {"div16", "default", 0b011, 0, "scale", 0, {{rt::ImageKind::Cubin, "sm_90", "scale.div16.sm_90.cubin", 10, sum, {}}}},
      {"generic", "default", 0, 0, "scale", 0, {{rt::ImageKind::Ptx, "sm_80", "scale.generic.sm_80.ptx", 20, sum, {}}}},
      {"one", "default", 0, 0b010, "scale", 0, {{rt::ImageKind::Ptx, "sm_80", "scale.one.sm_80.ptx", 20, sum, {}}}},
      {"small", "small", 0, 0, "scale", 64, {{rt::ImageKind::Ptx, "sm_80", "scale.small.sm_80.ptx", 20, sum, {}}}},
  };
  plain_launches(k);
  m.kernels.push_back(k);
  return m;
}

}  // namespace tessel::bundle_test
