// Tuning keys: bucketing of argument values, key strings and the kernel signature in them.
#include "tessel/jit/tune/key.hpp"

#include <fmt/format.h>

#include <charconv>
#include <limits>
#include <stdexcept>

#include "tessel/ir/ir.hpp"

namespace tessel::jit::tune {
namespace {
constexpr int64_t kTopPow2 = int64_t{1} << 62;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
}  // namespace

int64_t KeySpec::bucket_value(Bucket b, int64_t v) {
  if (b == Bucket::Exact) return v;
  if (v <= 1) return 1;
  if (v > kTopPow2) return kMax;
  int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

std::pair<int64_t, int64_t> KeySpec::bucket_range(Bucket b, int64_t v) {
  if (b == Bucket::Exact) return {v, v};
  const int64_t p = bucket_value(b, v);
  if (p == 1) return {kMin, 1};
  if (p == kMax) return {kTopPow2 + 1, kMax};
  return {p / 2 + 1, p};
}

std::string KeySpec::key_string(std::span<const int64_t> values, std::string_view signature) const {
  if (values.size() != params.size())
    throw std::invalid_argument(
        fmt::format("tuning key: {} values given for {} key parameters", values.size(), params.size()));
  std::string s;
  for (size_t i = 0; i < params.size(); ++i)
    s += fmt::format("{}{}={}", i ? "," : "", params[i].name, bucket_value(params[i].bucket, values[i]));
  return s + fmt::format(";sig={}", signature);
}

KeySpec::Parsed KeySpec::parse_key(std::string_view key) const {
  auto fail = [&](const std::string& why) -> std::invalid_argument {
    return std::invalid_argument(fmt::format("tuning key '{}': {}", key, why));
  };
  const size_t semi = key.find(";sig=");
  if (semi == std::string_view::npos) throw fail("no ';sig='");
  Parsed out;
  out.signature = std::string(key.substr(semi + 5));
  std::string_view vals = key.substr(0, semi);
  size_t pos = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    if (pos > vals.size()) throw fail("fewer values than key parameters");
    size_t end = vals.find(',', pos);
    if (end == std::string_view::npos) end = vals.size();
    std::string_view item = vals.substr(pos, end - pos);
    const std::string want = params[i].name + "=";
    if (item.substr(0, want.size()) != want) throw fail(fmt::format("expected '{}' at position {}", params[i].name, i));
    std::string_view num = item.substr(want.size());
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
    if (ec != std::errc() || ptr != num.data() + num.size() || num.empty())
      throw fail(fmt::format("'{}' is not an integer", num));
    out.values.push_back(v);
    pos = end + 1;
  }
  if (pos < vals.size() || (params.empty() && !vals.empty())) throw fail("more values than key parameters");
  return out;
}

std::string signature_of(const ir::Function& f) {
  std::string s;
  for (const ir::Value* p : f.body.args) {
    const ir::DType d = p->type.dtype;
    if (!d.ptr) continue;
    if (!s.empty()) s += ',';
    s += ir::name_of(d.scalar);
  }
  return s;
}

}  // namespace tessel::jit::tune
