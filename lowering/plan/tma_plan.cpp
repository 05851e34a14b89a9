// TMA copies for warp-specialised rings: the affine analysis of a pipelined load (pointer
// tile, step, mask) that turns it into a tensor map plus per-trip box coordinates.
//
// A load `ptr` with mask `m` qualifies when, as polynomials over scalar values,
//   init pointer = P + iota0 * S + iota1 + B      (P a 16-aligned pointer parameter,
//                                                   S an integer parameter, 16-aligned)
//   step         = dr * S + dc                      (no iota: every element moves alike)
//   m            = AND of (iota_d + R_d < 0)         (one per dimension, R_d without iota)
// Splitting B = r0 * S + c0 gives the tile's first element at (row r0, column c0) of the 2-D
// tensor with row stride S; trip j reads (r0 + j dr, c0 + j dc). The mask bounds dimension d
// by coord_d - R_d, which must come out free of the induction variable and of everything
// but parameters: that is the tensor's extent, and TMA fills zeros past it exactly where the
// mask would. Everything else keeps cp.async.
#include "plan/tma_plan.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "tessel/ir/accessors.hpp"

namespace tessel::lowering {

namespace {

// The single atom of a polynomial `x` (coefficient 1), or null.
const ir::Value* single_atom(const Poly& p) {
  if (p.size() != 1) return nullptr;
  const auto& [m, c] = *p.begin();
  return c == 1 && m.iota < 0 && m.atoms.size() == 1 ? m.atoms[0] : nullptr;
}

// p = q * x + r, with q the terms that hold atom x (one factor removed).
std::pair<Poly, Poly> split_by(const Poly& p, const ir::Value* x) {
  Poly q, r;
  for (const auto& [m, c] : p) {
    auto it = std::find(m.atoms.begin(), m.atoms.end(), x);
    if (it == m.atoms.end()) {
      r[m] = c;
      continue;
    }
    Mono rest = m;
    rest.atoms.erase(rest.atoms.begin() + (it - m.atoms.begin()));
    q[rest] = c;
  }
  return {q, r};
}

// A polynomial over integer kernel parameters only, as the launch evaluates it.
std::optional<TensorMapPoly> over_params(const ir::Function& f, const Poly& p) {
  TensorMapPoly out;
  for (const auto& [m, c] : p) {
    TensorMapTerm t{c, {}};
    for (const ir::Value* a : m.atoms) {
      if (!a->is_block_arg() || a->block != &f.body) return std::nullopt;
      t.params.push_back(a->index);
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::optional<TmaOperand> plan_operand(const ir::Function& f, const ir::ForOp& loop, const PipelinedOperand& po,
                                       std::string& why) {
  auto no = [&](const char* reason) {
    why = reason;
    return std::nullopt;
  };
  ir::LoadOp ld{*po.load};
  const ir::Type& t = po.load->results[0]->type;
  if (t.rank() != 2) return no("the tile is not 2-d");
  TmaOperand out;
  if (t.dtype.scalar == ir::Scalar::f16) out.map.elem = TensorMapRecipe::Elem::F16;
  else if (t.dtype.scalar == ir::Scalar::bf16) out.map.elem = TensorMapRecipe::Elem::BF16;
  else return no("the element type is not f16 or bf16");
  if (const ir::Value* o = ld.other()) {
    if (!o->def || o->def->kind != ir::OpKind::Constant) return no("the load's `other` is not a constant zero");
    ir::ConstantOp c{*o->def};
    if (c.is_float() ? c.float_value() != 0.0 : c.int_value() != 0)
      return no("the load's `other` is not zero (TMA fills zeros)");
  }
  if (!ld.mask()) return no("the load has no mask (TMA takes the tensor's extent from it)");

  // The shared tile: column blocks of `w` bytes (one box wide); rows permuted in groups of
  // 8 for a wgmma A operand with warpgroups (boxes of 8 rows then).
  const SmemTile& st = po.tile;
  const int64_t eb = 2, w = st.block_bytes();
  if (!st.blocked || (w != 128 && w != 64 && w != 32) || st.row_bytes % w != 0 || st.rows != t.shape[0] ||
      st.row_bytes != t.shape[1] * eb)
    return no("the staged tile's layout is not one TMA boxes can fill");
  out.map.swizzle_bytes = static_cast<int>(w);
  out.map.box_cols = static_cast<int>(w / eb);
  out.map.box_rows = static_cast<int>(st.warpgroups > 0 ? 8 : st.rows);
  if (out.map.box_rows > 256 || st.rows % out.map.box_rows != 0) return no("the staged tile's rows do not split into boxes of at most 256");

  if (po.from_iv()) return no("the pointers are computed from the loop index (not carried and stepped)");
  Affine aff(f, loop);
  auto ptr = aff.pointer(loop.init(po.carried));
  auto step = aff.of(po.step);
  if (!ptr || !step || has_iota(*step))
    return no("the pointer or its step is not affine in the kernel's values, or the step differs by element");
  const auto& [base, off] = *ptr;
  if (!f.params.at(base).spec.div16) return no("the base pointer is not known to be 16-byte aligned");
  out.map.base_param = base;
  // Columns contiguous, rows `stride` apart, nothing else along the tile's dimensions.
  for (const auto& [m, c] : off)
    if (m.iota > 1) return no("the offsets are not row * stride + column");
  if (part(off, 1) != constant(1)) return no("the columns are not contiguous");
  const ir::Value* stride = single_atom(part(off, 0));
  if (!stride || !stride->is_block_arg() || stride->block != &f.body ||
      !f.params.at(stride->index).spec.div16)
    return no("the row stride is not a 16-byte aligned integer parameter");
  out.map.row_stride = {TensorMapTerm{1, {stride->index}}};
  auto [r0, c0] = split_by(part(off, -1), stride);
  auto [dr, dc] = split_by(*step, stride);

  // Trip j = (iv - lo) / s: coordinates as polynomials in iv (s must divide the steps).
  const ir::Value* sv = loop.step();
  if (!sv->def || sv->def->kind != ir::OpKind::Constant) return no("the loop's step is not a constant");
  const int64_t s = ir::ConstantOp{*sv->def}.int_value();
  auto lo = aff.of(loop.lo());
  if (s <= 0 || !lo) return no("the loop's step is not positive or its start is not affine");
  auto per_iv = [&](const Poly& d) -> std::optional<Poly> {
    Poly q;
    for (const auto& [m, c] : d) {
      if (c % s != 0) return std::nullopt;
      q[m] = c / s;
    }
    return mul(add(atom(loop.induction_var()), *lo, -1), q);
  };
  auto drow = per_iv(dr), dcol = per_iv(dc);
  if (!drow || !dcol) return no("the pointer's step is not a multiple of the loop's step");
  out.row = add(r0, *drow);
  out.col = add(c0, *dcol);
  out.iv = loop.induction_var();
  // The producer evaluates the coordinates before the trip's body: from values computed
  // outside the loop and the induction variable only.
  for (const Poly* c : {&out.row, &out.col})
    for (const auto& [m, k] : *c)
      for (const ir::Value* a : m.atoms)
        if (a != out.iv && a->block && a->block->is_within(&loop.body()))
          return no("the box coordinates depend on values computed inside the loop");

  // The mask: one upper bound per dimension, each a parameter expression.
  std::vector<std::pair<int, Poly>> conj;
  if (!aff.bounds(ld.mask(), conj)) return no("the mask is not one upper bound per dimension");
  std::optional<TensorMapPoly> extent[2];
  for (const auto& [dim, r] : conj) {
    if (dim > 1 || extent[dim]) return no("the mask bounds a dimension twice or a third dimension");
    extent[dim] = over_params(f, add(dim == 0 ? out.row : out.col, r, -1));
    if (!extent[dim])
      return no("the mask's bound is not a tensor extent over integer parameters only (e.g. an offset that "
                "depends on the program id)");
  }
  if (!extent[0] || !extent[1]) return no("the mask does not bound both dimensions");
  out.map.rows = *extent[0];
  out.map.cols = *extent[1];
  if (st.warpgroups > 0 && view_fits(st.warpgroups, static_cast<int>(st.rows))) {
    out.view = out.map;
    out.view.view = row_permuted_view(st.warpgroups, static_cast<int>(st.rows));
    out.view.box_rows = static_cast<int>(st.rows);
  }
  return out;
}

}  // namespace

std::optional<std::vector<TmaOperand>> plan_tma(const ir::Function& f, const ir::Op& op, const PipelinePlan& p,
                                                std::string& why) {
  ir::ForOp loop{op};
  std::vector<TmaOperand> out;
  for (size_t i = 0; i < p.operands.size(); ++i) {
    const PipelinedOperand& po = p.operands[i];
    std::string reason;
    auto t = plan_operand(f, loop, po, reason);
    if (!t) {  // named as the pipeline plan's reasons name loads
      why = fmt::format("operand {} (the load at line {}): {}", i == 0 ? "a" : "b", po.load->loc.line, reason);
      return std::nullopt;
    }
    t->multicast = po.load->has_attr("multicast");
    out.push_back(std::move(*t));
  }
  return out;
}

std::vector<Box> stage_boxes(const PipelinePlan& p, const std::vector<TmaOperand>& ops, bool views) {
  std::vector<Box> boxes;
  for (size_t o = 0; o < ops.size(); ++o) {
    const SmemTile& st = p.operands[o].tile;
    const bool view = views && ops[o].view_index >= 0;
    const int64_t w = st.block_bytes(), rows = view ? st.rows : ops[o].map.box_rows;
    for (int64_t blk = 0; blk < st.row_bytes / w; ++blk)
      for (int64_t r = 0; r < st.rows; r += rows)
        boxes.push_back({o, p.operands[o].offset + st.offset(r, blk * w), blk * ops[o].map.box_cols, r, rows * w, view});
  }
  return boxes;
}

bool has_view(const std::vector<TmaOperand>& ops) {
  return std::any_of(ops.begin(), ops.end(), [](const TmaOperand& t) { return t.view_index >= 0; });
}

int tma_issuers(const PipelinePlan& p, const std::vector<TmaOperand>& ops, int producer_warps) {
  size_t n = stage_boxes(p, ops, false).size();
  if (has_view(ops)) n = std::min(n, stage_boxes(p, ops, true).size());
  return static_cast<int>(std::min<size_t>(n, static_cast<size_t>(producer_warps)));
}

}  // namespace tessel::lowering
