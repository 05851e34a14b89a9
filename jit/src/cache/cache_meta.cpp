// meta.json: an entry's description and file checksums, self-checksummed so any changed byte shows.
#include <fmt/format.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "tessel/jit/cache.hpp"
#include "tessel/options/launch_json.hpp"

namespace tessel::jit::cache {
namespace {

using json = nlohmann::json;
constexpr int kFormat = 2;  // 2: the launch record under "launch" (options/launch_json.hpp)

std::string spec_text(const ParamInfo& p) {
  if (p.div16 && p.equal1) return p.name + ":d16,eq1";
  if (p.div16) return p.name + ":d16";
  if (p.equal1) return p.name + ":eq1";
  return p.name + ":-";
}

std::vector<std::string> param_names(const std::vector<ParamInfo>& params) {
  std::vector<std::string> names;
  for (const ParamInfo& p : params) names.push_back(p.name);
  return names;
}

// The meta-parameters the entry was traced with, {"BLOCK": 1024}: with "kernel", launch.symbol and
// the options, the mapping from the PTX entry a profiler shows back to the variant.
json meta_json(const std::vector<std::pair<std::string, int64_t>>& meta) {
  json out = json::object();
  for (const auto& [name, v] : meta) out[name] = v;
  return out;
}

// Everything but the checksum; nlohmann's default object keeps keys sorted, so the text is
// deterministic.
json body_of(const EntryMeta& m) {
  json params = json::array();
  for (const ParamInfo& p : m.params)
    params.push_back({{"name", p.name}, {"type", p.type}, {"div16", p.div16}, {"equal1", p.equal1}});
  json files = json::object();
  for (const auto& [name, sum] : m.files) files[name] = {{"size", sum.size}, {"xxh3", sum.xxh3}};
  json j = {{"format", kFormat},
          {"key", m.key},
          {"kernel", m.kernel},
          {"meta", meta_json(m.meta_params)},
          {"params", params},
          {"specialisation", m.specialisation},
          {"launch", json(launch_to_json(m.launch, param_names(m.params)))},
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
  m.meta_params = f.meta;
  std::vector<std::string> specs;
  for (size_t i = 0; i < f.params.size(); ++i) {
    ParamInfo p{f.params[i].name, f.body.args[i]->type.str(), f.params[i].spec.div16, f.params[i].spec.equal1};
    specs.push_back(spec_text(p));
    m.params.push_back(std::move(p));
  }
  m.specialisation = fmt::format("{}", fmt::join(specs, " "));
  static_cast<CompileOptions&>(m) = in;
  // Until the lowering's record replaces it (cache_compile.cpp): the kernel's name and the
  // options' threads, which is what the interpreter's entries (IR only) keep.
  m.launch = launch_spec(f.name, in.num_warps, in.programs_per_cta, false, static_cast<int>(f.params.size()));
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
    try {
      m.launch = launch_from_json(nlohmann::ordered_json(j.at("launch")), param_names(m.params));
    } catch (const LaunchJsonError& e) {
      throw std::runtime_error(fmt::format("meta.json: launch{}{}: {}", e.path().empty() ? "" : ".", e.path(), e.what()));
    }
    if (std::string why = check(m.launch); !why.empty()) throw std::runtime_error("meta.json: launch: " + why);
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
