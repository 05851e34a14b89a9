// Cache keys: XXH3-128 over a length-prefixed encoding of exactly the inputs that change the code.
#include <fmt/format.h>
#include <xxhash.h>

#include "tessel/ir/printer.hpp"
#include "tessel/jit/cache.hpp"

#ifndef TESSEL_VERSION_STRING
#error "TESSEL_VERSION_STRING must be defined by the build (CMake project version)"
#endif

namespace tessel::jit::cache {
namespace detail {
extern const char kBuildId[];  // generated at build time (jit/cmake/build_id.cmake)
}
namespace {

// Each field is "name=<byte length>:<bytes>\n": no choice of values can make two different
// input sets encode to the same bytes (a field's text cannot swallow the next field).
void field(std::string& out, std::string_view name, std::string_view value) {
  out += name;
  out += '=';
  out += std::to_string(value.size());
  out += ':';
  out += value;
  out += '\n';
}

}  // namespace

std::string tessel_version() { return TESSEL_VERSION_STRING; }

std::string tessel_build_id() { return detail::kBuildId; }

KeyInputs key_inputs(const ir::Function& f, const CompileOptions& opts, std::string arch, int ptx_version,
                     std::string llvm_version) {
  KeyInputs in;
  in.ir_text = ir::print(f, {.locs = false});
  for (const auto& [name, v] : f.meta) in.meta += fmt::format("{}{}={}", in.meta.empty() ? "" : ",", name, v);
  static_cast<CompileOptions&>(in) = opts;
  in.arch = std::move(arch);
  in.ptx_version = ptx_version;
  in.tessel_version = tessel_version();
  in.tessel_build = tessel_build_id();
  in.llvm_version = std::move(llvm_version);
  return in;
}

std::string make_key(const KeyInputs& in) {
  // v2: the PTX entry is named for the variant (lowering::entry_symbol), so the meta-parameters
  // are keyed too: two metas tracing to the same IR still name their entries differently.
  // v3: meta.json stores the launch record (format 2), which older entries do not have.
  std::string buf = "tessel-cache-key v3\n";
  field(buf, "ir", in.ir_text);
  field(buf, "meta", in.meta);
  // The options in table order; one not always shown only when it is not its default, so adding
  // an option leaves the keys of kernels compiled without it unchanged (a flag is keyed as "1").
  for (const OptionInfo& o : option_table()) {
    const int64_t v = option_value(in, o.name);
    if (option_shown(o, v)) field(buf, o.name, std::to_string(v));
  }
  field(buf, "arch", in.arch);
  field(buf, "ptx", std::to_string(in.ptx_version));
  field(buf, "tessel", in.tessel_version);
  field(buf, "build", in.tessel_build);  // always present: no key is made without a build
  field(buf, "llvm", in.llvm_version);
  XXH128_hash_t h = XXH3_128bits(buf.data(), buf.size());
  return fmt::format("{:016x}{:016x}", h.high64, h.low64);
}

bool is_key(std::string_view s) {
  if (s.size() != 32) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::string file_hash(std::string_view bytes) {
  return fmt::format("{:016x}", XXH3_64bits(bytes.data(), bytes.size()));
}

}  // namespace tessel::jit::cache
