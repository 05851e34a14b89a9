// The compile-option table's rows, name-based access and validation rules (each rule once).
#include "tessel/options/compile_options.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <type_traits>

namespace tessel {
namespace {

constexpr bool Always = true;
constexpr bool IfSet = false;

template <class T>
constexpr bool is_flag_type = std::is_same_v<T, bool>;

constexpr OptionInfo kTable[] = {
#define TESSEL_OPTION(type, name, def, shown, tag, help) \
  OptionInfo{#name, is_flag_type<type>, static_cast<int64_t>(def), shown, tag, help},
#include "tessel/options/compile_options.def"
#undef TESSEL_OPTION
};

[[noreturn]] void unknown(std::string_view name) {
  throw std::logic_error(fmt::format("no compile option named '{}'", name));
}

}  // namespace

std::string OptionInfo::cli_flag() const {
  std::string s = "--";
  for (char c : name) s += c == '_' ? '-' : c;
  return s;
}

std::span<const OptionInfo> option_table() { return kTable; }

const OptionInfo* find_option(std::string_view name) {
  for (const OptionInfo& i : kTable)
    if (i.name == name) return &i;
  return nullptr;
}

int64_t option_value(const CompileOptions& o, std::string_view name) {
#define TESSEL_OPTION(type, n, def, shown, tag, help) \
  if (name == #n) return static_cast<int64_t>(o.n);
#include "tessel/options/compile_options.def"
#undef TESSEL_OPTION
  unknown(name);
}

void set_option_value(CompileOptions& o, std::string_view name, int64_t value) {
#define TESSEL_OPTION(type, n, def, shown, tag, help) \
  if (name == #n) {                              \
    o.n = static_cast<type>(value);              \
    return;                                      \
  }
#include "tessel/options/compile_options.def"
#undef TESSEL_OPTION
  unknown(name);
}

std::string option_problem(const CompileOptions& o) {
  const int w = o.num_warps;
  if (w < 1 || w > 32 || (w & (w - 1)) != 0) return fmt::format("num_warps {} is not a power of two in 1..32", w);
  if (o.num_stages < 1 || o.num_stages > 8) return fmt::format("num_stages {} is not in 1..8", o.num_stages);
  if (o.programs_per_cta != 1 && o.programs_per_cta != 2)
    return fmt::format("programs_per_cta {} is not 1 or 2", o.programs_per_cta);
  // A CTA has at most 1024 threads; the producer warpgroup of warp_specialize comes on top
  // (the lowering's own rule for it keeps it within the limit).
  if (w * o.programs_per_cta > 32)
    return fmt::format("{} programs of {} warps exceed a CTA's 32 warps (programs_per_cta {}, num_warps {})",
                       o.programs_per_cta, w, o.programs_per_cta, w);
  if (o.max_registers != 0 && (o.max_registers < 24 || o.max_registers > 255))
    return fmt::format("max_registers {} is not 0 (no limit) or in 24..255", o.max_registers);
  if (o.tma && !o.warp_specialize)
    return "tma needs warp_specialize (tma is how warp_specialize's producers copy)";
  if (o.consumer_registers != 0 &&
      (o.consumer_registers < 32 || o.consumer_registers > 256 || o.consumer_registers % 8 != 0))
    return fmt::format("consumer_registers {} is not 0 or a multiple of 8 in 32..256", o.consumer_registers);
  if (o.consumer_registers != 0 && !o.warp_specialize)
    return "consumer_registers needs warp_specialize (it moves registers from the producer warps to the programs' "
           "warps)";
  return "";
}

}  // namespace tessel
