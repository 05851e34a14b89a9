// Tuning results to and from JSON; ordered_json keeps the fields in the order written.
//
// Format 2 (written since configs became objects): configs, keys and sizes are JSON objects
// (report_json_fields.hpp), the roofline carries the tensor-core ceilings per dtype, and each
// size its dot dtype. Format 1 (no "format" field) had them as text; both read back the same.
#include "tessel/report/report_json.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "report_json_fields.hpp"

namespace tessel::samples::report {
namespace {
using json_fields::Json;

constexpr int kFormat = 2;

Json row_json(const ConfigRow& c, const SizeResult& s, const Roofline& roof) {
  Json j{{"config", json_fields::config_to_json(c.config)}, {"status", c.status}};
  if (c.ok()) {
    j["median_ms"] = c.median_ms;
    j["min_ms"] = c.min_ms;
    j["max_ms"] = c.max_ms;
    j["reps"] = c.reps;
    j["spread"] = c.spread();
    j["gbs"] = gbs(s.bytes, c.median_ms);
    j["gflops"] = gflops(s.flops, c.median_ms);
    j["roofline_fraction"] = roofline_fraction(roof, s.bytes, s.flops, c.median_ms, dot_dtype_of(s));
  } else {
    j["reason"] = c.reason;
  }
  return j;
}

Json size_json(const SizeResult& s, const Roofline& roof) {
  Json j{{"size", json_fields::size_to_json(s.size)},
         {"key", json_fields::key_to_json(s.key)},
         {"bytes", s.bytes},
         {"flops", s.flops},
         {"dot_dtype", dot_dtype_of(s)},
         {"seconds", s.seconds},
         {"compile_seconds", s.compile_seconds},
         {"best", json_fields::config_to_json(s.best)},
         {"default", json_fields::config_to_json(s.default_config)}};
  j["configs"] = Json::array();
  for (const auto& c : s.configs) j["configs"].push_back(row_json(c, s, roof));
  return j;
}

template <class T>
T field(const Json& j, const char* name, const std::string& where) {
  auto it = j.find(name);
  if (it == j.end()) throw std::runtime_error(fmt::format("tuning results: {} has no field '{}'", where, name));
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception&) {
    throw std::runtime_error(fmt::format("tuning results: {}.{} has the wrong type", where, name));
  }
}

// A field that must be present, given to `conv` (the structured fields' readers).
template <class F>
std::string converted(const Json& j, const char* name, const std::string& where, F conv) {
  auto it = j.find(name);
  if (it == j.end()) throw std::runtime_error(fmt::format("tuning results: {} has no field '{}'", where, name));
  return conv(*it, where);
}

const Json& array_field(const Json& j, const char* name, const std::string& where) {
  auto it = j.find(name);
  if (it == j.end() || !it->is_array())
    throw std::runtime_error(fmt::format("tuning results: {} has no array '{}'", where, name));
  return *it;
}

template <class T>
T optional_field(const Json& j, const char* name, T fallback) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception&) {
    throw std::runtime_error(fmt::format("tuning results: field '{}' has the wrong type", name));
  }
}

Roofline roofline_from_json(const Json& j) {
  Roofline r;
  r.bandwidth_gbs = optional_field<double>(j, "bandwidth_gbs", 0);
  r.compute_gflops = optional_field<double>(j, "compute_gflops", 0);
  if (auto t = j.find("tensor_gflops"); t != j.end() && !t->is_null()) {
    if (!t->is_object()) throw std::runtime_error("tuning results: roofline.tensor_gflops is not an object");
    for (auto it = t->begin(); it != t->end(); ++it) {
      if (!it.value().is_number())
        throw std::runtime_error(fmt::format("tuning results: roofline.tensor_gflops.{} is not a number", it.key()));
      r.tensor.push_back({it.key(), it.value().get<double>()});
    }
  }
  return r;
}

SizeResult size_result_from_json(const Json& sj, const std::string& kernel) {
  SizeResult s;
  s.size = converted(sj, "size", kernel, json_fields::size_from_json);
  const std::string where = kernel + " " + s.size;
  auto optional_conv = [&](const char* name, auto conv) {
    auto it = sj.find(name);
    return it == sj.end() ? std::string() : conv(*it, where);
  };
  s.key = optional_conv("key", json_fields::key_from_json);
  s.bytes = field<double>(sj, "bytes", where);
  s.flops = field<double>(sj, "flops", where);
  s.dot_dtype = optional_field<std::string>(sj, "dot_dtype", "");
  s.seconds = optional_field<double>(sj, "seconds", 0);
  s.compile_seconds = optional_field<double>(sj, "compile_seconds", 0);
  s.best = optional_conv("best", json_fields::config_from_json);
  s.default_config = optional_conv("default", json_fields::config_from_json);
  for (const auto& cj : array_field(sj, "configs", where)) {
    ConfigRow c;
    c.config = converted(cj, "config", where, json_fields::config_from_json);
    c.status = field<std::string>(cj, "status", where);
    c.median_ms = optional_field<double>(cj, "median_ms", 0);
    c.min_ms = optional_field<double>(cj, "min_ms", c.median_ms);
    c.max_ms = optional_field<double>(cj, "max_ms", c.median_ms);
    c.reps = optional_field<int>(cj, "reps", 0);
    c.reason = optional_field<std::string>(cj, "reason", "");
    s.configs.push_back(std::move(c));
  }
  rank_rows(s.configs);
  if (s.dot_dtype.empty()) s.dot_dtype = dot_dtype_of(s);  // format 1 did not store it
  return s;
}

}  // namespace

std::string results_to_json(const Results& r, int indent) {
  Json roof{{"bandwidth_gbs", r.roofline.bandwidth_gbs}, {"compute_gflops", r.roofline.compute_gflops}};
  roof["tensor_gflops"] = Json::object();
  for (const TensorCeiling& t : r.roofline.tensor) roof["tensor_gflops"][t.dtype] = t.gflops;
  Json j{{"format", kFormat}, {"device", r.device}, {"roofline", std::move(roof)}};
  j["kernels"] = Json::array();
  for (const auto& k : r.kernels) {
    Json kj{{"name", k.name}, {"group", k.group}, {"fused", k.fused}};
    kj["sizes"] = Json::array();
    for (const auto& s : k.sizes) kj["sizes"].push_back(size_json(s, r.roofline));
    j["kernels"].push_back(std::move(kj));
  }
  return j.dump(indent);
}

Results results_from_json(std::string_view text) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw std::runtime_error(fmt::format("tuning results: not JSON: {}", e.what()));
  }
  if (!j.is_object()) throw std::runtime_error("tuning results: expected a JSON object");
  if (const int format = optional_field<int>(j, "format", 1); format < 1 || format > kFormat)
    throw std::runtime_error(fmt::format(
        "tuning results: format {} is not one this tessel reads (1 to {}); written by a newer tessel?", format,
        kFormat));
  Results r;
  r.device = optional_field<std::string>(j, "device", "");
  if (auto it = j.find("roofline"); it != j.end() && it->is_object()) r.roofline = roofline_from_json(*it);
  for (const auto& kj : array_field(j, "kernels", "the document")) {
    KernelResult k;
    k.name = field<std::string>(kj, "name", "a kernel");
    k.group = optional_field<std::string>(kj, "group", k.name);
    k.fused = optional_field<bool>(kj, "fused", true);
    for (const auto& sj : array_field(kj, "sizes", k.name)) k.sizes.push_back(size_result_from_json(sj, k.name));
    r.kernels.push_back(std::move(k));
  }
  return r;
}

}  // namespace tessel::samples::report
