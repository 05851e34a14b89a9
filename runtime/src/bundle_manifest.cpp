// Bundle manifest lookups and the consistency checks every opened bundle goes through.
#include "tessel/runtime/bundle_manifest.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace tessel::rt {

std::string_view param_kind_name(ParamKind k) {
  switch (k) {
    case ParamKind::Ptr: return "ptr";
    case ParamKind::I32: return "i32";
    case ParamKind::I64: return "i64";
    case ParamKind::F32: return "f32";
    case ParamKind::F64: return "f64";
  }
  return "?";
}

std::optional<ParamKind> parse_param_kind(std::string_view s) {
  for (ParamKind k : {ParamKind::Ptr, ParamKind::I32, ParamKind::I64, ParamKind::F32, ParamKind::F64})
    if (param_kind_name(k) == s) return k;
  return std::nullopt;
}

std::optional<int64_t> BundleConfig::meta_value(std::string_view name) const {
  for (const auto& [k, v] : meta)
    if (k == name) return v;
  return std::nullopt;
}

const BundleConfig* BundleKernelInfo::find_config(std::string_view n) const {
  for (const auto& c : configs)
    if (c.name == n) return &c;
  return nullptr;
}

int BundleKernelInfo::param_index(std::string_view n) const {
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].name == n) return static_cast<int>(i);
  return -1;
}

const BundleKernelInfo* BundleManifest::find_kernel(std::string_view n) const {
  for (const auto& k : kernels)
    if (k.name == n) return &k;
  return nullptr;
}

std::string signature_string(const BundleKernelInfo& k) {
  std::string s;
  for (const auto& p : k.params) {
    if (!s.empty()) s += ", ";
    s += p.kind == ParamKind::Ptr ? fmt::format("{}: ptr<{}>", p.name, p.element)
                                  : fmt::format("{}: {}", p.name, param_kind_name(p.kind));
  }
  return s;
}

std::optional<int> parse_sm(std::string_view arch, bool* accel) {
  if (!arch.starts_with("sm_")) return std::nullopt;
  arch.remove_prefix(3);
  bool a = !arch.empty() && arch.back() == 'a';
  if (a) arch.remove_suffix(1);
  if (arch.size() < 2 || arch.size() > 3) return std::nullopt;
  int v = 0;
  for (char c : arch) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (accel) *accel = a;
  return v;
}

namespace {

// Collects the first problem; validate() throws it with the origin prepended.
[[noreturn]] void fail(const std::string& origin, const std::string& what) {
  throw BundleError(CUDA_ERROR_INVALID_IMAGE, fmt::format("bundle {}: invalid bundle.json: {}", origin, what));
}

bool is_hex64(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// Image files live directly in the bundle root: no directories, no way out of it.
bool is_plain_file_name(std::string_view f) {
  return !f.empty() && f != "." && f != ".." && f.find('/') == std::string_view::npos &&
         f.find('\\') == std::string_view::npos && f.find('\0') == std::string_view::npos &&
         f != kBundleManifestFile;
}

void validate_params(const BundleKernelInfo& k, const std::string& origin) {
  if (k.params.size() > 32) fail(origin, fmt::format("kernel '{}' has {} parameters (at most 32)", k.name, k.params.size()));
  std::set<std::string> names;
  for (const auto& p : k.params) {
    if (p.name.empty() || !names.insert(p.name).second)
      fail(origin, fmt::format("kernel '{}': parameter names must be unique and non-empty ('{}')", k.name, p.name));
    if ((p.kind == ParamKind::Ptr) == p.element.empty())
      fail(origin, fmt::format("kernel '{}': parameter '{}' must have an element type if and only if it is a pointer",
                               k.name, p.name));
  }
}

void validate_configs(const BundleKernelInfo& k, const std::string& origin) {
  if (k.configs.empty()) fail(origin, fmt::format("kernel '{}' has no configs", k.name));
  std::set<std::string> names;
  for (const auto& c : k.configs) {
    if (c.name.empty() || !names.insert(c.name).second)
      fail(origin, fmt::format("kernel '{}': config names must be unique and non-empty ('{}')", k.name, c.name));
    if (std::string why = option_problem(options_of(c)); !why.empty())
      fail(origin, fmt::format("kernel '{}' config '{}': {}", k.name, c.name, why));
    // CUDA's limit on a CTA; warp specialisation adds threads, so a config can pass the option
    // rules and still be unlaunchable.
    if (c.threads_per_cta(c.warp_specialize) > 1024)
      fail(origin, fmt::format("kernel '{}' config '{}': {} threads per CTA (num_warps {}, programs_per_cta {}{}) "
                               "exceed 1024",
                               k.name, c.name, c.threads_per_cta(c.warp_specialize), c.num_warps, c.programs_per_cta,
                               c.warp_specialize ? ", warp_specialize" : ""));
  }
  if (!k.find_config(k.default_config))
    fail(origin, fmt::format("kernel '{}': default_config '{}' is not one of its configs", k.name, k.default_config));
  for (const auto& key : k.tuned.key) {
    int i = k.param_index(key);
    if (i < 0 || (k.params[i].kind != ParamKind::I32 && k.params[i].kind != ParamKind::I64))
      fail(origin, fmt::format("kernel '{}': tuned key '{}' is not an integer parameter", k.name, key));
  }
  for (const auto& r : k.tuned.rules) {
    if (r.ranges.size() != k.tuned.key.size())
      fail(origin, fmt::format("kernel '{}': a tuned rule has {} ranges for {} key parameters", k.name,
                               r.ranges.size(), k.tuned.key.size()));
    for (const auto& [lo, hi] : r.ranges)
      if (lo > hi) fail(origin, fmt::format("kernel '{}': tuned range [{}, {}] is empty", k.name, lo, hi));
    if (!k.find_config(r.config))
      fail(origin, fmt::format("kernel '{}': tuned rule names unknown config '{}'", k.name, r.config));
  }
}

bool is_int_param(const BundleKernelInfo& k, int p) {
  return p >= 0 && static_cast<size_t>(p) < k.params.size() &&
         (k.params[p].kind == ParamKind::I32 || k.params[p].kind == ParamKind::I64);
}

// The image's launch record: its own rules (options/launch_spec.hpp), then agreement with the
// variant and config (entry, threads, programs per CTA), producer warps and tensor maps only
// where the config asks for them on sm_90a, tensor maps of pointer parameters sized by
// integer ones.
void validate_image_launch(const BundleKernelInfo& k, const BundleConfig& c, const BundleVariant& v,
                           const BundleImage& im, const std::string& where, const std::string& origin) {
  const LaunchSpec& s = im.launch;
  if (std::string why = check(s); !why.empty()) fail(origin, fmt::format("{}: {}", where, why));
  if (s.symbol != v.entry)
    fail(origin, fmt::format("{}: launches entry '{}', not the variant's '{}'", where, s.symbol, v.entry));
  if (s.params != static_cast<int>(k.params.size()))
    fail(origin, fmt::format("{}: a launch record for {} parameters, not {}", where, s.params, k.params.size()));
  if (s.shared_bytes > v.shared_bytes)
    fail(origin, fmt::format("{}: shared_bytes {} outside 0 .. the variant's {}", where, s.shared_bytes, v.shared_bytes));
  if (s.programs_per_cta != c.programs_per_cta || s.threads != c.threads_per_cta(s.producer_warps))
    fail(origin, fmt::format("{}: {} threads and {} programs per CTA, but its config has {} and {}", where, s.threads,
                             s.programs_per_cta, c.threads_per_cta(s.producer_warps), c.programs_per_cta));
  bool accel = false;
  parse_sm(im.arch, &accel);
  if (s.producer_warps && (!c.warp_specialize || !accel))
    fail(origin, fmt::format("{}: producer warps need a warp_specialize config and an sm_90a image", where));
  if (s.tensor_maps.empty()) return;
  if (!c.tma) fail(origin, fmt::format("{}: tensor maps need producer warps of a tma config", where));
  for (size_t m = 0; m < s.tensor_maps.size(); ++m) {
    const TensorMapRecipe& r = s.tensor_maps[m];
    const std::string at = fmt::format("{}: tensor map {}", where, m);
    if (k.params[r.base_param].kind != ParamKind::Ptr) fail(origin, at + ": its tensor is not a pointer parameter");
    for (const TensorMapPoly* p : {&r.rows, &r.cols, &r.row_stride})
      for (const TensorMapTerm& t : *p)
        for (int i : t.params)
          if (!is_int_param(k, i)) fail(origin, at + ": a size names a parameter that is not an integer");
  }
}

void validate_variant(const BundleKernelInfo& k, const BundleVariant& v, std::set<std::string>& files,
                      const std::string& origin) {
  const std::string where = fmt::format("kernel '{}' variant '{}'", k.name, v.name);
  if (!k.find_config(v.config)) fail(origin, fmt::format("{}: unknown config '{}'", where, v.config));
  for (size_t i = 0; i < 32; ++i) {
    bool d = (v.div16 >> i) & 1, e = (v.equal1 >> i) & 1;
    if ((d || e) && i >= k.params.size()) fail(origin, fmt::format("{}: specialises parameter {} of {}", where, i, k.params.size()));
    if (d && !can_div16(k.params[i].kind))
      fail(origin, fmt::format("{}: '{}' is {} and cannot be divisible by 16", where, k.params[i].name,
                               param_kind_name(k.params[i].kind)));
    if (e && !can_equal1(k.params[i].kind))
      fail(origin, fmt::format("{}: '{}' is {} and cannot be specialised equal to 1", where, k.params[i].name,
                               param_kind_name(k.params[i].kind)));
  }
  if (v.entry.empty()) fail(origin, where + ": no entry symbol");
  if (v.shared_bytes < 0) fail(origin, where + ": negative shared_bytes");
  if (v.images.empty()) fail(origin, where + ": no images");
  for (const auto& im : v.images) {
    if (!parse_sm(im.arch)) fail(origin, fmt::format("{}: unknown arch '{}'", where, im.arch));
    if (!is_plain_file_name(im.file))
      fail(origin, fmt::format("{}: image file '{}' must be a plain file name in the bundle", where, im.file));
    if (!files.insert(im.file).second) fail(origin, fmt::format("{}: image file '{}' is listed twice", where, im.file));
    if (!is_hex64(im.sha256)) fail(origin, fmt::format("{}: '{}' has no valid sha256", where, im.file));
    validate_image_launch(k, *k.find_config(v.config), v, im, where + " image '" + im.file + "'", origin);
  }
}

}  // namespace

void validate(const BundleManifest& m, const std::string& origin) {
  if (m.format_version < kOldestBundleFormatVersion || m.format_version > kBundleFormatVersion)
    throw BundleError(CUDA_ERROR_INVALID_IMAGE,
                      fmt::format("bundle {}: format version {} (this runtime reads versions {} to {}; re-export the "
                                  "bundle with a matching tessel)",
                                  origin, m.format_version, kOldestBundleFormatVersion, kBundleFormatVersion));
  if (m.kernels.empty()) fail(origin, "no kernels");
  std::set<std::string> kernels, files;
  for (const auto& k : m.kernels) {
    if (k.name.empty() || !kernels.insert(k.name).second)
      fail(origin, fmt::format("kernel names must be unique and non-empty ('{}')", k.name));
    validate_params(k, origin);
    validate_configs(k, origin);
    if (k.variants.empty()) fail(origin, fmt::format("kernel '{}' has no variants", k.name));
    std::set<std::string> variants;
    for (const auto& v : k.variants) {
      if (v.name.empty() || !variants.insert(v.name).second)
        fail(origin, fmt::format("kernel '{}': variant names must be unique and non-empty ('{}')", k.name, v.name));
      validate_variant(k, v, files, origin);
    }
    // Every config needs a variant that assumes nothing, or some launches would have none.
    for (const auto& c : k.configs) {
      bool generic = std::any_of(k.variants.begin(), k.variants.end(), [&](const BundleVariant& v) {
        return v.config == c.name && v.div16 == 0 && v.equal1 == 0;
      });
      if (!generic)
        fail(origin, fmt::format("kernel '{}' config '{}' has no generic variant (one assuming nothing about its "
                                 "arguments)", k.name, c.name));
    }
  }
}

}  // namespace tessel::rt
