// Axis analysis: per value and per dim, contiguity, divisibility and constancy (Triton's AxisInfo).
//
// Along tile dim d, split the tile into aligned groups (positions [k*g, (k+1)*g)):
//  - contiguity c: in every aligned group of c elements the values are v, v+1, ..., v+c-1
//    (for pointers: consecutive elements in memory);
//  - divisibility D: the value at every position that is a multiple of c is divisible by D
//    (for pointers: the address in bytes). With c == 1 that is every element;
//  - constancy k: every aligned group of k elements holds one value.
// All three are powers of two; c and k divide the dim's size. Scalars have one entry.
// The lowering reads the vector width of loads and stores off these: width <= contiguity of
// the pointer, (divisibility in bytes) / (element bytes), and the mask's constancy.
// Loop-carried values hold what both their init and every trip's yield guarantee.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessel/ir/ir.hpp"

namespace tessel::lowering {

inline constexpr int64_t kMaxDivisibility = int64_t{1} << 30;  // "divisible by anything" (zero)

struct AxisInfo {
  std::vector<int64_t> contiguity;
  std::vector<int64_t> divisibility;
  std::vector<int64_t> constancy;
  std::optional<int64_t> constant;  // the integer value, when known at compile time

  int dims() const { return static_cast<int>(contiguity.size()); }
  // Nothing known: contiguity, divisibility and constancy 1 along each of max(rank, 1) dims.
  static AxisInfo unknown(int rank);
  std::string str() const;  // "{contig=[1,4], div=[16,16], const=[64,1]}"
  friend bool operator==(const AxisInfo&, const AxisInfo&) = default;
};

// The largest power of two dividing v (kMaxDivisibility for 0), capped at kMaxDivisibility.
int64_t pow2_divisor(int64_t v);

// The transfer function of one op (one result): its result's AxisInfo from its operands'.
// `in[i]` is the info of operand i. For loops see AxisAnalysis.
AxisInfo axis_transfer(const ir::Op& op, const std::vector<const AxisInfo*>& in);

class AxisAnalysis {
 public:
  explicit AxisAnalysis(const ir::Function& f);
  const AxisInfo& at(const ir::Value* v) const;

 private:
  void block(const ir::Block& b);
  void loop(const ir::Op& op);  // a For op: carried values to a fixed point
  std::vector<AxisInfo> info_;  // by Value::id
};

}  // namespace tessel::lowering
