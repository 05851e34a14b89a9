// Meta: a kernel's compile-time parameters (named integers such as BLOCK), read while tracing.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <source_location>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessel::lang {

// The name of a meta-parameter at its use site (records the line for error messages).
struct MetaName {
  MetaName(const char* n, std::source_location l = std::source_location::current()) : name(n), loc(l) {}
  MetaName(std::string_view n, std::source_location l = std::source_location::current()) : name(n), loc(l) {}
  std::string_view name;
  std::source_location loc;
};

// Named integers, kept sorted by name so equal Metas print and hash the same. Every value fits
// a 32-bit int: kernels read them into C++ ints (`const int BLOCK = m["BLOCK"]`), where a wider
// value would be narrowed silently (2^32 + 128 becoming 128), so set() refuses it.
class Meta {
 public:
  Meta() = default;
  Meta(std::initializer_list<std::pair<std::string, int64_t>> init,
       std::source_location loc = std::source_location::current());

  // The value of a meta-parameter; CompileError naming the use site when unknown.
  int64_t operator[](MetaName name) const;
  bool has(std::string_view name) const;
  // CompileError naming `loc` when `value` does not fit a 32-bit int (kMin .. kMax).
  Meta& set(std::string_view name, int64_t value, std::source_location loc = std::source_location::current());
  static constexpr int64_t kMin = INT32_MIN, kMax = INT32_MAX;
  const std::vector<std::pair<std::string, int64_t>>& values() const { return values_; }
  std::string str() const;  // "BLOCK=1024,WARPS=4"
  friend bool operator==(const Meta&, const Meta&) = default;

 private:
  std::vector<std::pair<std::string, int64_t>> values_;
};

}  // namespace tessel::lang
