// How the samples hold a device element type on the host (Host<T>::type), and the conversions
// between that storage and the double the host references compute with.
#pragma once
#include <cmath>
#include <cstdint>

#include "tessel/interp/float_formats.hpp"
#include "tessel/lang/dtype.hpp"

namespace tessel::samples {

template <class T>
struct Host;
template <>
struct Host<lang::f32> {
  using type = float;
  static float encode(double v) { return static_cast<float>(v); }
  static double decode(float v) { return v; }
};
template <>
struct Host<lang::f16> {
  using type = uint16_t;
  static uint16_t encode(double v) { return interp::f16_from_double(v); }
  static double decode(uint16_t v) { return interp::f16_to_double(v); }
};
template <>
struct Host<lang::bf16> {
  using type = uint16_t;
  static uint16_t encode(double v) { return interp::bf16_from_double(v); }
  static double decode(uint16_t v) { return interp::bf16_to_double(v); }
};
template <>
struct Host<lang::i8> {
  using type = int8_t;
  static int8_t encode(double v) { return static_cast<int8_t>(std::lround(v)); }
  static double decode(int8_t v) { return v; }
};
template <>
struct Host<lang::i32> {
  using type = int32_t;
  static int32_t encode(double v) { return static_cast<int32_t>(std::lround(v)); }
  static double decode(int32_t v) { return v; }
};

}  // namespace tessel::samples
