#include "plan/access.hpp"

#include <algorithm>

#include "tessel/ir/accessors.hpp"

namespace tessel::lowering {

int64_t access_vector_width(const AxisAnalysis& axis, const ir::Value* ptr, const ir::Value* mask, const Layout& l,
                            const ir::Shape& shape, int64_t elem_bytes) {
  const AxisInfo& pi = axis.at(ptr);
  const int fast = fastest_tile_dim(l);  // the dim along which a thread's registers are consecutive
  int64_t w = contiguous_per_thread(l, shape);
  w = std::min(w, pi.contiguity[fast]);
  w = std::min(w, std::max<int64_t>(1, pi.divisibility[fast] / elem_bytes));
  w = std::min(w, std::max<int64_t>(1, 16 / elem_bytes));
  if (mask && !mask->type.is_scalar()) w = std::min(w, axis.at(mask).constancy[fast]);
  return std::max<int64_t>(1, w);
}

bool copies_16_bytes(const AxisAnalysis& axis, const ir::Op& load, const Layout& l) {
  ir::LoadOp ld{load};
  const ir::Value* v = load.results[0];
  const int64_t eb = v->type.dtype.bytes();
  return access_vector_width(axis, ld.ptr(), ld.mask(), l, v->type.shape, eb) * eb == 16;
}

}  // namespace tessel::lowering
