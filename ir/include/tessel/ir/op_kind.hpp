// OpKind and the per-op static facts generated from ops.def.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace tessel::ir {

enum class OpKind : uint16_t {
#define TESSEL_OP(E, text, lo, hi, res, eff, rule) E,
#include "tessel/ir/ops.def"
#undef TESSEL_OP
};

enum class ResultRule : uint8_t { None, Explicit, SameAs0, SameAs1, BoolOf0, I32, F32Of1, PointeeOf0 };
enum class Effect : uint8_t { Pure, Reads, Writes, Loop, Terminator };
enum class Rule : uint8_t {
  Constant, Axis, Arange, Splat, Broadcast, ExpandDims, Cast, Arith, Bitwise, Compare,
  UnaryNumeric, UnaryInt, UnaryFloat, Fma, Select, AddPtr, Load, Store, Rand, For, Yield,
  Reduce, ArgReduce, ReduceRegion, Scan, Reshape, Trans, Atomic, Dot, Hint
};

struct OpInfo {
  OpKind kind;
  std::string_view name;
  int min_operands;
  int max_operands;  // -1: unbounded
  ResultRule result;
  Effect effect;
  Rule rule;
};

const OpInfo& info(OpKind k);
std::string_view name_of(OpKind k);
std::optional<OpKind> op_from_name(std::string_view name);
int num_op_kinds();

inline bool is_pure(OpKind k) { return info(k).effect == Effect::Pure; }

}  // namespace tessel::ir
