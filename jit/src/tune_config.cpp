// Autotuning configs: canonical text, parsing, and the Cartesian product of axes.
#include "tessel/jit/tune/config.hpp"

#include <fmt/format.h>

#include <charconv>
#include <set>

#include "tessel/ir/error.hpp"

namespace tessel::jit::tune {
namespace {

constexpr const char* kWarps = "num_warps";
constexpr const char* kStages = "num_stages";
constexpr const char* kPrograms = "programs_per_cta";  // in the text only when not 1
constexpr const char* kWarpSpec = "warp_specialize";   // in the text only when set, as 1
constexpr const char* kTma = "tma";                    // in the text only when set, as 1

[[noreturn]] void bad(std::string_view text, const std::string& why) {
  throw CompileError({}, fmt::format("config '{}': {}", text, why));
}

void check_options(std::string_view text, const CompileOptions& o) {
  if (o.num_warps < 1 || o.num_warps > 32 || (o.num_warps & (o.num_warps - 1)) != 0)
    bad(text, fmt::format("num_warps must be a power of two in 1..32, not {}", o.num_warps));
  if (o.num_stages < 1) bad(text, fmt::format("num_stages must be at least 1, not {}", o.num_stages));
  if (o.programs_per_cta != 1 && o.programs_per_cta != 2)
    bad(text, fmt::format("programs_per_cta must be 1 or 2, not {}", o.programs_per_cta));
}

}  // namespace

std::string Config::str() const {
  std::string s;
  for (const auto& [k, v] : meta.values()) s += fmt::format("{}={} ", k, v);  // Meta keeps names sorted
  s += fmt::format("{}={} {}={}", kWarps, opts.num_warps, kStages, opts.num_stages);
  if (opts.programs_per_cta != 1) s += fmt::format(" {}={}", kPrograms, opts.programs_per_cta);
  if (opts.warp_specialize) s += fmt::format(" {}=1", kWarpSpec);
  if (opts.tma) s += fmt::format(" {}=1", kTma);
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
    if ((name == kWarpSpec || name == kTma) && num != "0" && num != "1")
      bad(text, fmt::format("{} must be 0 or 1, not '{}'", name, num));
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
    if (ec != std::errc() || ptr != num.data() + num.size() || num.empty())
      bad(text, fmt::format("the value of '{}' is not an integer: '{}'", name, num));
    if (!seen.insert(name).second) bad(text, fmt::format("'{}' is given twice", name));
    if (name == kWarps || name == kStages || name == kPrograms) {
      if (v < INT32_MIN || v > INT32_MAX) bad(text, fmt::format("{} out of range", name));
      (name == kWarps ? c.opts.num_warps : name == kStages ? c.opts.num_stages : c.opts.programs_per_cta) =
          static_cast<int>(v);
    } else if (name == kWarpSpec) {
      c.opts.warp_specialize = v == 1;  // 0 or 1, checked above
    } else if (name == kTma) {
      c.opts.tma = v == 1;
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
    if (name == kWarps || name == kStages || name == kPrograms || name == kWarpSpec)
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
