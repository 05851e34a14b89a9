// Meta-parameters: lookup with a clear error, deterministic order and printing.
#include "tessel/lang/meta.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "tessel/ir/error.hpp"

namespace tessel::lang {

Meta::Meta(std::initializer_list<std::pair<std::string, int64_t>> init, std::source_location loc) {
  for (const auto& [k, v] : init) set(k, v, loc);
}

int64_t Meta::operator[](MetaName n) const {
  for (const auto& [k, v] : values_)
    if (k == n.name) return v;
  std::vector<std::string> known;
  for (const auto& kv : values_) known.push_back(kv.first);
  throw CompileError(SrcLoc{n.loc.file_name(), n.loc.line()},
                     fmt::format("unknown meta-parameter '{}' (known: {})", n.name,
                                 known.empty() ? std::string("none") : fmt::format("{}", fmt::join(known, ", "))));
}

bool Meta::has(std::string_view n) const {
  return std::any_of(values_.begin(), values_.end(), [&](const auto& kv) { return kv.first == n; });
}

Meta& Meta::set(std::string_view n, int64_t value, std::source_location loc) {
  if (value < kMin || value > kMax)
    throw CompileError(SrcLoc{loc.file_name(), loc.line()},
                       fmt::format("meta-parameter {}={} does not fit a 32-bit int ({} .. {}): kernels read "
                                   "meta-parameters as C++ ints",
                                   n, value, kMin, kMax));
  for (auto& kv : values_)
    if (kv.first == n) {
      kv.second = value;
      return *this;
    }
  values_.emplace_back(std::string(n), value);
  std::sort(values_.begin(), values_.end());
  return *this;
}

std::string Meta::str() const {
  std::string s;
  for (const auto& [k, v] : values_) s += fmt::format("{}{}={}", s.empty() ? "" : ",", k, v);
  return s;
}

}  // namespace tessel::lang
