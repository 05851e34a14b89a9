// Element-type tags for kernel signatures and casts (f32, f16, i32, ...).
#pragma once
#include <concepts>
#include <cstdint>
#include <type_traits>

#include "tessel/ir/types.hpp"

namespace tessel::lang {

// A tag names an IR scalar and the host type that holds one element.
#define TESSEL_DTYPE_TAG(NAME, HOST)                                   \
  struct NAME {                                                        \
    static constexpr ir::Scalar scalar = ir::Scalar::NAME;             \
    using host = HOST;                                                 \
  };
TESSEL_DTYPE_TAG(i1, uint8_t)   // one byte in memory; nonzero is true
TESSEL_DTYPE_TAG(i8, int8_t)
TESSEL_DTYPE_TAG(i16, int16_t)
TESSEL_DTYPE_TAG(i32, int32_t)
TESSEL_DTYPE_TAG(i64, int64_t)
TESSEL_DTYPE_TAG(f16, uint16_t)   // IEEE binary16 bits
TESSEL_DTYPE_TAG(bf16, uint16_t)  // bfloat16 bits
TESSEL_DTYPE_TAG(f32, float)
TESSEL_DTYPE_TAG(f64, double)
#undef TESSEL_DTYPE_TAG

template <class T>
concept DTypeTag = requires {
  { T::scalar } -> std::convertible_to<ir::Scalar>;
  typename T::host;
};

// Host scalars that may stand in a tile expression as "weak" literals.
template <class T>
concept Literal = std::is_arithmetic_v<T>;

}  // namespace tessel::lang
