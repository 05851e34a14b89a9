// Typed views over the uniform Op node for ops whose operands have roles.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "tessel/ir/ir.hpp"

namespace tessel::ir {

// load %ptr [, %mask [, %other]]
struct LoadOp {
  const Op& op;
  Value* ptr() const { return op.operands[0]; }
  Value* mask() const { return op.operands.size() > 1 ? op.operands[1] : nullptr; }
  Value* other() const { return op.operands.size() > 2 ? op.operands[2] : nullptr; }
};

// store %ptr, %value [, %mask]
struct StoreOp {
  const Op& op;
  Value* ptr() const { return op.operands[0]; }
  Value* value() const { return op.operands[1]; }
  Value* mask() const { return op.operands.size() > 2 ? op.operands[2] : nullptr; }
};

// for %lo, %hi, %step, %init... ; body args: (%iv, %carried...); results: final carried values
struct ForOp {
  const Op& op;
  Value* lo() const { return op.operands[0]; }
  Value* hi() const { return op.operands[1]; }
  Value* step() const { return op.operands[2]; }
  int num_carried() const { return static_cast<int>(op.operands.size()) - 3; }
  Value* init(int i) const { return op.operands[3 + i]; }
  Block& body() const { return *op.regions[0]; }
  Value* induction_var() const { return body().args[0]; }
  Value* carried(int i) const { return body().args[1 + i]; }
  Op& yield() const { return *body().terminator(); }
};

// constant {value = N} : type  (a scalar, or a tile filled with the value)
struct ConstantOp {
  const Op& op;
  bool is_float() const { return std::holds_alternative<double>(op.find_attr("value")->value); }
  int64_t int_value() const { return op.int_attr("value"); }
  double float_value() const { return op.float_attr("value"); }
};

// arange {start = a, end = b} : i32[b - a]
struct ArangeOp {
  const Op& op;
  int64_t start() const { return op.int_attr("start"); }
  int64_t end() const { return op.int_attr("end"); }
};

// The attr holding a hint family's entry for dim d: "multiple_of.0", "max_contiguous.1", ...
inline std::string hint_attr_name(std::string_view family, int dim) {
  return std::string(family) + "." + std::to_string(dim);
}

// hint %x {max_contiguous.<d> = c, multiple_of.<d> = n, ...} : type(x)  (see ops.def)
struct HintOp {
  const Op& op;
  // One entry per dim (max(rank, 1) of them) for each family present; empty when absent.
  std::vector<int64_t> multiple_of() const { return family("multiple_of"); }
  std::vector<int64_t> max_contiguous() const { return family("max_contiguous"); }
  std::vector<int64_t> family(std::string_view name) const {
    std::vector<int64_t> out;
    for (int d = 0;; ++d) {
      const Attr* a = op.find_attr(hint_attr_name(name, d));
      if (!a || !std::holds_alternative<int64_t>(a->value)) return out;
      out.push_back(std::get<int64_t>(a->value));
    }
  }
};

// exp, exp2, log, log2, rsqrt, sin, cos, tanh, sigmoid, erf {precise = 1}: computed to within a
// few ulp (libdevice on the GPU) instead of by the GPU's approximate instructions (lang::Precision).
// Absent means approximate, so kernels without it print and key as before.
inline constexpr std::string_view kPreciseAttr = "precise";
// The ops that declare it in ops.def.
inline bool has_precise_form(OpKind k) { return find_attr_decl(k, kPreciseAttr) != nullptr; }
inline bool is_precise(const Op& op) {
  const Attr* a = op.find_attr(kPreciseAttr);
  return a != nullptr && std::holds_alternative<int64_t>(a->value) && std::get<int64_t>(a->value) == 1;
}

}  // namespace tessel::ir
