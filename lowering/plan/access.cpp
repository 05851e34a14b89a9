#include "plan/access.hpp"

#include <algorithm>

#include "tessel/ir/accessors.hpp"

namespace tessel::lowering {

AccessLimits access_limits(const AxisAnalysis& axis, const ir::Value* ptr, const ir::Value* mask, const Layout& l,
                           const ir::Shape& shape, int64_t elem_bytes) {
  const AxisInfo& pi = axis.at(ptr);
  AccessLimits a;
  a.fast = fastest_tile_dim(l);  // the dim along which a thread's registers are consecutive
  a.run = contiguous_per_thread(l, shape);
  a.contiguity = pi.contiguity[a.fast];
  a.alignment = std::max<int64_t>(1, pi.divisibility[a.fast] / elem_bytes);
  a.mask = mask && !mask->type.is_scalar() ? axis.at(mask).constancy[a.fast] : a.run;
  return a;
}

int64_t access_vector_width(const AxisAnalysis& axis, const ir::Value* ptr, const ir::Value* mask, const Layout& l,
                            const ir::Shape& shape, int64_t elem_bytes) {
  const AccessLimits a = access_limits(axis, ptr, mask, l, shape, elem_bytes);
  const int64_t w = std::min({a.run, a.contiguity, a.alignment, a.mask, std::max<int64_t>(1, 16 / elem_bytes)});
  return std::max<int64_t>(1, w);
}

bool copies_16_bytes(const AxisAnalysis& axis, const ir::Op& load, const Layout& l) {
  ir::LoadOp ld{load};
  const ir::Value* v = load.results[0];
  const int64_t eb = v->type.dtype.bytes();
  return access_vector_width(axis, ld.ptr(), ld.mask(), l, v->type.shape, eb) * eb == 16;
}

}  // namespace tessel::lowering
