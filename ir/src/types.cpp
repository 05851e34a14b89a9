// Element and tile types: names, widths and printing.
#include "tessel/ir/types.hpp"

#include <fmt/format.h>

#include <array>

namespace tessel::ir {
namespace {
struct ScalarRow {
  Scalar s;
  std::string_view name;
};
constexpr std::array<ScalarRow, 15> kScalars{{
    {Scalar::i1, "i1"},   {Scalar::i8, "i8"},     {Scalar::i16, "i16"},
    {Scalar::i32, "i32"}, {Scalar::i64, "i64"},   {Scalar::f16, "f16"},
    {Scalar::bf16, "bf16"}, {Scalar::f32, "f32"}, {Scalar::f64, "f64"},
    {Scalar::u8, "u8"},   {Scalar::u16, "u16"},   {Scalar::u32, "u32"},
    {Scalar::u64, "u64"}, {Scalar::f8e4m3, "f8e4m3"}, {Scalar::f8e5m2, "f8e5m2"},
}};
static_assert(kScalars.back().s == Scalar::f8e5m2, "one row per Scalar, in enum order");
const ScalarRow& row(Scalar s) { return kScalars[static_cast<size_t>(s)]; }
}  // namespace

std::string_view name_of(Scalar s) { return row(s).name; }

std::optional<Scalar> scalar_from_name(std::string_view name) {
  for (const auto& r : kScalars)
    if (r.name == name) return r.s;
  return std::nullopt;
}

std::string DType::str() const {
  return ptr ? fmt::format("ptr<{}>", name_of(scalar)) : std::string(name_of(scalar));
}

int64_t Type::numel() const {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::string shape_str(const Shape& s) { return fmt::format("[{}]", fmt::join(s, ",")); }

std::string Type::str() const {
  return shape.empty() ? dtype.str() : dtype.str() + shape_str(shape);
}

}  // namespace tessel::ir
