// Shared helpers for the pass tests: tiny kernels built with the Builder, and result lookups.
#pragma once
#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>

#include "tessel/ir/builder.hpp"
#include "tessel/ir/passes.hpp"
#include "tessel/ir/printer.hpp"

namespace passtest {

using namespace tessel::ir;

inline DType dt(Scalar s) { return DType{s, false}; }
inline Type scalar_t(Scalar s) { return Type{dt(s), {}}; }
inline Type tile_t(Scalar s, Shape shape) { return Type{dt(s), std::move(shape)}; }

// A kernel under construction. `sink(v)` stores v through a fresh pointer parameter, which
// keeps v alive and gives the test a handle (the store) to find v's replacement after a pass.
struct Kernel {
  Function f{"k"};
  Builder b{f};
  int outs = 0;

  Value* param(const std::string& name, Type t) { return f.add_param(name, std::move(t)); }

  Op& sink(Value* v) {
    Value* p = f.add_param("out" + std::to_string(outs++), Type{v->type.dtype.pointer_to(), {}});
    if (!v->type.is_scalar()) p = b.splat(p, v->type.shape);
    return b.create(OpKind::Store, {p, v});
  }

  Value* c_int(int64_t v, Scalar s, Shape shape = {}) { return b.const_int(v, Type{dt(s), std::move(shape)}); }
  Value* c_float(double v, Scalar s, Shape shape = {}) { return b.const_float(v, Type{dt(s), std::move(shape)}); }
  Value* op(OpKind k, std::vector<Value*> xs) { return b.value(k, std::move(xs)); }

  std::string text() const { return print(f); }
};

inline Value* stored(const Op& store) { return store.operands.at(1); }

inline const Op* constant_of(const Value* v) {
  return v->def && v->def->kind == OpKind::Constant ? v->def : nullptr;
}

// The integer a value folded to, or nullopt when it is not an integer constant.
inline std::optional<int64_t> folded_int(const Value* v) {
  const Op* c = constant_of(v);
  if (!c) return std::nullopt;
  const Attr* a = c->find_attr("value");
  if (!a || !std::holds_alternative<int64_t>(a->value)) return std::nullopt;
  return std::get<int64_t>(a->value);
}

inline std::optional<double> folded_float(const Value* v) {
  const Op* c = constant_of(v);
  if (!c) return std::nullopt;
  const Attr* a = c->find_attr("value");
  if (!a || !std::holds_alternative<double>(a->value)) return std::nullopt;
  return std::get<double>(a->value);
}

// Builds `k(a, b)` over two constants, canonicalizes, and returns what the result became.
inline std::optional<int64_t> fold_int_binary(OpKind k, Scalar s, int64_t a, int64_t b) {
  Kernel kn;
  Op& st = kn.sink(kn.op(k, {kn.c_int(a, s), kn.c_int(b, s)}));
  canonicalize(kn.f);
  return folded_int(stored(st));
}

inline std::optional<double> fold_float_binary(OpKind k, Scalar s, double a, double b) {
  Kernel kn;
  Op& st = kn.sink(kn.op(k, {kn.c_float(a, s), kn.c_float(b, s)}));
  canonicalize(kn.f);
  return folded_float(stored(st));
}

inline std::mt19937_64& rng() {
  static std::mt19937_64 r(0x7e55e1u);  // fixed: failures reproduce
  return r;
}

// A random non-zero integer spanning the whole signed range of `bits` bits.
inline int64_t random_int(int bits) {
  uint64_t u = rng()();
  int64_t v = bits >= 64 ? static_cast<int64_t>(u) : static_cast<int64_t>(u >> (64 - bits)) - (int64_t{1} << (bits - 1));
  return v == 0 ? 1 : v;
}

}  // namespace passtest
