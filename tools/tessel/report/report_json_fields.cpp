// Configs, tuning keys and problem sizes between their canonical text and JSON objects.
#include "report_json_fields.hpp"

#include <fmt/format.h>

#include <charconv>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "tessel/jit/tune/config.hpp"

namespace tessel::samples::report::json_fields {
namespace {

using Assignments = std::vector<std::pair<std::string, int64_t>>;

// "a=1<sep>b=2" -> {(a, 1), (b, 2)}; nullopt unless every item is name=integer ("" -> {}).
std::optional<Assignments> split_assignments(const std::string& text, char sep) {
  Assignments out;
  if (text.empty()) return out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find(sep, pos);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(pos, end - pos);
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) return std::nullopt;
    int64_t v = 0;
    const char* first = item.data() + eq + 1;
    const char* last = item.data() + item.size();
    auto [p, ec] = std::from_chars(first, last, v);
    if (ec != std::errc() || p != last || first == last) return std::nullopt;
    out.emplace_back(item.substr(0, eq), v);
    pos = end + 1;
  }
  return out;
}

std::runtime_error bad(const std::string& where, const std::string& what, const Json& j, const std::string& why) {
  return std::runtime_error(fmt::format("tuning results: {}: {} {} {}", where, what, j.dump(), why));
}

// "name=value" items of a JSON object of integers, in order, skipping `skip`.
std::string join_integers(const Json& obj, const char* skip, char sep, const std::string& where, const char* what) {
  std::string out;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (skip && it.key() == skip) continue;
    if (!it.value().is_number_integer()) throw bad(where, what, obj, fmt::format("has a non-integer '{}'", it.key()));
    out += fmt::format("{}{}={}", out.empty() ? "" : std::string(1, sep), it.key(), it.value().get<int64_t>());
  }
  return out;
}

}  // namespace

Json config_to_json(const std::string& config) {
  if (config.empty()) return nullptr;
  jit::tune::Config c;
  try {
    c = jit::tune::Config::parse(config);
  } catch (const std::exception&) {
    return config;
  }
  auto items = split_assignments(config, ' ');
  if (c.str() != config || !items) return config;  // not canonical: keep the text as given
  Json j = Json::object();
  j["meta"] = Json::object();
  for (const auto& [name, value] : *items)
    if (c.meta.has(name)) j["meta"][name] = value;
    else j[name] = value;
  return j;
}

std::string config_from_json(const Json& j, const std::string& where) {
  if (j.is_null()) return "";
  if (j.is_string()) return j.get<std::string>();  // the old form, or a non-canonical config
  if (!j.is_object()) throw bad(where, "config", j, "is neither an object nor a string");
  std::string text;
  if (auto m = j.find("meta"); m != j.end()) {
    if (!m->is_object()) throw bad(where, "config", j, "has a 'meta' that is not an object");
    text = join_integers(*m, nullptr, ' ', where, "config");
  }
  const std::string opts = join_integers(j, "meta", ' ', where, "config");
  if (!opts.empty()) text += (text.empty() ? "" : " ") + opts;
  try {
    return jit::tune::Config::parse(text).str();
  } catch (const std::exception& e) {
    throw bad(where, "config", j, fmt::format("is not a valid config: {}", e.what()));
  }
}

Json key_to_json(const std::string& key) {
  if (key.empty()) return Json::object();
  const size_t semi = key.find(";sig=");
  if (semi == std::string::npos) return key;
  auto params = split_assignments(key.substr(0, semi), ',');
  if (!params) return key;
  Json j = Json::object();
  for (const auto& [name, value] : *params) {
    if (name == "sig") return key;  // would collide with the signature's field
    j[name] = value;
  }
  j["sig"] = Json::array();
  const std::string sig = key.substr(semi + 5);
  for (size_t pos = 0; !sig.empty() && pos <= sig.size();) {
    size_t end = sig.find(',', pos);
    if (end == std::string::npos) end = sig.size();
    j["sig"].push_back(sig.substr(pos, end - pos));
    pos = end + 1;
  }
  return j;
}

std::string key_from_json(const Json& j, const std::string& where) {
  if (j.is_string()) return j.get<std::string>();
  if (!j.is_object()) throw bad(where, "key", j, "is neither an object nor a string");
  if (j.empty()) return "";
  std::string text = join_integers(j, "sig", ',', where, "key");
  auto sig = j.find("sig");
  if (sig == j.end()) return text;
  if (!sig->is_array()) throw bad(where, "key", j, "has a 'sig' that is not an array of dtypes");
  std::string dtypes;
  for (const auto& d : *sig) {
    if (!d.is_string()) throw bad(where, "key", j, "has a 'sig' that is not an array of dtypes");
    dtypes += (dtypes.empty() ? "" : ",") + d.get<std::string>();
  }
  return text + ";sig=" + dtypes;
}

Json size_to_json(const std::string& size) {
  auto items = split_assignments(size, ',');
  if (!items || items->empty()) return size;
  Json j = Json::object();
  for (const auto& [name, value] : *items) {
    if (j.contains(name)) return size;
    j[name] = value;
  }
  return j;
}

std::string size_from_json(const Json& j, const std::string& where) {
  if (j.is_string()) return j.get<std::string>();
  if (!j.is_object() || j.empty()) throw bad(where, "size", j, "is neither a non-empty object nor a string");
  return join_integers(j, nullptr, ',', where, "size");
}

}  // namespace tessel::samples::report::json_fields
