// The launch record's JSON form (launch_json.hpp).
#include "tessel/options/launch_json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace tessel {
namespace {

using Json = nlohmann::ordered_json;

Json poly_to_json(const TensorMapPoly& p, std::span<const std::string> names) {
  Json a = Json::array();
  for (const TensorMapTerm& t : p) {
    Json n = Json::array();
    for (int i : t.params) n.push_back(names[static_cast<size_t>(i)]);
    a.push_back(Json::array({t.coeff, std::move(n)}));
  }
  return a;
}

Json recipe_to_json(const TensorMapRecipe& r, std::span<const std::string> names) {
  Json view = Json::array();
  for (const TensorMapViewDim& d : r.view) view.push_back(Json::array({d.row_step, d.box}));
  return Json{{"param", names[static_cast<size_t>(r.base_param)]},
              {"elem", r.elem == TensorMapRecipe::Elem::BF16 ? "bf16" : "f16"},
              {"rows", poly_to_json(r.rows, names)},
              {"cols", poly_to_json(r.cols, names)},
              {"row_stride", poly_to_json(r.row_stride, names)},
              {"box", Json::array({r.box_cols, r.box_rows})},
              {"swizzle_bytes", r.swizzle_bytes},
              {"view", std::move(view)}};
}

// Every accessor names the path of what it reads in its error.
struct Reader {
  std::span<const std::string> names;

  [[noreturn]] static void fail(const std::string& path, const std::string& what) { throw LaunchJsonError(path, what); }
  static std::string at(const std::string& path, const char* key) { return path.empty() ? key : path + "." + key; }
  const Json& field(const Json& obj, const char* key, const std::string& path) const {
    if (!obj.is_object()) fail(path, "expected an object");
    auto it = obj.find(key);
    if (it == obj.end()) fail(path, fmt::format("missing field '{}'", key));
    return *it;
  }
  int64_t integer(const Json& v, const std::string& path) const {
    if (!v.is_number_integer()) fail(path, "expected an integer");
    if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
      fail(path, "integer out of range");
    return v.get<int64_t>();
  }
  // An int field: a value outside an int's range is named here, at its field.
  int small(const Json& v, const std::string& path) const {
    const int64_t x = integer(v, path);
    if (x < std::numeric_limits<int>::min() || x > std::numeric_limits<int>::max()) fail(path, "integer out of range");
    return static_cast<int>(x);
  }
  int small(const Json& obj, const char* key, const std::string& path) const {
    return small(field(obj, key, path), at(path, key));
  }
  const Json& array(const Json& obj, const char* key, const std::string& path) const {
    const Json& v = field(obj, key, path);
    if (!v.is_array()) fail(at(path, key), "expected an array");
    return v;
  }
  int param(const Json& v, const std::string& path) const {
    if (!v.is_string()) fail(path, "expected a parameter name");
    auto it = std::find(names.begin(), names.end(), v.get<std::string>());
    if (it == names.end()) fail(path, fmt::format("no parameter '{}'", v.get<std::string>()));
    return static_cast<int>(it - names.begin());
  }
  TensorMapPoly poly(const Json& obj, const char* key, const std::string& path) const {
    TensorMapPoly out;
    const Json& a = array(obj, key, path);
    for (size_t i = 0; i < a.size(); ++i) {
      const std::string tp = fmt::format("{}[{}]", at(path, key), i);
      if (!a[i].is_array() || a[i].size() != 2 || !a[i][1].is_array()) fail(tp, "expected [coeff, [parameters]]");
      TensorMapTerm t;
      t.coeff = integer(a[i][0], tp);
      for (size_t n = 0; n < a[i][1].size(); ++n) t.params.push_back(param(a[i][1][n], fmt::format("{}[1][{}]", tp, n)));
      out.push_back(std::move(t));
    }
    return out;
  }
  TensorMapRecipe recipe(const Json& j, const std::string& path) const {
    TensorMapRecipe r;
    r.base_param = param(field(j, "param", path), at(path, "param"));
    const Json& elem = field(j, "elem", path);
    if (elem != "f16" && elem != "bf16") fail(at(path, "elem"), "expected \"f16\" or \"bf16\"");
    r.elem = elem == "bf16" ? TensorMapRecipe::Elem::BF16 : TensorMapRecipe::Elem::F16;
    r.rows = poly(j, "rows", path);
    r.cols = poly(j, "cols", path);
    r.row_stride = poly(j, "row_stride", path);
    const Json& box = array(j, "box", path);
    if (box.size() != 2) fail(at(path, "box"), "expected [columns, rows]");
    r.box_cols = small(box[0], at(path, "box") + "[0]");
    r.box_rows = small(box[1], at(path, "box") + "[1]");
    r.swizzle_bytes = small(j, "swizzle_bytes", path);
    const Json& view = array(j, "view", path);
    for (size_t d = 0; d < view.size(); ++d) {
      const std::string dp = fmt::format("{}[{}]", at(path, "view"), d);
      if (!view[d].is_array() || view[d].size() != 2) fail(dp, "expected [row_step, box]");
      r.view.push_back({integer(view[d][0], dp), small(view[d][1], dp)});
    }
    return r;
  }
};

}  // namespace

Json launch_to_json(const LaunchSpec& s, std::span<const std::string> param_names) {
  Json maps = Json::array();
  for (const TensorMapRecipe& r : s.tensor_maps) maps.push_back(recipe_to_json(r, param_names));
  return Json{{"symbol", s.symbol},
              {"threads", s.threads},
              {"programs_per_cta", s.programs_per_cta},
              {"producer_warps", s.producer_warps},
              {"cluster_ctas", s.cluster_ctas},
              {"shared_bytes", s.shared_bytes},
              {"tensor_maps", std::move(maps)}};
}

LaunchSpec launch_from_json(const Json& j, std::span<const std::string> param_names) {
  const Reader r{param_names};
  LaunchSpec s;
  const Json& symbol = r.field(j, "symbol", "");
  if (!symbol.is_string()) Reader::fail("symbol", "expected a string");
  s.symbol = symbol.get<std::string>();
  s.threads = r.small(j, "threads", "");
  s.programs_per_cta = r.small(j, "programs_per_cta", "");
  const Json& producers = r.field(j, "producer_warps", "");
  if (!producers.is_boolean()) Reader::fail("producer_warps", "expected true or false");
  s.producer_warps = producers.get<bool>();
  s.cluster_ctas = r.small(j, "cluster_ctas", "");
  s.shared_bytes = r.small(j, "shared_bytes", "");
  s.params = static_cast<int>(param_names.size());
  s.tensor_maps = tensor_maps_from_json(r.array(j, "tensor_maps", ""), param_names);
  return s;
}

std::vector<TensorMapRecipe> tensor_maps_from_json(const Json& maps, std::span<const std::string> param_names) {
  const Reader r{param_names};
  if (!maps.is_array()) Reader::fail("tensor_maps", "expected an array");
  std::vector<TensorMapRecipe> out;
  for (size_t m = 0; m < maps.size(); ++m) out.push_back(r.recipe(maps[m], fmt::format("tensor_maps[{}]", m)));
  return out;
}

}  // namespace tessel
