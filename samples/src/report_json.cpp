// Tuning results to and from JSON; ordered_json keeps the fields in the order written.
#include "tessel/samples/report_json.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace tessel::samples::report {
namespace {
using Json = nlohmann::ordered_json;

Json row_json(const ConfigRow& c, const SizeResult& s, const Roofline& roof) {
  Json j{{"config", c.config}, {"status", c.status}};
  if (c.ok()) {
    j["median_ms"] = c.median_ms;
    j["min_ms"] = c.min_ms;
    j["max_ms"] = c.max_ms;
    j["reps"] = c.reps;
    j["spread"] = c.spread();
    j["gbs"] = gbs(s.bytes, c.median_ms);
    j["gflops"] = gflops(s.flops, c.median_ms);
    j["roofline_fraction"] = roofline_fraction(roof, s.bytes, s.flops, c.median_ms);
  } else {
    j["reason"] = c.reason;
  }
  return j;
}

Json size_json(const SizeResult& s, const Roofline& roof) {
  Json j{{"size", s.size},       {"key", s.key},   {"bytes", s.bytes},
         {"flops", s.flops},     {"seconds", s.seconds}, {"compile_seconds", s.compile_seconds},
         {"best", s.best},       {"default", s.default_config}};
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

const Json& array_field(const Json& j, const char* name, const std::string& where) {
  auto it = j.find(name);
  if (it == j.end() || !it->is_array())
    throw std::runtime_error(fmt::format("tuning results: {} has no array '{}'", where, name));
  return *it;
}

template <class T>
T optional_field(const Json& j, const char* name, T fallback) {
  auto it = j.find(name);
  return it == j.end() || it->is_null() ? fallback : it->get<T>();
}

}  // namespace

std::string results_to_json(const Results& r, int indent) {
  Json j{{"device", r.device},
         {"roofline", {{"bandwidth_gbs", r.roofline.bandwidth_gbs}, {"compute_gflops", r.roofline.compute_gflops}}}};
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
  Results r;
  r.device = optional_field<std::string>(j, "device", "");
  if (auto it = j.find("roofline"); it != j.end() && it->is_object()) {
    r.roofline.bandwidth_gbs = optional_field<double>(*it, "bandwidth_gbs", 0);
    r.roofline.compute_gflops = optional_field<double>(*it, "compute_gflops", 0);
  }
  for (const auto& kj : array_field(j, "kernels", "the document")) {
    KernelResult k;
    k.name = field<std::string>(kj, "name", "a kernel");
    k.group = optional_field<std::string>(kj, "group", k.name);
    k.fused = optional_field<bool>(kj, "fused", true);
    for (const auto& sj : array_field(kj, "sizes", k.name)) {
      SizeResult s;
      s.size = field<std::string>(sj, "size", k.name);
      const std::string where = k.name + " " + s.size;
      s.key = optional_field<std::string>(sj, "key", "");
      s.bytes = field<double>(sj, "bytes", where);
      s.flops = field<double>(sj, "flops", where);
      s.seconds = optional_field<double>(sj, "seconds", 0);
      s.compile_seconds = optional_field<double>(sj, "compile_seconds", 0);
      s.best = optional_field<std::string>(sj, "best", "");
      s.default_config = optional_field<std::string>(sj, "default", "");
      for (const auto& cj : array_field(sj, "configs", where)) {
        ConfigRow c;
        c.config = field<std::string>(cj, "config", where);
        c.status = field<std::string>(cj, "status", where);
        c.median_ms = optional_field<double>(cj, "median_ms", 0);
        c.min_ms = optional_field<double>(cj, "min_ms", c.median_ms);
        c.max_ms = optional_field<double>(cj, "max_ms", c.median_ms);
        c.reps = optional_field<int>(cj, "reps", 0);
        c.reason = optional_field<std::string>(cj, "reason", "");
        s.configs.push_back(std::move(c));
      }
      rank_rows(s.configs);
      k.sizes.push_back(std::move(s));
    }
    r.kernels.push_back(std::move(k));
  }
  return r;
}

}  // namespace tessel::samples::report
