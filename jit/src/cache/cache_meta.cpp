// meta.json: an entry's description and file checksums, self-checksummed so any changed byte shows.
#include <fmt/format.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "tessel/jit/cache.hpp"

namespace tessel::jit::cache {
namespace {

using json = nlohmann::json;
constexpr int kFormat = 1;

std::string spec_text(const ParamInfo& p) {
  if (p.div16 && p.equal1) return p.name + ":d16,eq1";
  if (p.div16) return p.name + ":d16";
  if (p.equal1) return p.name + ":eq1";
  return p.name + ":-";
}

// Everything but the checksum; nlohmann's default object keeps keys sorted, so the text is
// deterministic.
json poly_json(const ir::TmaPoly& p) {
  json out = json::array();
  for (const ir::TmaTerm& t : p) out.push_back({t.coeff, t.params});
  return out;
}
ir::TmaPoly poly_of(const json& j) {
  ir::TmaPoly out;
  for (const json& t : j) out.push_back({t.at(0).get<int64_t>(), t.at(1).get<std::vector<int>>()});
  return out;
}
json maps_json(const std::vector<ir::TmaMap>& maps) {
  json out = json::array();
  for (const ir::TmaMap& m : maps) {
    json e = {{"elem", m.elem == ir::TmaMap::Elem::BF16 ? "bf16" : "f16"},
              {"base_param", m.base_param},
              {"rows", poly_json(m.rows)},
              {"cols", poly_json(m.cols)},
              {"row_stride", poly_json(m.row_stride)},
              {"box", {m.box_cols, m.box_rows}},
              {"swizzle_bytes", m.swizzle_bytes}};
    if (m.view_warpgroups > 0) e["view_warpgroups"] = m.view_warpgroups;
    out.push_back(std::move(e));
  }
  return out;
}
std::vector<ir::TmaMap> maps_of(const json& j) {
  std::vector<ir::TmaMap> out;
  for (const json& e : j) {
    ir::TmaMap m;
    const std::string elem = e.at("elem").get<std::string>();
    if (elem != "f16" && elem != "bf16") throw std::runtime_error("meta.json: unknown tensor map element " + elem);
    m.elem = elem == "bf16" ? ir::TmaMap::Elem::BF16 : ir::TmaMap::Elem::F16;
    m.base_param = e.at("base_param").get<int>();
    m.rows = poly_of(e.at("rows"));
    m.cols = poly_of(e.at("cols"));
    m.row_stride = poly_of(e.at("row_stride"));
    m.box_cols = e.at("box").at(0).get<int>();
    m.box_rows = e.at("box").at(1).get<int>();
    m.swizzle_bytes = e.at("swizzle_bytes").get<int>();
    m.view_warpgroups = e.value("view_warpgroups", 0);
    if (m.view_warpgroups > 0 && !ir::view_fits(m.view_warpgroups, m.box_rows))
      throw std::runtime_error("meta.json: a tensor map view that does not fit");
    out.push_back(std::move(m));
  }
  return out;
}

// The meta-parameters the entry was traced with, {"BLOCK": 1024}: with "kernel", "symbol" and
// the options, the mapping from the PTX entry a profiler shows back to the variant.
json meta_json(const std::vector<std::pair<std::string, int64_t>>& meta) {
  json out = json::object();
  for (const auto& [name, v] : meta) out[name] = v;
  return out;
}

json body_of(const EntryMeta& m) {
  json params = json::array();
  for (const ParamInfo& p : m.params)
    params.push_back({{"name", p.name}, {"type", p.type}, {"div16", p.div16}, {"equal1", p.equal1}});
  json files = json::object();
  for (const auto& [name, sum] : m.files) files[name] = {{"size", sum.size}, {"xxh3", sum.xxh3}};
  json j = {{"format", kFormat},
          {"key", m.key},
          {"kernel", m.kernel},
          {"symbol", m.symbol},
          {"meta", meta_json(m.meta_params)},
          {"params", params},
          {"specialisation", m.specialisation},
          {"shared_bytes", m.shared_bytes},
          {"cluster_ctas", m.cluster_ctas},
          {"registers", m.registers},
          {"local_bytes", m.local_bytes},
          {"spill_bytes", m.spill_bytes},
          {"arch", m.arch},
          {"cubin_arch", m.cubin_arch},
          {"cubin_tool", m.cubin_tool},
          {"ptx_version", m.ptx_version},
          {"tessel_version", m.tessel_version},
          {"tessel_build", m.tessel_build},
          {"llvm_version", m.llvm_version},
          {"created", m.created},
          {"files", files}};
  for (const OptionInfo& o : option_table()) {  // every compile option, under its table name
    const int64_t v = option_value(m, o.name);
    if (o.is_flag) j[std::string(o.name)] = v != 0;
    else j[std::string(o.name)] = v;
  }
  return j;
}

std::string dump_body(const json& body) { return body.dump(-1, ' ', true, json::error_handler_t::replace); }

std::string pretty(const json& j) { return j.dump(2, ' ', true, json::error_handler_t::replace) + "\n"; }

}  // namespace

EntryMeta describe(const ir::Function& f, const KeyInputs& in, std::string key) {
  EntryMeta m;
  m.key = std::move(key);
  m.kernel = f.name;
  m.meta_params = f.meta;  // the symbol comes from the lowering (cache_compile.cpp)
  std::vector<std::string> specs;
  for (size_t i = 0; i < f.params.size(); ++i) {
    ParamInfo p{f.params[i].name, f.body.args[i]->type.str(), f.params[i].spec.div16, f.params[i].spec.equal1};
    specs.push_back(spec_text(p));
    m.params.push_back(std::move(p));
  }
  m.specialisation = fmt::format("{}", fmt::join(specs, " "));
  static_cast<CompileOptions&>(m) = in;
  m.arch = in.arch;
  m.ptx_version = in.ptx_version;
  m.tessel_version = in.tessel_version;
  m.tessel_build = in.tessel_build;
  m.llvm_version = in.llvm_version;
  m.created = std::chrono::duration_cast<std::chrono::seconds>(
                  std::chrono::system_clock::now().time_since_epoch()).count();
  return m;
}

std::string meta_to_json(const EntryMeta& m) {
  json j = body_of(m);
  if (!m.tma_maps.empty()) j["tma_maps"] = maps_json(m.tma_maps);  // absent otherwise: older entries stay valid
  j["checksum"] = file_hash(dump_body(j));
  return pretty(j);
}

EntryMeta parse_meta(std::string_view text) {
  json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) throw std::runtime_error("meta.json is not valid JSON");
  // meta_to_json's output is canonical: any edit that still parses changes the text or the sum.
  if (pretty(j) != text) throw std::runtime_error("meta.json is not in canonical form");
  if (!j.contains("checksum") || !j["checksum"].is_string()) throw std::runtime_error("meta.json has no checksum");
  std::string sum = j["checksum"].get<std::string>();
  j.erase("checksum");
  if (file_hash(dump_body(j)) != sum) throw std::runtime_error("meta.json checksum mismatch");
  try {
    if (j.at("format").get<int>() != kFormat) throw std::runtime_error("meta.json has an unknown format");
    EntryMeta m;
    m.key = j.at("key").get<std::string>();
    m.kernel = j.at("kernel").get<std::string>();
    m.symbol = j.value("symbol", std::string());  // absent in entries written before symbols
    if (j.contains("meta"))
      for (const auto& [name, v] : j.at("meta").items()) m.meta_params.emplace_back(name, v.get<int64_t>());
    for (const json& p : j.at("params"))
      m.params.push_back({p.at("name").get<std::string>(), p.at("type").get<std::string>(),
                          p.at("div16").get<bool>(), p.at("equal1").get<bool>()});
    m.specialisation = j.at("specialisation").get<std::string>();
    // Options always shown are required; the others are absent from entries written before them.
    for (const OptionInfo& o : option_table()) {
      const std::string name(o.name);
      if (!o.always_shown && !j.contains(name)) continue;
      set_option_value(m, o.name, o.is_flag ? int64_t{j.at(name).get<bool>()} : j.at(name).get<int64_t>());
    }
    m.shared_bytes = j.at("shared_bytes").get<int>();
    m.cluster_ctas = j.value("cluster_ctas", 1);  // absent in entries written before clusters
    if (j.contains("tma_maps")) m.tma_maps = maps_of(j.at("tma_maps"));
    m.registers = j.at("registers").get<int>();
    m.local_bytes = j.at("local_bytes").get<int>();
    m.spill_bytes = j.at("spill_bytes").get<int>();
    m.arch = j.at("arch").get<std::string>();
    m.cubin_arch = j.at("cubin_arch").get<std::string>();
    m.cubin_tool = j.at("cubin_tool").get<std::string>();
    m.ptx_version = j.at("ptx_version").get<int>();
    m.tessel_version = j.at("tessel_version").get<std::string>();
    m.tessel_build = j.value("tessel_build", std::string());  // absent in entries written before it
    m.llvm_version = j.at("llvm_version").get<std::string>();
    m.created = j.at("created").get<int64_t>();
    for (const auto& [name, f] : j.at("files").items())
      m.files[name] = FileSum{f.at("size").get<uint64_t>(), f.at("xxh3").get<std::string>()};
    return m;
  } catch (const json::exception& e) {
    throw std::runtime_error(std::string("meta.json: ") + e.what());
  }
}

}  // namespace tessel::jit::cache
