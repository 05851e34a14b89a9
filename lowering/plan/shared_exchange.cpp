#include "plan/shared_exchange.hpp"

#include <algorithm>

#include "plan/access.hpp"
#include "tessel/ir/accessors.hpp"

namespace tessel::lowering {

ExchangeShape exchange_shape(const std::vector<int64_t>& channel_bytes, int64_t slots) {
  ExchangeShape out;
  for (int64_t cb : channel_bytes) {
    out.offset.push_back(out.bytes);
    out.bytes += (slots * cb + 15) / 16 * 16;
  }
  return out;
}

bool vector_convertible(const ir::Type& t) {
  using S = ir::Scalar;
  const ir::DType d = t.dtype;
  const int64_t eb = d.bytes();
  const bool type_ok =
      !d.ptr && (d.scalar == S::f16 || d.scalar == S::bf16 || d.scalar == S::f32 || d.scalar == S::i32 || d.scalar == S::u32);
  return type_ok && t.shape.size() == 2 && t.shape[1] * eb >= 128 && 16 % eb == 0;
}

int64_t padded_bytes(const ir::Shape& s, int64_t cols, int64_t elem_bytes) { return s[0] * (cols * elem_bytes + 16); }

int64_t chunk_columns(const ir::Shape& s, int64_t elem_bytes, const Layout& from, const Layout& to, int64_t budget) {
  if (padded_bytes(s, s[1], elem_bytes) <= budget) return s[1];
  const int64_t c = to.footprint(1), f = from.footprint(1);
  if (c >= s[1] || c * elem_bytes < 64 || c % f != 0 || s[1] % c != 0) return s[1];
  return c;
}

std::optional<Layout> vector_store_layout(const Layout& whole, const Layout& from, const ir::Shape& s,
                                          int64_t elem_bytes, int64_t budget) {
  if (padded_bytes(s, s[1], elem_bytes) <= budget) return whole;
  // Chunks of C columns: 16 bytes per thread along a row, C / (16 / eb) lanes across the
  // chunk, the rest of the warp and every warp down the rows; the widest chunk that fits.
  const int64_t vec = 16 / elem_bytes, warps = from.num_warps();
  for (int64_t C = s[1] / 2; C * elem_bytes >= 64; C /= 2) {
    const int64_t lanes = C / vec;
    if (lanes > 32 || 32 % lanes != 0 || padded_bytes(s, C, elem_bytes) > budget) continue;
    if (C % from.footprint(1) != 0 || (32 / lanes) * warps > s[0]) continue;
    return Layout{{1, static_cast<int>(vec)}, {static_cast<int>(32 / lanes), static_cast<int>(lanes)},
                  {static_cast<int>(warps), 1}, {1, 0}, {}};
  }
  return std::nullopt;
}

std::optional<Layout> wider_store_layout(const LayoutAssignment& layouts, const AxisAnalysis& axis,
                                         const ir::Op& store, const Layout& l, int64_t budget) {
  ir::StoreOp st{store};
  const ir::Type& t = st.ptr()->type;
  const ir::DType d = st.value()->type.dtype;
  const int64_t eb = d.bytes();
  using S = ir::Scalar;
  const bool convertible =
      !d.ptr && (d.scalar == S::f16 || d.scalar == S::bf16 || d.scalar == S::f32 || d.scalar == S::i32);
  if (t.rank() != 2 || !l.sliced.empty() || !convertible) return std::nullopt;
  const Layout& whole = layouts.default_for(t.shape);
  if (whole == l) return std::nullopt;
  std::optional<Layout> wide = vector_store_layout(whole, l, t.shape, eb, budget);
  if (!wide || *wide == l) return std::nullopt;
  if (access_vector_width(axis, store.operands[0], st.mask(), *wide, t.shape, eb) <=
      access_vector_width(axis, store.operands[0], st.mask(), l, t.shape, eb))
    return std::nullopt;
  return wide;
}

}  // namespace tessel::lowering
