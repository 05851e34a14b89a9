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
TESSEL_DTYPE_TAG(u8, uint8_t)
TESSEL_DTYPE_TAG(u16, uint16_t)
TESSEL_DTYPE_TAG(u32, uint32_t)
TESSEL_DTYPE_TAG(u64, uint64_t)
TESSEL_DTYPE_TAG(f8e4m3, uint8_t)  // OCP fp8 E4M3 bits (storage type: cast to f16/f32 to compute)
TESSEL_DTYPE_TAG(f8e5m2, uint8_t)  // OCP fp8 E5M2 bits
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
