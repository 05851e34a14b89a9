// The structured JSON of the tuning results' text fields (private to report_json.cpp): configs,
// tuning keys and problem sizes as objects, and back to the canonical text the report keys on.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace tessel::samples::report::json_fields {

using Json = nlohmann::ordered_json;

// "BLOCK=1024 num_warps=4 num_stages=1" -> {"meta": {"BLOCK": 1024}, "num_warps": 4, "num_stages": 1}
// (options after meta, as tune::Config::str() orders them); "" -> null. Text that is not a
// canonical config stays a string (hand-written results), which config_from_json reads too.
Json config_to_json(const std::string& config);
// The inverse: an object (canonicalised through tune::Config), a string (the old form) or null
// (""). std::runtime_error naming `where` for anything else or a malformed object.
std::string config_from_json(const Json& j, const std::string& where);

// "n=1048576;sig=f32,f32,f32" -> {"n": 1048576, "sig": ["f32", "f32", "f32"]}; "" -> {}. A key of
// another shape stays a string.
Json key_to_json(const std::string& key);
std::string key_from_json(const Json& j, const std::string& where);

// "rows=8192,cols=4096" -> {"rows": 8192, "cols": 4096}, in order; other text stays a string.
Json size_to_json(const std::string& size);
std::string size_from_json(const Json& j, const std::string& where);

}  // namespace tessel::samples::report::json_fields
