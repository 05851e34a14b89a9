// Ops on bit patterns: bitcast (the same bits as another type) and unpack (bit fields of
// words as elements).
#include <fmt/format.h>

#include "machine.hpp"
#include "tessel/interp/float_formats.hpp"

namespace tessel::interp {
namespace {

// Element k's bits, zero-extended, under dtype d (floats through their format).
uint64_t bits_of(const Tile& t, const ir::DType& d, size_t k) {
  const int w = ir::bit_width(d.scalar);
  const uint64_t mask = w == 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
  if (d.is_float()) return float_bits(t.f[k], d.scalar) & mask;
  return static_cast<uint64_t>(t.i[k]) & mask;
}

void bitcast(Machine& m, const ir::Op& op) {
  const ir::DType from = op.operand(0)->type.dtype, to = op.result()->type.dtype;
  require_same_numel(m, op, op.result()->type.numel());
  if (from.ptr || to.ptr || ir::bit_width(from.scalar) != ir::bit_width(to.scalar))
    m.malformed(op, fmt::format("cannot bitcast {} to {}", from.str(), to.str()));
  const Tile& s = m.in(op, 0);
  Tile& d = m.out(op.result());
  const size_t n = static_cast<size_t>(op.result()->type.numel());
  for (size_t k = 0; k < n; ++k) {
    const uint64_t b = bits_of(s, from, k);
    if (to.is_float()) d.f[k] = float_from_bits(b, to.scalar);
    else d.i[k] = wrap_to(static_cast<int64_t>(b), to.scalar);
  }
}

void unpack(Machine& m, const ir::Op& op) {
  const ir::Type& x = op.operand(0)->type;
  const ir::Type& r = op.result()->type;
  const int64_t axis = m.int_attr(op, "axis"), bits = m.int_attr(op, "bits");
  const int w = ir::bit_width(x.dtype.scalar);
  if (!x.dtype.is_unsigned() || axis < 0 || axis >= x.rank() || bits <= 0 || bits >= w || w % bits != 0)
    m.malformed(op, fmt::format("cannot unpack {}-bit fields of {} along {}", bits, x.str(), axis));
  const int64_t count = w / bits;
  int64_t inner = 1;
  for (int d = static_cast<int>(axis) + 1; d < x.rank(); ++d) inner *= x.shape[d];
  const int64_t len = x.shape[axis], outer = x.numel() / (len * inner);
  if (r.numel() != x.numel() * count) m.malformed(op, fmt::format("result {} for {}", r.str(), x.str()));
  const Tile& s = m.in(op, 0);
  Tile& d = m.out(op.result());
  const uint64_t field = (uint64_t{1} << bits) - 1;
  const int64_t zero = op.has_attr("zero") ? m.int_attr(op, "zero") : 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t a = 0; a < len; ++a)
      for (int64_t i = 0; i < inner; ++i) {
        const uint64_t word = static_cast<uint64_t>(s.i[(o * len + a) * inner + i]);
        for (int64_t j = 0; j < count; ++j) {
          const int64_t v = static_cast<int64_t>((word >> (j * bits)) & field) - zero;
          const size_t at = static_cast<size_t>((o * len * count + a * count + j) * inner + i);
          if (r.dtype.is_float()) d.f[at] = int_to_float(v, r.dtype.scalar);
          else d.i[at] = wrap_to(v, r.dtype.scalar);
        }
      }
}

}  // namespace

void exec_bits(Machine& m, const ir::Op& op) {
  if (op.kind == ir::OpKind::Bitcast) return bitcast(m, op);
  if (op.kind == ir::OpKind::Unpack) return unpack(m, op);
  ir::unexpected_op(__FILE__, __LINE__, "exec_bits", op.kind);
}

}  // namespace tessel::interp
