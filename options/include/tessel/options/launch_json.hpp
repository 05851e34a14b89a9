// The one JSON form of the launch record (launch_spec.hpp), written and read by the disk cache
// (meta.json's "launch") and by bundles (each image's "launch" in bundle.json). Parameters are
// named, not numbered, so a reader sees what a tensor map's sizes are made of. Private to the
// libraries that store launch records (it includes nlohmann-json).
#pragma once
#include <nlohmann/json.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessel/options/launch_spec.hpp"

namespace tessel {

// A launch record that cannot be read: path() names the field ("tensor_maps[1].box[0]"),
// what() says what was expected there.
class LaunchJsonError : public std::runtime_error {
 public:
  LaunchJsonError(std::string path, const std::string& what) : std::runtime_error(what), path_(std::move(path)) {}
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// {"symbol", "threads", "programs_per_cta", "producer_warps", "cluster_ctas", "shared_bytes",
//  "tensor_maps": [{"param", "elem", "rows", "cols", "row_stride", "box", "swizzle_bytes",
//  "view"}]}, keys in that order; polynomials as [[coeff, ["M", "K"]], ...], views as
// [[row_step, box], ...]. `param_names`: the kernel's parameters (s.params of them).
nlohmann::ordered_json launch_to_json(const LaunchSpec& s, std::span<const std::string> param_names);
// Reads what launch_to_json writes (s.params = param_names.size()); LaunchJsonError naming the
// field when a field is missing, of the wrong type or names no parameter. The record's rules
// (check()) are the caller's to apply.
LaunchSpec launch_from_json(const nlohmann::ordered_json& j, std::span<const std::string> param_names);
// The "tensor_maps" array alone (bundle.json version 2 kept it as a field of the image); paths
// in errors start at "tensor_maps".
std::vector<TensorMapRecipe> tensor_maps_from_json(const nlohmann::ordered_json& maps,
                                                   std::span<const std::string> param_names);

}  // namespace tessel
