// Blocked/slice layout math: element <-> (register, lane, warp), ownership, defaults.
#include "plan/layout.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "tessel/ir/error.hpp"
#include "tessel/lowering/target.hpp"

namespace tessel::lowering {
namespace {

bool is_pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

void check_shape(const Layout& l, const ir::Shape& shape) {
  TESSEL_ASSERT(static_cast<int>(shape.size()) == l.rank(),
                fmt::format("shape {} does not have the rank of layout {}", ir::shape_str(shape), l.str()));
  for (int64_t s : shape) TESSEL_ASSERT(is_pow2(s), "tile dims must be powers of two: " + ir::shape_str(shape));
}

// Tile dims in register order: order[] restricted to the dims present in the tile.
std::vector<int> tile_dims_fastest_first(const Layout& l) {
  std::vector<int> out;
  for (int p : l.order) {
    if (l.is_sliced(p)) continue;
    int d = 0;
    for (int q = 0; q < p; ++q) d += l.is_sliced(q) ? 0 : 1;
    out.push_back(d);
  }
  return out;
}

int64_t stride_in_order(const std::vector<int>& order, const std::vector<int>& extent, int dim) {
  int64_t s = 1;
  for (int p : order) {
    if (p == dim) return s;
    s *= extent[p];
  }
  return s;
}

}  // namespace

bool Layout::is_sliced(int p) const { return std::find(sliced.begin(), sliced.end(), p) != sliced.end(); }

int Layout::parent_dim(int tile_dim) const {
  int d = -1;
  for (int p = 0; p < parent_rank(); ++p) {
    if (is_sliced(p)) continue;
    if (++d == tile_dim) return p;
  }
  internal_error(__FILE__, __LINE__, fmt::format("tile dim {} out of range for {}", tile_dim, str()));
}

int Layout::num_warps() const {
  int n = 1;
  for (int w : warps_per_cta) n *= w;
  return n;
}

int64_t Layout::footprint(int p) const {
  return int64_t{size_per_thread[p]} * threads_per_warp[p] * warps_per_cta[p];
}

std::string Layout::str() const {
  std::string s = fmt::format("blocked{{spt=[{}], tpw=[{}], wpc=[{}], order=[{}]}}",
                              fmt::join(size_per_thread, ","), fmt::join(threads_per_warp, ","),
                              fmt::join(warps_per_cta, ","), fmt::join(order, ","));
  if (!sliced.empty()) s += fmt::format(" sliced=[{}]", fmt::join(sliced, ","));
  return s;
}

namespace {

// default_layout and layout_along: `fast_dim` first in the order, then the rest from the last down.
Layout blocked_layout(const ir::Shape& shape, int elem_bytes, int num_warps, int reduced_dim, int fast_dim,
                      bool spread = true) {
  const int r = static_cast<int>(shape.size());
  TESSEL_ASSERT(r >= 1, "scalars have no layout");
  TESSEL_ASSERT(is_pow2(num_warps) && num_warps <= 32, "num_warps must be a power of two <= 32");
  int64_t numel = 1;
  for (int64_t s : shape) {
    TESSEL_ASSERT(is_pow2(s), "tile dims must be powers of two: " + ir::shape_str(shape));
    numel *= s;
  }
  Layout l;
  l.size_per_thread.assign(r, 1);
  l.threads_per_warp.assign(r, 1);
  l.warps_per_cta.assign(r, 1);
  l.order.push_back(fast_dim);
  for (int d = r - 1; d >= 0; --d)
    if (d != fast_dim) l.order.push_back(d);

  const int64_t vec = std::max(1, 16 / std::max(1, elem_bytes));
  // spread: no thread holds more than its share of a small tile (16-byte runs only when there
  // are enough elements for every thread).
  const int64_t per_thread = spread ? std::max<int64_t>(1, numel / (int64_t{kWarpSize} * num_warps)) : vec;
  l.size_per_thread[fast_dim] = static_cast<int>(std::min({vec, shape[fast_dim], per_thread}));

  int lanes = kWarpSize;
  for (int d : l.order) {
    int64_t room = std::max<int64_t>(1, shape[d] / l.size_per_thread[d]);
    int t = static_cast<int>(std::min<int64_t>(lanes, room));
    l.threads_per_warp[d] = t;
    lanes /= t;
  }
  l.threads_per_warp[l.order.back()] *= lanes;

  int warps = num_warps;
  auto place = [&](int d) {
    int64_t room = std::max<int64_t>(1, shape[d] / (int64_t{l.size_per_thread[d]} * l.threads_per_warp[d]));
    int w = static_cast<int>(std::min<int64_t>(warps, room));
    l.warps_per_cta[d] = w;
    warps /= w;
  };
  for (int d : l.order)
    if (d != reduced_dim) place(d);
  if (reduced_dim >= 0 && reduced_dim < r) place(reduced_dim);
  l.warps_per_cta[l.order.back()] *= warps;
  return l;
}

}  // namespace

Layout default_layout(const ir::Shape& shape, int elem_bytes, int num_warps, int reduced_dim) {
  TESSEL_ASSERT(!shape.empty(), "scalars have no layout");
  return blocked_layout(shape, elem_bytes, num_warps, reduced_dim, static_cast<int>(shape.size()) - 1);
}

Layout copy_layout(const ir::Shape& shape, int elem_bytes, int num_warps) {
  TESSEL_ASSERT(!shape.empty(), "scalars have no layout");
  return blocked_layout(shape, elem_bytes, num_warps, -1, static_cast<int>(shape.size()) - 1, false);
}

Layout layout_along(const ir::Shape& shape, int elem_bytes, int num_warps, int fast_dim) {
  TESSEL_ASSERT(fast_dim >= 0 && fast_dim < static_cast<int>(shape.size()), "layout_along: dim out of range");
  return blocked_layout(shape, elem_bytes, num_warps, -1, fast_dim);
}

Layout unpack_result_layout(const Layout& words, int tile_dim, int count) {
  Layout r = words;
  r.size_per_thread[words.parent_dim(tile_dim)] *= count;
  return r;
}

bool is_lane_split_unpack(const Layout& l, int tile_dim, int count) {
  const int p = l.parent_dim(tile_dim);
  const int s = l.size_per_thread[p], t = l.threads_per_warp[p];
  return s < count && count % s == 0 && s * t == count && l.warps_per_cta[p] == 1;
}

std::optional<Layout> unpack_operand_layout(const Layout& l, int tile_dim, int count, int64_t extent) {
  const int p = l.parent_dim(tile_dim);
  Layout w = l;
  if (l.size_per_thread[p] % count == 0) {
    w.size_per_thread[p] /= count;
    return w;
  }
  if (!is_lane_split_unpack(l, tile_dim, count) || extent % count != 0) return std::nullopt;
  w.size_per_thread[p] = static_cast<int>(extent / count);
  return w;
}

Layout slice_layout(const Layout& l, int tile_dim) {
  Layout s = l;
  s.sliced.push_back(l.parent_dim(tile_dim));
  std::sort(s.sliced.begin(), s.sliced.end());
  return s;
}

int64_t regs_along(const Layout& l, const ir::Shape& shape, int d) {
  int p = l.parent_dim(d);
  return l.size_per_thread[p] * std::max<int64_t>(1, shape[d] / l.footprint(p));
}

int64_t num_regs(const Layout& l, const ir::Shape& shape) {
  check_shape(l, shape);
  int64_t n = 1;
  for (int d = 0; d < l.rank(); ++d) n *= regs_along(l, shape, d);
  return n;
}

int64_t reg_stride(const Layout& l, const ir::Shape& shape, int tile_dim) {
  int64_t s = 1;
  for (int d : tile_dims_fastest_first(l)) {
    if (d == tile_dim) return s;
    s *= regs_along(l, shape, d);
  }
  internal_error(__FILE__, __LINE__, "tile dim out of range");
}

std::vector<int64_t> reg_dims(const Layout& l, const ir::Shape& shape, int64_t reg) {
  std::vector<int64_t> r(l.rank(), 0);
  for (int d : tile_dims_fastest_first(l)) {
    int64_t n = regs_along(l, shape, d);
    r[d] = reg % n;
    reg /= n;
  }
  return r;
}

int64_t reg_index(const Layout& l, const ir::Shape& shape, const std::vector<int64_t>& rdims) {
  int64_t reg = 0;
  for (int d = 0; d < l.rank(); ++d) reg += rdims[d] * reg_stride(l, shape, d);
  return reg;
}

int lane_coord(const Layout& l, int lane, int p) {
  return static_cast<int>(lane / stride_in_order(l.order, l.threads_per_warp, p)) % l.threads_per_warp[p];
}

int warp_coord(const Layout& l, int warp, int p) {
  return static_cast<int>(warp / stride_in_order(l.order, l.warps_per_cta, p)) % l.warps_per_cta[p];
}

int lane_stride(const Layout& l, int p) {
  return static_cast<int>(stride_in_order(l.order, l.threads_per_warp, p));
}

int warp_stride(const Layout& l, int p) { return static_cast<int>(stride_in_order(l.order, l.warps_per_cta, p)); }

int thread_coord(const Layout& l, int lane, int warp, int p) {
  return warp_coord(l, warp, p) * l.threads_per_warp[p] + lane_coord(l, lane, p);
}

int64_t reg_offset(const Layout& l, const ir::Shape& shape, int d, int64_t r_d) {
  int p = l.parent_dim(d);
  int64_t spt = l.size_per_thread[p];
  return (r_d / spt) * l.footprint(p) + r_d % spt;
}

std::vector<int64_t> element_of(const Layout& l, const ir::Shape& shape, ThreadPos pos) {
  check_shape(l, shape);
  std::vector<int64_t> r = reg_dims(l, shape, pos.reg);
  std::vector<int64_t> c(l.rank());
  for (int d = 0; d < l.rank(); ++d) {
    int p = l.parent_dim(d);
    int64_t t = thread_coord(l, pos.lane, pos.warp, p);
    c[d] = (reg_offset(l, shape, d, r[d]) + t * l.size_per_thread[p]) & (shape[d] - 1);
  }
  return c;
}

bool reg_is_owner(const Layout& l, const ir::Shape& shape, int64_t reg) {
  std::vector<int64_t> r = reg_dims(l, shape, reg);
  for (int d = 0; d < l.rank(); ++d) {
    int p = l.parent_dim(d);
    if (r[d] % l.size_per_thread[p] >= shape[d]) return false;
  }
  return true;
}

int64_t owner_thread_limit(const Layout& l, const ir::Shape& shape, int p) {
  if (l.is_sliced(p)) return 1;
  int d = 0;
  for (int q = 0; q < p; ++q) d += l.is_sliced(q) ? 0 : 1;
  if (shape[d] >= l.footprint(p)) return int64_t{l.threads_per_warp[p]} * l.warps_per_cta[p];
  return std::max<int64_t>(1, shape[d] / l.size_per_thread[p]);
}

bool every_thread_owns(const Layout& l, const ir::Shape& shape) {
  for (int p = 0; p < l.parent_rank(); ++p)
    if (owner_thread_limit(l, shape, p) < int64_t{l.threads_per_warp[p]} * l.warps_per_cta[p]) return false;
  return true;
}

bool thread_is_owner(const Layout& l, const ir::Shape& shape, int lane, int warp) {
  for (int p = 0; p < l.parent_rank(); ++p)
    if (thread_coord(l, lane, warp, p) >= owner_thread_limit(l, shape, p)) return false;
  return true;
}

bool is_owner(const Layout& l, const ir::Shape& shape, ThreadPos pos) {
  return reg_is_owner(l, shape, pos.reg) && thread_is_owner(l, shape, pos.lane, pos.warp);
}

ThreadPos owner_of(const Layout& l, const ir::Shape& shape, const std::vector<int64_t>& coords) {
  check_shape(l, shape);
  std::vector<int64_t> tid(l.parent_rank(), 0);
  std::vector<int64_t> r(l.rank(), 0);
  for (int d = 0; d < l.rank(); ++d) {
    int p = l.parent_dim(d);
    int64_t c = coords[d], spt = l.size_per_thread[p], f = l.footprint(p);
    TESSEL_ASSERT(c >= 0 && c < shape[d], "coordinate out of range");
    int64_t rep = shape[d] >= f ? c / f : 0;
    int64_t rem = shape[d] >= f ? c % f : c;
    tid[p] = rem / spt;
    r[d] = rep * spt + rem % spt;
  }
  ThreadPos pos;
  pos.reg = reg_index(l, shape, r);
  for (int p = 0; p < l.parent_rank(); ++p) {
    int64_t lane_p = tid[p] % l.threads_per_warp[p], warp_p = tid[p] / l.threads_per_warp[p];
    pos.lane += static_cast<int>(lane_p * stride_in_order(l.order, l.threads_per_warp, p));
    pos.warp += static_cast<int>(warp_p * stride_in_order(l.order, l.warps_per_cta, p));
  }
  return pos;
}

int fastest_tile_dim(const Layout& l) {
  for (int p : l.order)
    if (!l.is_sliced(p)) {
      int d = p;
      for (int q : l.sliced)
        if (q < p) --d;
      return d;
    }
  return l.rank() - 1;
}

int64_t contiguous_per_thread(const Layout& l, const ir::Shape& shape) {
  int d = fastest_tile_dim(l);
  return std::min<int64_t>(l.size_per_thread[l.parent_dim(d)], shape[d]);
}

}  // namespace tessel::lowering
