// OpKind and the per-op static facts generated from ops.def.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace tessel::ir {

enum class OpKind : uint16_t {
#define TESSEL_OP(E, text, lo, hi, res, eff, rule) E,
#include "tessel/ir/ops.def"
#undef TESSEL_OP
};

// An attribute an op declares in ops.def (TESSEL_ATTR).
enum class AttrType : uint8_t { Int, Float, Number };
enum class AttrPresence : uint8_t { Required, Optional, PerDim };
struct AttrDecl {
  OpKind kind;
  std::string_view name;  // for PerDim: the family, the attrs are "name.<d>"
  AttrType type;
  AttrPresence presence;
};

enum class ResultRule : uint8_t { None, Explicit, SameAs0, SameAs1, BoolOf0, I32, F32Of1, PointeeOf0 };
enum class Effect : uint8_t { Pure, Reads, Writes, Loop, Terminator };
enum class Rule : uint8_t {
  Constant, Axis, Arange, Splat, Broadcast, ExpandDims, Cast, Arith, Bitwise, Compare,
  UnaryNumeric, UnaryInt, UnaryFloat, Fma, Select, AddPtr, Load, Store, Rand, For, Yield,
  Reduce, ArgReduce, ReduceRegion, Scan, Reshape, Trans, Atomic, Dot, Hint, Bitcast, Unpack
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
// The attributes ops.def declares for `k`, in declaration order (empty: it takes none).
std::span<const AttrDecl> attrs_of(OpKind k);
// The declaration of `k`'s attribute `name` ("family.<d>" for a PerDim one), or null.
const AttrDecl* find_attr_decl(OpKind k, std::string_view name);

// For the kinds a switch over OpKind lists but does not handle (switches list every kind, with
// no `default:`, so that a kind added to ops.def is a -Wswitch warning at each one): throws
// InternalError "<where>: unexpected op '<name>'".
[[noreturn]] void unexpected_op(const char* file, int line, std::string_view where, OpKind k);

inline bool is_pure(OpKind k) { return info(k).effect == Effect::Pure; }

}  // namespace tessel::ir
