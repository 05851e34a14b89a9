// Kernel parameter types (Ptr<T>, Int, Float, ...) and what they mean to the IR and the host.
#pragma once
#include <type_traits>

#include "tessel/lang/meta.hpp"
#include "tessel/lang/tile.hpp"

namespace tessel::lang {

// A pointer to elements of T in device (or, interpreted, host) memory.
template <DTypeTag T>
class Ptr : public Tile {
 public:
  using element = T;
  Ptr() = default;
  explicit Ptr(const Tile& t) : Tile(t) {}
};

// A scalar argument of element type T, passed by value.
template <DTypeTag T>
class Num : public Tile {
 public:
  using element = T;
  Num() = default;
  explicit Num(const Tile& t) : Tile(t) {}
};

using Int = Num<i32>;
using Long = Num<i64>;
using Float = Num<f32>;
using Double = Num<f64>;

enum class ParamKind { Pointer, Int, Float };

template <class P>
struct ParamTraits;  // undefined: not a kernel parameter type

template <DTypeTag T>
struct ParamTraits<Ptr<T>> {
  static constexpr ParamKind kind = ParamKind::Pointer;
  static ir::Type type() { return ir::Type{ir::DType{T::scalar, true}, {}}; }
};

template <DTypeTag T>
struct ParamTraits<Num<T>> {
  static_assert(T::scalar == ir::Scalar::i32 || T::scalar == ir::Scalar::i64 || T::scalar == ir::Scalar::f32 ||
                    T::scalar == ir::Scalar::f64,
                "scalar kernel parameters must be i32, i64, f32 or f64 (Int, Long, Float, Double); pass "
                "other types as one of these and cast in the kernel");
  static constexpr ParamKind kind = ir::is_float(T::scalar) ? ParamKind::Float : ParamKind::Int;
  static ir::Type type() { return ir::Type{ir::DType{T::scalar, false}, {}}; }
};

template <class P>
concept KernelParam = requires { ParamTraits<std::remove_cvref_t<P>>::kind; };

template <class P>
concept MetaParam = std::is_same_v<std::remove_cvref_t<P>, Meta>;

}  // namespace tessel::lang
