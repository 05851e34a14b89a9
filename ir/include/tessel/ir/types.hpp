// Element types, pointer types and statically shaped tile types of the tile IR.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessel::ir {

// Scalar element kinds. iN are signed two's complement, uN unsigned; i1 is a boolean.
// f8e4m3 and f8e5m2 are the OCP 8-bit floats (e4m3: no infinities, NaN 0x7f/0xff, largest
// 448; e5m2: IEEE-like with infinities): storage and conversion types (load, store, cast,
// bitcast); arithmetic on them is rejected by the verifier (cast to f16/f32 first).
// New kinds go at the end: the order is the index into the name table.
enum class Scalar : uint8_t { i1, i8, i16, i32, i64, f16, bf16, f32, f64, u8, u16, u32, u64, f8e4m3, f8e5m2 };

constexpr bool is_fp8(Scalar s) { return s == Scalar::f8e4m3 || s == Scalar::f8e5m2; }
constexpr bool is_float(Scalar s) {
  return s == Scalar::f16 || s == Scalar::bf16 || s == Scalar::f32 || s == Scalar::f64 || is_fp8(s);
}
constexpr bool is_int(Scalar s) { return !is_float(s); }  // i1 counts as an integer
// u8..u64 (i1 is a boolean, neither signed nor unsigned; most integer rules treat it as unsigned)
constexpr bool is_unsigned(Scalar s) {
  return s == Scalar::u8 || s == Scalar::u16 || s == Scalar::u32 || s == Scalar::u64;
}
constexpr int bit_width(Scalar s) {
  switch (s) {
    case Scalar::i1: return 1;
    case Scalar::i8: case Scalar::u8: case Scalar::f8e4m3: case Scalar::f8e5m2: return 8;
    case Scalar::i16: case Scalar::u16: case Scalar::f16: case Scalar::bf16: return 16;
    case Scalar::i32: case Scalar::u32: case Scalar::f32: return 32;
    case Scalar::i64: case Scalar::u64: case Scalar::f64: return 64;
  }
  return 0;
}
std::string_view name_of(Scalar s);
std::optional<Scalar> scalar_from_name(std::string_view name);

// An element type: a scalar, or a pointer to a scalar in global memory.
struct DType {
  Scalar scalar = Scalar::i32;
  bool ptr = false;

  bool is_float() const { return !ptr && ir::is_float(scalar); }
  bool is_int() const { return !ptr && ir::is_int(scalar); }
  bool is_bool() const { return !ptr && scalar == Scalar::i1; }
  bool is_unsigned() const { return !ptr && ir::is_unsigned(scalar); }
  bool is_fp8() const { return !ptr && ir::is_fp8(scalar); }
  DType pointee() const { return DType{scalar, false}; }
  DType pointer_to() const { return DType{scalar, true}; }
  int bytes() const { return ptr ? 8 : (bit_width(scalar) + 7) / 8; }
  std::string str() const;
  friend bool operator==(const DType&, const DType&) = default;
};

using Shape = std::vector<int64_t>;

// A value's type: an element type and a static shape. An empty shape is a scalar
// (one value per program instance); rank is not limited.
struct Type {
  DType dtype;
  Shape shape;

  bool is_scalar() const { return shape.empty(); }
  int rank() const { return static_cast<int>(shape.size()); }
  int64_t numel() const;
  Type with_dtype(DType d) const { return Type{d, shape}; }
  Type with_shape(Shape s) const { return Type{dtype, std::move(s)}; }
  std::string str() const;  // "f32", "ptr<f16>", "f32[64,128]"
  friend bool operator==(const Type&, const Type&) = default;
};

std::string shape_str(const Shape& s);  // "[64,128]", "[]" for a scalar

inline DType i1() { return {Scalar::i1}; }
inline DType i32() { return {Scalar::i32}; }
inline DType i64() { return {Scalar::i64}; }
inline DType f32() { return {Scalar::f32}; }

}  // namespace tessel::ir
