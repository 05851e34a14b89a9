// Reduction, scan and register-map layout math (see reduction_layout.hpp).
#include "plan/reduction_layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "tessel/ir/error.hpp"

namespace tessel::lowering {
namespace {

// The operand register with the given other-dim register indices and `r_axis` along `axis`.
int64_t with_axis(const Layout& l, const ir::Shape& shape, std::vector<int64_t> rd, int axis, int64_t r_axis) {
  rd[axis] = r_axis;
  return reg_index(l, shape, rd);
}

// Distinct registers along a dim: when the dim is smaller than size_per_thread, registers past
// it wrap onto earlier ones.
int64_t distinct_regs_along(const Layout& l, const ir::Shape& shape, int axis) {
  int p = l.parent_dim(axis);
  int64_t n = regs_along(l, shape, axis);
  return shape[axis] < l.size_per_thread[p] ? shape[axis] : n;
}

struct AxisThreads {
  int lanes, lane_stride, warps, warp_stride;
};

// Distinct lane and warp coordinates along the parent dim of `axis`. Thread coordinates at or
// past owner_thread_limit wrap onto lower ones (the dim is smaller than the footprint).
AxisThreads axis_threads(const Layout& l, const ir::Shape& shape, int axis) {
  int p = l.parent_dim(axis);
  int64_t limit = owner_thread_limit(l, shape, p);
  int tpw = l.threads_per_warp[p];
  AxisThreads t{};
  t.lanes = static_cast<int>(std::min<int64_t>(tpw, limit));
  t.warps = limit > tpw ? static_cast<int>(limit / tpw) : 1;
  t.lane_stride = lane_stride(l, p);
  t.warp_stride = warp_stride(l, p);
  return t;
}

}  // namespace

std::optional<Layout> unslice_layout(const Layout& result, int axis) {
  // Sliced parent dims that would sit at tile position `axis` once present: one run with no
  // present dim between them. Any of them gives a valid answer; take the last.
  std::optional<int> pick;
  int present_before = 0;
  for (int p = 0; p < result.parent_rank(); ++p) {
    if (!result.is_sliced(p)) {
      ++present_before;
      continue;
    }
    if (present_before == axis) pick = p;
  }
  if (!pick) return std::nullopt;
  Layout l = result;
  l.sliced.erase(std::find(l.sliced.begin(), l.sliced.end(), *pick));
  return l;
}

ReducePlan plan_reduce(const Layout& src, const ir::Shape& shape, int axis) {
  TESSEL_ASSERT(axis >= 0 && axis < src.rank() && static_cast<int>(shape.size()) == src.rank(),
                fmt::format("reduce axis {} out of range for {} in {}", axis, ir::shape_str(shape), src.str()));
  ReducePlan plan;
  plan.axis = axis;
  plan.parent_dim = src.parent_dim(axis);
  plan.result_shape = shape;
  plan.result_shape.erase(plan.result_shape.begin() + axis);
  for (int64_t d : plan.result_shape) plan.result_numel *= d;
  plan.scalar_result = shape.size() == 1;

  const int64_t distinct = distinct_regs_along(src, shape, axis);
  if (plan.scalar_result) {
    std::vector<int64_t> g;
    for (int64_t r = 0; r < distinct; ++r) g.push_back(r);
    plan.groups.push_back(std::move(g));
  } else {
    plan.result = slice_layout(src, axis);
    const int64_t n = num_regs(plan.result, plan.result_shape);
    for (int64_t rr = 0; rr < n; ++rr) {
      std::vector<int64_t> rd = reg_dims(plan.result, plan.result_shape, rr);
      rd.insert(rd.begin() + axis, 0);
      std::vector<int64_t> g;
      for (int64_t r = 0; r < distinct; ++r) g.push_back(with_axis(src, shape, rd, axis, r));
      plan.groups.push_back(std::move(g));
    }
  }

  AxisThreads t = axis_threads(src, shape, axis);
  plan.lanes = t.lanes;
  plan.lane_stride = t.lane_stride;
  plan.warps = t.warps;
  plan.warp_stride = t.warp_stride;
  for (int m = 1; m < t.lanes; m <<= 1) plan.lane_masks.push_back(m * t.lane_stride);
  return plan;
}

ScanPlan plan_scan(const Layout& l, const ir::Shape& shape, int axis) {
  TESSEL_ASSERT(axis >= 0 && axis < l.rank() && static_cast<int>(shape.size()) == l.rank(),
                fmt::format("scan axis {} out of range for {} in {}", axis, ir::shape_str(shape), l.str()));
  ScanPlan plan;
  plan.axis = axis;
  plan.parent_dim = l.parent_dim(axis);
  const int p = plan.parent_dim;
  const int64_t spt = l.size_per_thread[p];
  const int64_t along = regs_along(l, shape, axis);
  const int64_t run_len = std::min<int64_t>(spt, shape[axis]);
  plan.reps = along / spt;
  for (size_t d = 0; d < shape.size(); ++d)
    if (static_cast<int>(d) != axis) plan.other_numel *= shape[d];

  const int64_t n = num_regs(l, shape);
  for (int64_t k = 0; k < n; ++k) {
    std::vector<int64_t> rd = reg_dims(l, shape, k);
    const int64_t ra = rd[axis];
    if (ra % spt >= run_len) {
      // Only when the dim is smaller than spt (one repetition): coordinate ra mod S.
      plan.copies.emplace_back(k, with_axis(l, shape, rd, axis, ra % shape[axis]));
      continue;
    }
    if (ra != 0) continue;
    std::vector<ScanRun> runs;
    for (int64_t rep = 0; rep < plan.reps; ++rep) {
      ScanRun run{rep, {}};
      for (int64_t w = 0; w < run_len; ++w) run.regs.push_back(with_axis(l, shape, rd, axis, rep * spt + w));
      runs.push_back(std::move(run));
    }
    plan.lines.push_back(std::move(runs));
  }

  AxisThreads t = axis_threads(l, shape, axis);
  plan.lanes = t.lanes;
  plan.lane_stride = t.lane_stride;
  plan.warps = t.warps;
  plan.warp_stride = t.warp_stride;
  return plan;
}

std::optional<std::vector<int64_t>> register_map(const Layout& dst, const ir::Shape& dshape, const Layout& src,
                                                 const ir::Shape& sshape, const CoordMap& to_src) {
  TESSEL_ASSERT(dst.num_warps() == src.num_warps(), "register_map: layouts of different CTAs");
  const int64_t nd = num_regs(dst, dshape), ns = num_regs(src, sshape);
  auto linear = [&](const std::vector<int64_t>& c) {
    int64_t idx = 0;
    for (size_t d = 0; d < c.size(); ++d) idx = idx * sshape[d] + c[d];
    return idx;
  };
  std::vector<int64_t> map(nd, -1);
  std::unordered_map<int64_t, int64_t> held;  // source linear index -> a register holding it
  for (int warp = 0; warp < dst.num_warps(); ++warp)
    for (int lane = 0; lane < kWarpSize; ++lane) {
      held.clear();
      for (int64_t r = ns - 1; r >= 0; --r) held[linear(element_of(src, sshape, {r, lane, warp}))] = r;
      for (int64_t r = 0; r < nd; ++r) {
        auto it = held.find(linear(to_src(element_of(dst, dshape, {r, lane, warp}))));
        if (it == held.end()) return std::nullopt;
        if (map[r] < 0) {
          map[r] = it->second;
        } else if (map[r] != it->second) {
          // Another register of this thread may hold the same element (replication): any
          // register with the element will do, but the index must be one for all threads.
          if (element_of(src, sshape, {map[r], lane, warp}) != element_of(src, sshape, {it->second, lane, warp}))
            return std::nullopt;
        }
      }
    }
  return map;
}

CoordMap reshape_map(const ir::Shape& from, const ir::Shape& to) {
  return [from, to](const std::vector<int64_t>& c) {
    int64_t idx = 0;
    for (size_t d = 0; d < to.size(); ++d) idx = idx * to[d] + c[d];
    std::vector<int64_t> out(from.size());
    for (size_t d = from.size(); d-- > 0;) {
      out[d] = idx % from[d];
      idx /= from[d];
    }
    return out;
  };
}

CoordMap transpose_map() {
  return [](const std::vector<int64_t>& c) { return std::vector<int64_t>{c[1], c[0]}; };
}

Layout reduce_source_layout(const Layout& natural, const Layout* result, int axis) {
  if (result && !(slice_layout(natural, axis) == *result))
    if (std::optional<Layout> u = unslice_layout(*result, axis)) return *u;
  return natural;
}

int64_t reshape_row_pad(bool trans, ir::DType d) {
  return trans ? std::max<int64_t>(1, 4 / std::max(1, d.bytes())) : 0;
}

}  // namespace tessel::lowering
