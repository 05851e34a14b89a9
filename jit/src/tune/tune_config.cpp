// Autotuning configs: canonical text, parsing, and the Cartesian product of axes.
#include "tessel/jit/tune/config.hpp"

#include <fmt/format.h>

#include <charconv>
#include <set>

#include "tessel/ir/error.hpp"

namespace tessel::jit::tune {
namespace {

[[noreturn]] void bad(std::string_view text, const std::string& why) {
  throw CompileError({}, fmt::format("config '{}': {}", text, why));
}

void check_options(std::string_view text, const CompileOptions& o) {
  if (std::string why = option_problem(o); !why.empty()) bad(text, why);
}

}  // namespace

std::string Config::str() const {
  std::string s;
  for (const auto& [k, v] : meta.values()) s += fmt::format("{}={} ", k, v);  // Meta keeps names sorted
  // The options in table order; one not always shown only when it is not its default (so the
  // texts stored before an option existed still read the same), a flag as 1.
  for (const OptionInfo& o : option_table()) {
    const int64_t v = option_value(opts, o.name);
    if (option_shown(o, v)) s += fmt::format("{}={} ", o.name, v);
  }
  s.pop_back();  // num_warps is always shown: there is a trailing space
  return s;
}

Config Config::parse(std::string_view text) {
  Config c;
  std::set<std::string, std::less<>> seen;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == ' ' || text[i] == '\t') {
      ++i;
      continue;
    }
    size_t end = text.find_first_of(" \t", i);
    if (end == std::string_view::npos) end = text.size();
    std::string_view tok = text.substr(i, end - i);
    i = end;
    size_t eq = tok.find('=');
    if (eq == std::string_view::npos || eq == 0) bad(text, fmt::format("'{}' is not NAME=VALUE", tok));
    std::string name(tok.substr(0, eq));
    std::string_view num = tok.substr(eq + 1);
    // A flag is exactly 0 or 1: "true", "2" or "01" are mistakes, not values to convert.
    const OptionInfo* option = find_option(name);
    if (option && option->is_flag && num != "0" && num != "1")
      bad(text, fmt::format("{} must be 0 or 1, not '{}'", name, num));
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
    if (ec != std::errc() || ptr != num.data() + num.size() || num.empty())
      bad(text, fmt::format("the value of '{}' is not an integer: '{}'", name, num));
    if (!seen.insert(name).second) bad(text, fmt::format("'{}' is given twice", name));
    if (option) {
      if (v < INT32_MIN || v > INT32_MAX) bad(text, fmt::format("{} out of range", name));
      set_option_value(c.opts, name, v);  // a flag is 0 or 1, checked above
    } else {
      if (v < Meta::kMin || v > Meta::kMax)
        bad(text, fmt::format("the value of '{}' does not fit a 32-bit int: {}", name, v));
      c.meta.set(name, v);
    }
  }
  check_options(text, c.opts);
  return c;
}

std::vector<Config> product(const std::vector<std::pair<std::string, std::vector<int64_t>>>& meta_axes,
                            const std::vector<int>& num_warps, const std::vector<int>& num_stages) {
  std::set<std::string, std::less<>> names;
  for (const auto& [name, values] : meta_axes) {
    if (find_option(name))
      throw CompileError({}, fmt::format("config axes: '{}' is a launch option, not a meta-parameter", name));
    if (!names.insert(name).second) throw CompileError({}, fmt::format("config axes: '{}' is given twice", name));
    if (values.empty()) throw CompileError({}, fmt::format("config axes: '{}' has no values", name));
  }
  if (num_warps.empty()) throw CompileError({}, "config axes: num_warps has no values");
  if (num_stages.empty()) throw CompileError({}, "config axes: num_stages has no values");

  // Odometer over the meta axes; the last axis turns fastest, warps and stages inside it.
  std::vector<Config> out;
  std::vector<size_t> at(meta_axes.size(), 0);
  while (true) {
    Meta m;
    for (size_t a = 0; a < meta_axes.size(); ++a) m.set(meta_axes[a].first, meta_axes[a].second[at[a]]);
    for (int w : num_warps)
      for (int s : num_stages) {
        Config c{m, CompileOptions{w, s}};
        check_options(c.str(), c.opts);
        out.push_back(std::move(c));
      }
    size_t a = meta_axes.size();
    while (a > 0 && ++at[a - 1] == meta_axes[a - 1].second.size()) at[--a] = 0;
    if (a == 0) break;
  }
  return out;
}

}  // namespace tessel::jit::tune
