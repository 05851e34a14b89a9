// The contents of a kernel bundle's bundle.json: kernels, signatures, configs, variants, images.
#pragma once
#include <cuda.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tessel/options/compile_options.hpp"
#include "tessel/options/launch.hpp"
#include "tessel/options/launch_spec.hpp"
#include "tessel/runtime/tensor_map.hpp"

namespace tessel::rt {

// The bundle.json format the writer produces, and the oldest this runtime still reads. A reader
// refuses other versions (the layout of variants or images may differ). Version 2 added each
// image's producer_warps and tensor_maps (TMA copies); a version-1 image has the producer
// warps its config asks for and no tensor maps. Version 3 stores each image's launch record
// as the compiler produced it ("launch", options/launch_json.hpp: the form the disk cache
// stores too); older images' fields are read into one.
inline constexpr int kBundleFormatVersion = 3;
inline constexpr int kOldestBundleFormatVersion = 1;
inline constexpr const char* kBundleManifestFile = "bundle.json";

// A bundle that cannot be used: malformed or inconsistent bundle.json, a missing, truncated or
// altered file, a kernel or signature that does not match. what() names the bundle, the file
// and what is wrong. code() is the CUresult the typed C-style launchers return for it.
class BundleError : public std::runtime_error {
 public:
  BundleError(CUresult code, const std::string& message) : std::runtime_error(message), code_(code) {}
  CUresult code() const { return code_; }

 private:
  CUresult code_;
};

// How a kernel parameter is passed; the launch argument types are CUdeviceptr, int32_t,
// int64_t, float and double respectively.
enum class ParamKind : uint8_t { Ptr, I32, I64, F32, F64 };
std::string_view param_kind_name(ParamKind k);  // "ptr", "i32", "i64", "f32", "f64"
std::optional<ParamKind> parse_param_kind(std::string_view s);
// Only pointer and integer parameters carry divisibility facts (as in Triton's specialisation).
constexpr bool can_div16(ParamKind k) { return k == ParamKind::Ptr || k == ParamKind::I32 || k == ParamKind::I64; }
constexpr bool can_equal1(ParamKind k) { return k == ParamKind::I32 || k == ParamKind::I64; }

struct BundleParam {
  std::string name;
  ParamKind kind = ParamKind::I32;
  std::string element;  // pointee type of a pointer ("f32"); empty otherwise
  friend bool operator==(const BundleParam&, const BundleParam&) = default;
};

enum class ImageKind : uint8_t { Cubin, Ptx };

// One compiled file of a variant: a cubin for one sm, or PTX for one target (which the driver
// JIT-compiles for its own GPU when no cubin fits).
struct BundleImage {
  ImageKind kind = ImageKind::Ptx;
  std::string arch;    // "sm_80", "sm_90", "sm_90a"
  std::string file;    // relative to the bundle root, e.g. "add.div16.sm_90.cubin"
  uint64_t size = 0;   // bytes
  std::string sha256;  // 64 lowercase hex characters
  // How to launch it (options/launch_spec.hpp), as the compiler produced it: entry symbol (the
  // variant's entry), threads per CTA (the config's warps, plus the producer warpgroup where
  // this image has one: only sm_90a images of a warp_specialize config whose variant's facts
  // allow it), dynamic shared memory (images of one variant differ with their producers'
  // rings), CTAs per cluster (2 for an image whose producers multicast an operand) and the
  // tensor maps the launch builds from the arguments and passes after them (the producers'
  // TMA copies, a `tma` config's sm_90a images).
  LaunchSpec launch;
  friend bool operator==(const BundleImage&, const BundleImage&) = default;
};

// Meta-parameters and compile options (tessel/options/compile_options.def) compiled together;
// the autotuner's unit of choice. Of the options the runtime reads num_warps (32 * num_warps
// threads per program), programs_per_cta (grid.x / this CTAs) and warp_specialize (a producer
// warpgroup per CTA, where an image has it); the others are recorded as compiled.
struct BundleConfig {
  std::string name;                                    // "default"
  std::vector<std::pair<std::string, int64_t>> meta;  // sorted by name
  // The options as fields of their own (num_warps, num_stages, ...): tessel::options_of(c).
#define TESSEL_OPTION(type, name, def, shown, tag, help) type name = def;
#include "tessel/options/compile_options.def"
#undef TESSEL_OPTION
  // Threads per CTA at launch of an image of this config: the formula the lowering set .maxntid
  // from (options/launch.hpp), with the producer warpgroup when the image has it.
  int threads_per_cta(bool producer_warps) const {
    return tessel::threads_per_cta(num_warps, programs_per_cta, producer_warps);
  }
  // The value of meta-parameter `name`, or nullopt.
  std::optional<int64_t> meta_value(std::string_view name) const;
  friend bool operator==(const BundleConfig&, const BundleConfig&) = default;
};

// One compiled specialisation of one config. A variant assumes facts about the arguments
// (bit i of div16: argument i is divisible by 16 — a pointer's address or an integer's value;
// bit i of equal1: integer argument i is 1) and may only run when a launch's arguments have
// them; a variant assuming nothing runs for any arguments.
struct BundleVariant {
  std::string name;    // unique within the kernel, e.g. "div16", "generic"
  std::string config;  // the BundleConfig it compiles
  uint32_t div16 = 0;
  uint32_t equal1 = 0;
  std::string entry;   // the kernel's symbol in its images
  int shared_bytes = 0;  // dynamic shared memory per program: the most any of its images needs
  std::vector<BundleImage> images;
  friend bool operator==(const BundleVariant&, const BundleVariant&) = default;
};

// Problem-size ranges to configs, for tuned kernels. key names integer parameters; a rule
// matches when every key argument lies in its inclusive range [lo, hi]; the first matching
// rule's config is used, and the kernel's default_config when none matches (or no table).
struct TunedRule {
  std::vector<std::pair<int64_t, int64_t>> ranges;  // one per key parameter
  std::string config;
  friend bool operator==(const TunedRule&, const TunedRule&) = default;
};
struct TunedTable {
  std::vector<std::string> key;
  std::vector<TunedRule> rules;
  bool empty() const { return rules.empty(); }
  friend bool operator==(const TunedTable&, const TunedTable&) = default;
};

struct BundleKernelInfo {
  std::string name;
  std::string description;
  std::vector<BundleParam> params;  // at most 32
  std::vector<BundleConfig> configs;
  std::string default_config;
  TunedTable tuned;
  std::vector<BundleVariant> variants;

  const BundleConfig* find_config(std::string_view name) const;
  int param_index(std::string_view name) const;  // -1 when absent
  friend bool operator==(const BundleKernelInfo&, const BundleKernelInfo&) = default;
};

struct BundleManifest {
  int format_version = kBundleFormatVersion;
  std::string tessel_version;
  std::vector<BundleKernelInfo> kernels;

  const BundleKernelInfo* find_kernel(std::string_view name) const;
  friend bool operator==(const BundleManifest&, const BundleManifest&) = default;
};

// The kernel's parameters as one line, "x: ptr<f32>, y: ptr<f32>, n: i32" (what a generated
// launcher was made for, compared when it opens a bundle).
std::string signature_string(const BundleKernelInfo& k);

// Checks the manifest's internal consistency (unique names, configs that exist, divisibility
// bits only on parameters that can carry them, tuned keys naming integer parameters, image
// files that are plain relative names, ...). Throws BundleError (CUDA_ERROR_INVALID_IMAGE)
// naming `origin` and the first problem.
void validate(const BundleManifest& m, const std::string& origin);

// bundle.json text: pretty-printed, keys in a fixed order, no timestamps, so the same bundle
// always gives the same bytes.
std::string manifest_to_json(const BundleManifest& m);
// Parses and validates bundle.json; BundleError naming `origin` when malformed, of another
// format version, or inconsistent.
BundleManifest manifest_from_json(std::string_view text, const std::string& origin);

// "sm_90" -> 90, "sm_90a" -> 90 with *accel = true; nullopt for anything else.
std::optional<int> parse_sm(std::string_view arch, bool* accel = nullptr);

}  // namespace tessel::rt
