// hint (multiple_of / max_contiguous): the identity, after checking the promise against the data.
//
// The compiler reads a multiple_of claim at the starts of the contiguous runs it knows of, which
// are never finer than the runs actually present in the data; so the check finds the data's
// runs along each dim and tests divisibility at their starts. A promise broken only at positions
// the compiler would trust but the data's runs hide is not caught (the check is best effort).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string>

#include "machine.hpp"
#include "tessel/ir/accessors.hpp"

namespace tessel::interp {
namespace {

// Lowest set bit of k (k > 0): the largest power of two dividing it.
int64_t low_bit(int64_t k) { return k & -k; }

std::string index_str(const ir::Shape& shape, int64_t flat) {
  if (shape.empty()) return "the scalar";
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return fmt::format("element [{}]", fmt::join(idx, ", "));
}

class HintCheck {
 public:
  HintCheck(Machine& m, const ir::Op& op, const std::vector<int64_t>& vals)
      : m_(m), op_(op), t_(op.operand(0)->type), v_(vals) {
    step_ = t_.dtype.ptr ? t_.dtype.pointee().bytes() : 1;
    width_ = t_.dtype.ptr ? 64 : ir::bit_width(t_.dtype.scalar);
  }

  void dim(int d, int64_t mult, int64_t contig) {
    const int64_t size = t_.is_scalar() ? 1 : t_.shape[d];
    int64_t stride = 1;
    for (int e = d + 1; e < t_.rank(); ++e) stride *= t_.shape[e];
    // The data's runs along d: aligned groups of `runs` elements holding consecutive values.
    int64_t runs = size, broken = -1;
    for (int64_t k = 0; k < static_cast<int64_t>(v_.size()); ++k) {
      const int64_t i = (k / stride) % size;
      if (i == 0 || consecutive(v_[k - stride], v_[k])) continue;
      if (low_bit(i) < runs) runs = low_bit(i), broken = k;
    }
    if (contig > runs)
      m_.fail(op_, fmt::format("max_contiguous({}) along dim {} does not hold: {} is {} but the element before it "
                               "along that dim is {} (runs of {} consecutive values at most)",
                               contig, d, index_str(t_.shape, broken), shown(v_[broken]), shown(v_[broken - stride]),
                               runs));
    if (mult <= 1) return;
    for (int64_t k = 0; k < static_cast<int64_t>(v_.size()); ++k) {
      if (((k / stride) % size) % runs != 0) continue;
      if ((static_cast<uint64_t>(v_[k]) & static_cast<uint64_t>(mult - 1)) != 0)
        m_.fail(op_, fmt::format("multiple_of({}) along dim {} does not hold: {} is {}{}", mult, d,
                                 index_str(t_.shape, k), shown(v_[k]),
                                 t_.dtype.ptr ? " (pointers: the address in bytes)" : ""));
    }
  }

 private:
  bool consecutive(int64_t a, int64_t b) const {
    if (t_.dtype.ptr) return static_cast<uint64_t>(b) == static_cast<uint64_t>(a) + static_cast<uint64_t>(step_);
    return b == wrap_to(static_cast<int64_t>(static_cast<uint64_t>(a) + 1), t_.dtype.scalar);
  }
  std::string shown(int64_t v) const {
    return t_.dtype.ptr ? fmt::format("0x{:x}", static_cast<uint64_t>(v)) : std::to_string(v);
  }

  Machine& m_;
  const ir::Op& op_;
  const ir::Type& t_;
  const std::vector<int64_t>& v_;
  int64_t step_ = 1;
  int width_ = 64;
};

}  // namespace

void exec_hint(Machine& m, const ir::Op& op) {
  const ir::Value* r = op.result();
  if (op.operand(0)->type != r->type || holds_floats(r->type.dtype))
    m.malformed(op, fmt::format("hint of {} to {}", op.operand(0)->type.str(), r->type.str()));
  const std::vector<int64_t>& in = m.in(op, 0).i;
  ir::HintOp h{op};
  const std::vector<int64_t> mult = h.multiple_of(), contig = h.max_contiguous();
  const int dims = r->type.is_scalar() ? 1 : r->type.rank();
  HintCheck check(m, op, in);
  for (int d = 0; d < dims; ++d)
    check.dim(d, d < static_cast<int>(mult.size()) ? mult[d] : 1,
              d < static_cast<int>(contig.size()) ? contig[d] : 1);
  m.out(r).i = in;
}

}  // namespace tessel::interp
