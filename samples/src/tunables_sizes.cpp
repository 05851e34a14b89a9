// Problem sizes: parsing `--sizes` text and naming sizes and their key values.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "tessel/samples/tunables.hpp"

namespace tessel::samples {
namespace {

constexpr int64_t kMaxDim = (int64_t{1} << 31) - 1;  // kernels index with i32 offsets

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

int64_t parse_int(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) throw std::invalid_argument(fmt::format("'{}' is not an integer", s));
  return v;
}

// "4096", "2^20", "16M", "4K"
int64_t parse_value(std::string_view s) {
  s = trim(s);
  if (s.empty()) throw std::invalid_argument("an empty size");
  int64_t v;
  if (auto caret = s.find('^'); caret != std::string_view::npos) {
    if (s.substr(0, caret) != "2") throw std::invalid_argument(fmt::format("'{}': only powers of 2 (2^K)", s));
    int64_t e = parse_int(s.substr(caret + 1));
    if (e < 0 || e > 31) throw std::invalid_argument(fmt::format("'{}': the exponent must be in 0..31", s));
    v = int64_t{1} << e;
  } else {
    int shift = 0;
    switch (s.back()) {
      case 'k': case 'K': shift = 10; break;
      case 'm': case 'M': shift = 20; break;
      case 'g': case 'G': shift = 30; break;
      default: break;
    }
    if (shift) s.remove_suffix(1);
    v = parse_int(s);
    if (v > (kMaxDim >> shift)) throw std::invalid_argument(fmt::format("size {} is larger than 2^31 - 1", s));
    v <<= shift;
  }
  if (v < 1 || v > kMaxDim) throw std::invalid_argument(fmt::format("size {} is outside [1, 2^31 - 1]", v));
  return v;
}

}  // namespace

std::vector<SizeArgs> parse_sizes(std::string_view text, size_t dims) {
  std::vector<SizeArgs> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = trim(text.substr(pos, end - pos));
    if (item.empty()) throw std::invalid_argument(fmt::format("--sizes '{}': an empty size", text));
    SizeArgs s;
    size_t p = 0;
    while (p <= item.size()) {
      size_t x = item.find('x', p);
      if (x == std::string_view::npos) x = item.size();
      try {
        s.dims.push_back(parse_value(item.substr(p, x - p)));
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(fmt::format("--sizes '{}': {}", item, e.what()));
      }
      p = x + 1;
    }
    if (s.dims.size() != dims)
      throw std::invalid_argument(dims == 1 ? fmt::format("--sizes '{}': expected one number of elements", item)
                                            : fmt::format("--sizes '{}': expected {} dimensions like 8192x4096", item, dims));
    out.push_back(std::move(s));
    pos = end + 1;
  }
  return out;
}

std::string Tunable::size_str(const SizeArgs& s) const {
  std::string out;
  for (size_t i = 0; i < s.dims.size(); ++i)
    out += fmt::format("{}{}={}", i ? "," : "", i < size_names.size() ? size_names[i] : "d" + std::to_string(i), s.dims[i]);
  return out;
}

std::vector<int64_t> Tunable::key_values(const SizeArgs& s) const {
  std::vector<int64_t> v;
  for (const auto& p : key.params) {
    auto it = std::find(size_names.begin(), size_names.end(), p.name);
    if (it == size_names.end() || static_cast<size_t>(it - size_names.begin()) >= s.dims.size())
      throw std::invalid_argument(fmt::format("tunable {}: key parameter '{}' is not a size name", name, p.name));
    v.push_back(s.dims[static_cast<size_t>(it - size_names.begin())]);
  }
  return v;
}

const Tunable* find_tunable(std::string_view name) {
  for (const auto& t : all_tunables())
    if (t.name == name) return &t;
  return nullptr;
}

}  // namespace tessel::samples
