// reshape (row-major, same element count) and trans (2-D transpose).
//
// When every thread already holds the elements its result registers need, at register
// indices common to all threads (register_map), the op is a renaming of registers: no code.
// That is the case for reshapes that split or merge dims laid out alike (e.g. [4096] <->
// [1, 4096] or [4, 1024] in default layouts). Otherwise the tile goes through shared memory
// in the result's row-major order; a transpose pads each row so that the column-wise writes
// fall in distinct banks.
#include <algorithm>

#include "lowerer.hpp"
#include "plan/reduction_layout.hpp"

namespace tessel::lowering {

Regs lower_reshape(Lowerer& L, const ir::Op& op, const Layout* l) {
  auto& b = L.b;
  TESSEL_ASSERT(l != nullptr, std::string(op.name()) + " of a scalar");
  const ir::Value* x = op.operands[0];
  const ir::Shape& xs = x->type.shape;
  const ir::Shape& rs = op.results[0]->type.shape;
  if (op.kind != ir::OpKind::Trans && op.kind != ir::OpKind::Reshape)
    ir::unexpected_op(__FILE__, __LINE__, "lower_reshape", op.kind);
  const bool trans = op.kind == ir::OpKind::Trans;
  const Layout& src = L.layouts().of(x);
  const Regs in = L.tile(x, src);
  const int64_t n = num_regs(*l, rs);

  if (auto map = register_map(*l, rs, src, xs, trans ? transpose_map() : reshape_map(xs, rs))) {
    Regs out(n);
    for (int64_t k = 0; k < n; ++k) out[k] = in.at((*map)[k]);
    return out;
  }

  // Slot of result coordinates: row-major over the result, each row of the last dim padded.
  const int64_t last = rs.back();
  const int64_t pad = reshape_row_pad(trans, x->type.dtype);
  const int64_t rows = op.results[0]->type.numel() / last;
  auto slot_of = [&](llvm::Value* row, llvm::Value* col) {
    return b.CreateAdd(b.CreateMul(row, L.i32(last + pad)), col);
  };
  std::vector<SmemWrite> writes;
  for (int64_t k = 0; k < static_cast<int64_t>(in.size()); ++k) {
    if (!reg_is_owner(src, xs, k)) continue;
    llvm::Value* slot;
    if (trans) {
      std::vector<int64_t> rd = reg_dims(src, xs, k);
      // operand (a, c) is result (c, a)
      slot = slot_of(L.coord(src, xs, 1, rd[1]), L.coord(src, xs, 0, rd[0]));
    } else {
      llvm::Value* idx = L.linear_index(src, xs, k);
      slot = slot_of(b.CreateUDiv(idx, L.i32(last)), b.CreateURem(idx, L.i32(last)));
    }
    writes.push_back({slot, {in[k]}});
  }
  std::vector<llvm::Value*> reads;
  for (int64_t k = 0; k < n; ++k) {
    llvm::Value* idx = L.linear_index(*l, rs, k);
    reads.push_back(slot_of(b.CreateUDiv(idx, L.i32(last)), b.CreateURem(idx, L.i32(last))));
  }
  auto got = exchange_through_smem(L, {in.at(0)->getType()}, rows * (last + pad), writes, nullptr, reads);
  Regs out;
  for (auto& item : got) out.push_back(item[0]);
  return out;
}

}  // namespace tessel::lowering
