// bundle.json reading and writing (nlohmann::json stays private to the runtime library).
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>

#include "tessel/options/launch_json.hpp"
#include "tessel/runtime/bundle_manifest.hpp"

namespace tessel::rt {
namespace {

using Json = nlohmann::ordered_json;  // keeps keys in the order written: stable, readable output

constexpr const char* kFormatTag = "tessel-bundle";

// ---- writing ----

Json names_of_bits(const BundleKernelInfo& k, uint32_t bits) {
  Json a = Json::array();
  for (size_t i = 0; i < k.params.size(); ++i)
    if ((bits >> i) & 1) a.push_back(k.params[i].name);
  return a;
}

Json bound_to_json(int64_t v) {
  if (v == std::numeric_limits<int64_t>::min() || v == std::numeric_limits<int64_t>::max()) return nullptr;
  return v;
}

std::vector<std::string> param_names(const BundleKernelInfo& k) {
  std::vector<std::string> names;
  for (const auto& p : k.params) names.push_back(p.name);
  return names;
}

Json kernel_to_json(const BundleKernelInfo& k) {
  const std::vector<std::string> names = param_names(k);
  Json j;
  j["name"] = k.name;
  j["description"] = k.description;
  Json params = Json::array();
  for (const auto& p : k.params) {
    Json q;
    q["name"] = p.name;
    q["kind"] = std::string(param_kind_name(p.kind));
    if (p.kind == ParamKind::Ptr) q["element"] = p.element;
    params.push_back(std::move(q));
  }
  j["params"] = std::move(params);
  j["default_config"] = k.default_config;
  Json configs = Json::array();
  for (const auto& c : k.configs) {
    Json meta = Json::object();
    for (const auto& [name, v] : c.meta) meta[name] = v;
    Json cj{{"name", c.name}, {"meta", std::move(meta)}};
    const CompileOptions opts = options_of(c);
    for (const OptionInfo& o : option_table()) {  // every option, in the table's order
      const int64_t v = option_value(opts, o.name);
      if (o.is_flag) cj[std::string(o.name)] = v != 0;
      else cj[std::string(o.name)] = v;
    }
    configs.push_back(std::move(cj));
  }
  j["configs"] = std::move(configs);
  Json rules = Json::array();
  for (const auto& r : k.tuned.rules) {
    Json ranges = Json::array();
    for (const auto& [lo, hi] : r.ranges) ranges.push_back(Json::array({bound_to_json(lo), bound_to_json(hi)}));
    rules.push_back(Json{{"ranges", std::move(ranges)}, {"config", r.config}});
  }
  j["tuned"] = Json{{"key", k.tuned.key}, {"rules", std::move(rules)}};
  Json variants = Json::array();
  for (const auto& v : k.variants) {
    Json images = Json::array();
    for (const auto& im : v.images) {
      Json ij{{"kind", im.kind == ImageKind::Cubin ? "cubin" : "ptx"},
              {"arch", im.arch},
              {"file", im.file},
              {"size", im.size},
              {"sha256", im.sha256},
              {"launch", launch_to_json(im.launch, names)}};
      images.push_back(std::move(ij));
    }
    variants.push_back(Json{{"name", v.name},
                            {"config", v.config},
                            {"div16", names_of_bits(k, v.div16)},
                            {"equal1", names_of_bits(k, v.equal1)},
                            {"entry", v.entry},
                            {"shared_bytes", v.shared_bytes},
                            {"images", std::move(images)}});
  }
  j["variants"] = std::move(variants);
  return j;
}

// ---- reading: every accessor names the path of the field it reads in its error ----

struct Reader {
  const std::string& origin;
  int version = kBundleFormatVersion;

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw BundleError(CUDA_ERROR_INVALID_IMAGE, fmt::format("bundle {}: invalid bundle.json: {}: {}", origin, path, what));
  }
  const Json& field(const Json& obj, const char* key, const std::string& path) const {
    if (!obj.is_object()) fail(path, "expected an object");
    auto it = obj.find(key);
    if (it == obj.end()) fail(path, fmt::format("missing field '{}'", key));
    return *it;
  }
  std::string str(const Json& obj, const char* key, const std::string& path) const {
    const Json& v = field(obj, key, path);
    if (!v.is_string()) fail(path + "." + key, "expected a string");
    return v.get<std::string>();
  }
  int64_t integer(const Json& v, const std::string& path) const {
    if (!v.is_number_integer()) fail(path, "expected an integer");
    if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
      fail(path, "integer out of range");
    return v.get<int64_t>();
  }
  int64_t integer(const Json& obj, const char* key, const std::string& path) const {
    return integer(field(obj, key, path), path + "." + key);
  }
  int small_int(const Json& obj, const char* key, const std::string& path) const {
    int64_t v = integer(obj, key, path);
    if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
      fail(path + "." + key, "integer out of range");
    return static_cast<int>(v);
  }
  // A boolean; 0 and 1 are accepted too (hand-written or generated by tools that have no bools).
  bool flag(const Json& obj, const char* key, const std::string& path) const {
    const Json& v = field(obj, key, path);
    if (v.is_boolean()) return v.get<bool>();
    if (v.is_number_integer() && (v.get<int64_t>() == 0 || v.get<int64_t>() == 1)) return v.get<int64_t>() == 1;
    fail(path + "." + key, "expected true, false, 0 or 1");
  }
  const Json& array(const Json& obj, const char* key, const std::string& path) const {
    const Json& v = field(obj, key, path);
    if (!v.is_array()) fail(path + "." + key, "expected an array");
    return v;
  }
  int64_t bound(const Json& v, int64_t unbounded, const std::string& path) const {
    return v.is_null() ? unbounded : integer(v, path);
  }
  // The index of the parameter a JSON string names.
  int param_named(const Json& v, const BundleKernelInfo& k, const std::string& path) const {
    if (!v.is_string()) fail(path, "expected a parameter name");
    int p = k.param_index(v.get<std::string>());
    if (p < 0) fail(path, fmt::format("no parameter '{}'", v.get<std::string>()));
    return p;
  }
  uint32_t bits_of_names(const Json& obj, const char* key, const BundleKernelInfo& k, const std::string& path) const {
    uint32_t bits = 0;
    const Json& a = array(obj, key, path);
    for (size_t i = 0; i < a.size(); ++i) bits |= uint32_t{1} << param_named(a[i], k, fmt::format("{}.{}[{}]", path, key, i));
    return bits;
  }

  // An image's launch record: "launch" (version 3), else the fields of versions 1 and 2.
  LaunchSpec launch(const Json& image, const BundleKernelInfo& k, const BundleConfig* c, const BundleVariant& v,
                    const std::string& arch, const std::string& path) const {
    const std::vector<std::string> names = param_names(k);
    if (image.contains("launch")) {
      try {
        return launch_from_json(image["launch"], names);
      } catch (const LaunchJsonError& e) {
        fail(fmt::format("{}.launch{}{}", path, e.path().empty() ? "" : ".", e.path()), e.what());
      }
    }
    if (version >= 3) fail(path, "missing field 'launch'");
    // Version 1 had no producer_warps: its images were compiled as their config asked, which
    // only sm_90a images could be.
    bool accel = false;
    parse_sm(arch, &accel);
    const bool producers = image.contains("producer_warps") ? flag(image, "producer_warps", path)
                                                            : c != nullptr && c->warp_specialize && accel;
    LaunchSpec s = launch_spec(v.entry, c ? c->num_warps : 4, c ? c->programs_per_cta : 1, producers,
                               static_cast<int>(names.size()));
    s.shared_bytes = image.contains("shared_bytes") ? small_int(image, "shared_bytes", path) : 0;
    if (s.shared_bytes == 0) s.shared_bytes = v.shared_bytes;  // version 1: the variant's
    if (image.contains("cluster_ctas")) s.cluster_ctas = small_int(image, "cluster_ctas", path);
    if (image.contains("tensor_maps")) {  // a version-2 tensor map has version 3's fields
      try {
        s.tensor_maps = tensor_maps_from_json(image["tensor_maps"], names);
      } catch (const LaunchJsonError& e) {
        fail(e.path().empty() ? path : fmt::format("{}.{}", path, e.path()), e.what());
      }
    }
    return s;
  }

  BundleKernelInfo kernel(const Json& j, const std::string& path) const {
    BundleKernelInfo k;
    k.name = str(j, "name", path);
    const std::string kp = fmt::format("kernel '{}'", k.name);
    k.description = j.contains("description") ? str(j, "description", kp) : std::string();
    const Json& params = array(j, "params", kp);
    if (params.size() > 32) fail(kp + ".params", "more than 32 parameters");
    for (size_t i = 0; i < params.size(); ++i) {
      const std::string pp = fmt::format("{}.params[{}]", kp, i);
      BundleParam p;
      p.name = str(params[i], "name", pp);
      auto kind = parse_param_kind(str(params[i], "kind", pp));
      if (!kind) fail(pp + ".kind", "expected one of ptr, i32, i64, f32, f64");
      p.kind = *kind;
      if (p.kind == ParamKind::Ptr) p.element = str(params[i], "element", pp);
      k.params.push_back(std::move(p));
    }
    k.default_config = str(j, "default_config", kp);
    const Json& configs = array(j, "configs", kp);
    for (size_t i = 0; i < configs.size(); ++i) {
      const std::string cp = fmt::format("{}.configs[{}]", kp, i);
      BundleConfig c;
      c.name = str(configs[i], "name", cp);
      const Json& meta = field(configs[i], "meta", cp);
      if (!meta.is_object()) fail(cp + ".meta", "expected an object");
      for (const auto& [name, v] : meta.items()) c.meta.emplace_back(name, integer(v, cp + ".meta." + name));
      std::sort(c.meta.begin(), c.meta.end());
      // The options always written (num_warps, num_stages) are required; the others are absent
      // from bundles written before they existed and then take their defaults.
      CompileOptions opts;
      for (const OptionInfo& o : option_table()) {
        const std::string name(o.name);
        if (!o.always_shown && !configs[i].contains(name)) continue;
        set_option_value(opts, o.name, o.is_flag ? int64_t{flag(configs[i], name.c_str(), cp)}
                                                 : small_int(configs[i], name.c_str(), cp));
      }
      set_options(c, opts);
      k.configs.push_back(std::move(c));
    }
    if (j.contains("tuned")) {
      const Json& t = j["tuned"];
      const std::string tp = kp + ".tuned";
      const Json& key = array(t, "key", tp);
      for (size_t i = 0; i < key.size(); ++i) {
        if (!key[i].is_string()) fail(fmt::format("{}.key[{}]", tp, i), "expected a parameter name");
        k.tuned.key.push_back(key[i].get<std::string>());
      }
      const Json& rules = array(t, "rules", tp);
      for (size_t i = 0; i < rules.size(); ++i) {
        const std::string rp = fmt::format("{}.rules[{}]", tp, i);
        TunedRule r;
        const Json& ranges = array(rules[i], "ranges", rp);
        for (size_t a = 0; a < ranges.size(); ++a) {
          const std::string ap = fmt::format("{}.ranges[{}]", rp, a);
          if (!ranges[a].is_array() || ranges[a].size() != 2) fail(ap, "expected [lo, hi]");
          r.ranges.emplace_back(bound(ranges[a][0], std::numeric_limits<int64_t>::min(), ap),
                                bound(ranges[a][1], std::numeric_limits<int64_t>::max(), ap));
        }
        r.config = str(rules[i], "config", rp);
        k.tuned.rules.push_back(std::move(r));
      }
    }
    const Json& variants = array(j, "variants", kp);
    for (size_t i = 0; i < variants.size(); ++i) {
      const std::string vp = fmt::format("{}.variants[{}]", kp, i);
      const Json& vj = variants[i];
      BundleVariant v;
      v.name = str(vj, "name", vp);
      v.config = str(vj, "config", vp);
      v.div16 = bits_of_names(vj, "div16", k, vp);
      v.equal1 = bits_of_names(vj, "equal1", k, vp);
      v.entry = str(vj, "entry", vp);
      v.shared_bytes = small_int(vj, "shared_bytes", vp);
      const Json& images = array(vj, "images", vp);
      for (size_t m = 0; m < images.size(); ++m) {
        const std::string ip = fmt::format("{}.images[{}]", vp, m);
        BundleImage im;
        std::string kind = str(images[m], "kind", ip);
        if (kind != "cubin" && kind != "ptx") fail(ip + ".kind", "expected cubin or ptx");
        im.kind = kind == "cubin" ? ImageKind::Cubin : ImageKind::Ptx;
        im.arch = str(images[m], "arch", ip);
        im.file = str(images[m], "file", ip);
        int64_t size = integer(images[m], "size", ip);
        if (size < 0) fail(ip + ".size", "negative");
        im.size = static_cast<uint64_t>(size);
        im.sha256 = str(images[m], "sha256", ip);
        im.launch = launch(images[m], k, k.find_config(v.config), v, im.arch, ip);
        v.images.push_back(std::move(im));
      }
      k.variants.push_back(std::move(v));
    }
    return k;
  }
};

}  // namespace

std::string manifest_to_json(const BundleManifest& m) {
  Json j;
  j["format"] = kFormatTag;
  j["format_version"] = kBundleFormatVersion;  // what is written is this version's form, whatever was read
  j["tessel_version"] = m.tessel_version;
  Json kernels = Json::array();
  for (const auto& k : m.kernels) kernels.push_back(kernel_to_json(k));
  j["kernels"] = std::move(kernels);
  return j.dump(2) + "\n";
}

BundleManifest manifest_from_json(std::string_view text, const std::string& origin) {
  Json j;
  try {
    j = Json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    throw BundleError(CUDA_ERROR_INVALID_IMAGE, fmt::format("bundle {}: bundle.json is not valid JSON ({})", origin,
                                                            e.what()));
  }
  Reader r{origin};
  if (!j.is_object() || !j.contains("format") || j["format"] != kFormatTag)
    r.fail("format", fmt::format("not a tessel bundle (expected \"format\": \"{}\")", kFormatTag));
  BundleManifest m;
  m.format_version = r.small_int(j, "format_version", "bundle");
  r.version = m.format_version;
  if (m.format_version < kOldestBundleFormatVersion || m.format_version > kBundleFormatVersion) {
    validate(m, origin);  // reports the version mismatch before anything else is read
  }
  m.tessel_version = r.str(j, "tessel_version", "bundle");
  const Json& kernels = r.array(j, "kernels", "bundle");
  for (size_t i = 0; i < kernels.size(); ++i) m.kernels.push_back(r.kernel(kernels[i], fmt::format("kernels[{}]", i)));
  validate(m, origin);
  return m;
}

}  // namespace tessel::rt
