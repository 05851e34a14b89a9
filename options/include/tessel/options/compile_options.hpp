// tessel::CompileOptions and what is generated from compile_options.def: defaults, validation,
// and name-based access for the cache key, JSON, config text and CLI flags.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace tessel {

// The options of compile_options.def, with their defaults. jit::CompileOptions is this type;
// lowering::Options, the cache's KeyInputs/EntryMeta and the runtime's BundleConfig derive from it,
// so copying the options between layers is one assignment.
struct CompileOptions {
#define TESSEL_OPTION(type, name, def, shown, tag, help) type name = def;
#include "tessel/options/compile_options.def"
#undef TESSEL_OPTION
  friend bool operator==(const CompileOptions&, const CompileOptions&) = default;
};

// A struct that keeps the options as its own fields (to stay an aggregate with its own fields
// first, as rt::BundleConfig does: `TESSEL_OPTION(...) type name = def;` over the table) converts
// with these two.
template <class T>
CompileOptions options_of(const T& t) {
  CompileOptions o;
#define TESSEL_OPTION(type, name, def, shown, tag, help) o.name = t.name;
#include "tessel/options/compile_options.def"
#undef TESSEL_OPTION
  return o;
}
template <class T>
void set_options(T& t, const CompileOptions& o) {
#define TESSEL_OPTION(type, name, def, shown, tag, help) t.name = o.name;
#include "tessel/options/compile_options.def"
#undef TESSEL_OPTION
}

// One row of the table, for code that treats every option alike.
struct OptionInfo {
  std::string_view name;  // "num_warps"
  bool is_flag;           // a bool option: 0 or 1
  int64_t default_value;
  bool always_shown;      // in config text and cache keys even at its default
  std::string_view tag;   // in bundle config names: "w" of "w4_s1"
  std::string_view help;
  std::string cli_flag() const;  // "--num-warps"
};

// Every option, in table order.
std::span<const OptionInfo> option_table();
// The row named `name`, or nullptr.
const OptionInfo* find_option(std::string_view name);

// An option's value as an integer (a flag is 0 or 1), and setting one; `name` must be a row of
// the table (an unknown name is a programming error: std::logic_error).
int64_t option_value(const CompileOptions& o, std::string_view name);
void set_option_value(CompileOptions& o, std::string_view name, int64_t value);

// Whether the option is written in config text and cache keys for this value.
inline bool option_shown(const OptionInfo& i, int64_t value) { return i.always_shown || value != i.default_value; }

// The first rule the options break, as a message naming the options ("num_warps 3 is not a power
// of two in 1..32", "tma needs warp_specialize (...)"), or "" when they are valid. Every layer
// that takes options from outside (the lowering, config text, bundle.json, the CLI) checks them
// here and puts its own context in front. Rules that depend on the target or the kernel (what
// warp_specialize needs) stay in the lowering.
std::string option_problem(const CompileOptions& o);

}  // namespace tessel
