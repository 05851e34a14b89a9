// CPU simulation of reduction and scan plans: every thread's result must hold each element
// of its row exactly once (sums count nothing twice), across default, hand-built, replicated
// and sliced layouts; plus unslice round trips and free reshape/transpose register maps.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>

#include "plan/reduction_layout.hpp"

using namespace tessel::lowering;
using tessel::ir::Shape;

namespace {

using Bag = std::vector<int64_t>;  // a multiset of linear element indices, kept sorted

Bag merge(const Bag& a, const Bag& b) {
  Bag out;
  std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

int64_t linear(const Shape& s, const std::vector<int64_t>& c) {
  int64_t idx = 0;
  for (size_t d = 0; d < s.size(); ++d) idx = idx * s[d] + c[d];
  return idx;
}

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

std::vector<int64_t> coords_of(const Shape& s, int64_t idx) {
  std::vector<int64_t> c(s.size());
  for (size_t d = s.size(); d-- > 0;) {
    c[d] = idx % s[d];
    idx /= s[d];
  }
  return c;
}

// Runs the three stages of `plan` on bags of element indices and checks every result.
void simulate_reduce(const Layout& src, const Shape& shape, int axis) {
  CAPTURE(src.str());
  CAPTURE(tessel::ir::shape_str(shape));
  CAPTURE(axis);
  const ReducePlan plan = plan_reduce(src, shape, axis);
  const int warps = src.num_warps();
  const size_t nres = plan.groups.size();
  if (plan.scalar_result) REQUIRE(nres == 1);
  else REQUIRE(static_cast<int64_t>(nres) == num_regs(plan.result, plan.result_shape));
  CHECK(plan.lanes == (1 << plan.lane_masks.size()));

  // bags[warp][lane][result reg]
  std::vector<std::vector<std::vector<Bag>>> bags(warps, std::vector<std::vector<Bag>>(kWarpSize, std::vector<Bag>(nres)));
  for (int w = 0; w < warps; ++w)
    for (int lane = 0; lane < kWarpSize; ++lane)
      for (size_t rr = 0; rr < nres; ++rr) {
        Bag b;
        for (int64_t r : plan.groups[rr]) b.push_back(linear(shape, element_of(src, shape, {r, lane, w})));
        std::sort(b.begin(), b.end());
        bags[w][lane][rr] = b;
      }
  for (int mask : plan.lane_masks) {
    auto next = bags;
    for (int w = 0; w < warps; ++w)
      for (int lane = 0; lane < kWarpSize; ++lane)
        for (size_t rr = 0; rr < nres; ++rr) next[w][lane][rr] = merge(bags[w][lane][rr], bags[w][lane ^ mask][rr]);
    bags = std::move(next);
  }
  if (plan.warps > 1) {
    const int64_t m = plan.result_numel;
    std::map<int64_t, Bag> slots;
    for (int w = 0; w < warps; ++w)
      for (int lane = 0; lane < kWarpSize; ++lane)
        for (size_t rr = 0; rr < nres; ++rr) {
          if (!plan.scalar_result && !reg_is_owner(plan.result, plan.result_shape, rr)) continue;
          int64_t e = plan.scalar_result ? 0 : linear(plan.result_shape, element_of(plan.result, plan.result_shape, {static_cast<int64_t>(rr), lane, w}));
          int64_t j = (w / plan.warp_stride) % plan.warps;
          auto [it, fresh] = slots.emplace(j * m + e, bags[w][lane][rr]);
          if (!fresh) REQUIRE(it->second == bags[w][lane][rr]);  // duplicate writers agree
        }
    for (int w = 0; w < warps; ++w)
      for (int lane = 0; lane < kWarpSize; ++lane)
        for (size_t rr = 0; rr < nres; ++rr) {
          int64_t e = plan.scalar_result ? 0 : linear(plan.result_shape, element_of(plan.result, plan.result_shape, {static_cast<int64_t>(rr), lane, w}));
          Bag all;
          for (int k = 0; k < plan.warps; ++k) {
            auto it = slots.find(k * m + e);
            REQUIRE(it != slots.end());
            all = merge(all, it->second);
          }
          bags[w][lane][rr] = all;
        }
  }
  // Every thread's result register holds its row: each element once.
  for (int w = 0; w < warps; ++w)
    for (int lane = 0; lane < kWarpSize; ++lane)
      for (size_t rr = 0; rr < nres; ++rr) {
        Bag want;
        std::vector<int64_t> rc;
        if (!plan.scalar_result) rc = element_of(plan.result, plan.result_shape, {static_cast<int64_t>(rr), lane, w});
        for (int64_t i = 0; i < numel(shape); ++i) {
          std::vector<int64_t> c = coords_of(shape, i);
          c.erase(c.begin() + axis);
          if (c == rc) want.push_back(i);
        }
        REQUIRE(bags[w][lane][rr] == want);
      }
}

// Simulates the scan of plan_scan stage by stage, as lower_scan emits it.
void simulate_scan(const Layout& l, const Shape& shape, int axis) {
  CAPTURE(l.str());
  CAPTURE(tessel::ir::shape_str(shape));
  CAPTURE(axis);
  const ScanPlan plan = plan_scan(l, shape, axis);
  const int warps = l.num_warps();
  const int64_t nregs = num_regs(l, shape);
  const size_t nl = plan.lines.size();
  const int64_t reps = plan.reps;
  using PerThread = std::vector<std::vector<Bag>>;  // [line][rep]
  auto grid = [&] { return std::vector<std::vector<PerThread>>(warps, std::vector<PerThread>(kWarpSize, PerThread(nl, std::vector<Bag>(reps)))); };
  auto elem = [&](int64_t r, int lane, int w) { return linear(shape, element_of(l, shape, {r, lane, w})); };
  // 1. local prefixes and run totals
  std::vector<std::vector<std::vector<std::vector<Bag>>>> local(warps, std::vector<std::vector<std::vector<Bag>>>(kWarpSize, std::vector<std::vector<Bag>>(nl * reps)));
  auto total = grid();
  for (int w = 0; w < warps; ++w)
    for (int lane = 0; lane < kWarpSize; ++lane)
      for (size_t li = 0; li < nl; ++li)
        for (int64_t rep = 0; rep < reps; ++rep) {
          Bag acc;
          for (int64_t r : plan.lines[li][rep].regs) {
            acc = merge(acc, {elem(r, lane, w)});
            local[w][lane][li * reps + rep].push_back(acc);
          }
          total[w][lane][li][rep] = acc;
        }
  // 2. lanes
  auto excl = grid(), wtotal = total;
  if (plan.lanes > 1) {
    const int ls = plan.lane_stride;
    auto lp = [&](int lane) { return (lane / ls) % plan.lanes; };
    auto s = total;
    for (int delta = 1; delta < plan.lanes; delta <<= 1) {
      auto next = s;
      for (int w = 0; w < warps; ++w)
        for (int lane = 0; lane < kWarpSize; ++lane)
          if (lp(lane) >= delta)
            for (size_t li = 0; li < nl; ++li)
              for (int64_t rep = 0; rep < reps; ++rep) next[w][lane][li][rep] = merge(s[w][lane][li][rep], s[w][lane - delta * ls][li][rep]);
      s = std::move(next);
    }
    for (int w = 0; w < warps; ++w)
      for (int lane = 0; lane < kWarpSize; ++lane) {
        int last = lane + (plan.lanes - 1 - lp(lane)) * ls;
        REQUIRE(last < kWarpSize);
        for (size_t li = 0; li < nl; ++li)
          for (int64_t rep = 0; rep < reps; ++rep) {
            excl[w][lane][li][rep] = lp(lane) == 0 ? Bag{} : s[w][lane - ls][li][rep];
            wtotal[w][lane][li][rep] = s[w][last][li][rep];
          }
      }
  }
  // 3. warps
  auto before = grid(), rtotal = wtotal;
  if (plan.warps > 1) {
    const int64_t o = plan.other_numel;
    std::map<int64_t, Bag> slots;
    auto other_of = [&](int64_t r, int lane, int w) {
      std::vector<int64_t> c = element_of(l, shape, {r, lane, w});
      c.erase(c.begin() + axis);
      Shape os = shape;
      os.erase(os.begin() + axis);
      return linear(os, c);
    };
    for (int w = 0; w < warps; ++w)
      for (int lane = 0; lane < kWarpSize; ++lane)
        for (size_t li = 0; li < nl; ++li) {
          int64_t r0 = plan.lines[li][0].regs[0];
          if (!reg_is_owner(l, shape, r0)) continue;
          int64_t j = (w / plan.warp_stride) % plan.warps;
          for (int64_t rep = 0; rep < reps; ++rep) {
            auto [it, fresh] = slots.emplace((rep * plan.warps + j) * o + other_of(r0, lane, w), wtotal[w][lane][li][rep]);
            if (!fresh) REQUIRE(it->second == wtotal[w][lane][li][rep]);
          }
        }
    for (int w = 0; w < warps; ++w)
      for (int lane = 0; lane < kWarpSize; ++lane)
        for (size_t li = 0; li < nl; ++li) {
          int64_t r0 = plan.lines[li][0].regs[0];
          int64_t j = (w / plan.warp_stride) % plan.warps;
          for (int64_t rep = 0; rep < reps; ++rep) {
            Bag pre, all;
            for (int k = 0; k < plan.warps; ++k) {
              auto it = slots.find((rep * plan.warps + k) * o + other_of(r0, lane, w));
              REQUIRE(it != slots.end());
              all = merge(all, it->second);
              if (k < j) pre = merge(pre, it->second);
            }
            before[w][lane][li][rep] = pre;
            rtotal[w][lane][li][rep] = all;
          }
        }
  }
  // Assemble and check every register against its true prefix.
  for (int w = 0; w < warps; ++w)
    for (int lane = 0; lane < kWarpSize; ++lane) {
      std::vector<Bag> out(nregs);
      std::vector<bool> set(nregs, false);
      for (size_t li = 0; li < nl; ++li) {
        Bag carry;
        for (int64_t rep = 0; rep < reps; ++rep) {
          Bag base = merge(carry, merge(before[w][lane][li][rep], excl[w][lane][li][rep]));
          const ScanRun& run = plan.lines[li][rep];
          for (size_t i = 0; i < run.regs.size(); ++i) {
            out[run.regs[i]] = merge(base, local[w][lane][li * reps + rep][i]);
            set[run.regs[i]] = true;
          }
          carry = merge(carry, rtotal[w][lane][li][rep]);
        }
      }
      for (auto [k, s] : plan.copies) {
        REQUIRE(set[s]);
        out[k] = out[s];
        set[k] = true;
      }
      for (int64_t r = 0; r < nregs; ++r) {
        REQUIRE(set[r]);
        std::vector<int64_t> c = element_of(l, shape, {r, lane, w});
        Bag want;
        for (int64_t x = 0; x <= c[axis]; ++x) {
          std::vector<int64_t> cc = c;
          cc[axis] = x;
          want.push_back(linear(shape, cc));
        }
        std::sort(want.begin(), want.end());
        REQUIRE(out[r] == want);
      }
    }
}

}  // namespace

TEST_CASE("unslice_layout inverts slice_layout") {
  for (int warps : {1, 4, 8})
    for (const Shape& s : std::vector<Shape>{{64, 64}, {1, 4096}, {8, 32, 16}, {4, 2, 8, 16}}) {
      Layout l = default_layout(s, 4, warps);
      for (int axis = 0; axis < l.rank(); ++axis) {
        Layout sl = slice_layout(l, axis);
        auto back = unslice_layout(sl, axis);
        REQUIRE(back.has_value());
        CHECK(*back == l);
        // twice sliced: a layout whose slice is the given one (several may exist)
        if (sl.rank() >= 2)
          for (int a2 = 0; a2 < sl.rank(); ++a2) {
            Layout ss = slice_layout(sl, a2);
            auto b2 = unslice_layout(ss, a2);
            REQUIRE(b2.has_value());
            CHECK(slice_layout(*b2, a2) == ss);
            CHECK(b2->rank() == sl.rank());
          }
      }
    }
  // not a slice at that position
  CHECK_FALSE(unslice_layout(default_layout({64, 64}, 4, 4), 0).has_value());
  Layout s1 = slice_layout(default_layout({64, 64}, 4, 4), 1);  // sliced dim 1: position 1 only
  CHECK_FALSE(unslice_layout(s1, 0).has_value());
  CHECK(unslice_layout(s1, 1).has_value());
}

TEST_CASE("reduce plan: a 1-D row of 4096 f32 over 4 warps") {
  Layout l = default_layout({4096}, 4, 4);
  ReducePlan p = plan_reduce(l, {4096}, 0);
  CHECK(p.scalar_result);
  REQUIRE(p.groups.size() == 1);
  CHECK(p.groups[0].size() == 32);  // every register of the thread
  CHECK(p.lane_masks == std::vector<int>{1, 2, 4, 8, 16});
  CHECK(p.warps == 4);
  simulate_reduce(l, {4096}, 0);
}

TEST_CASE("reduce plan: rows of a 2-D tile, both axes") {
  Layout l = default_layout({64, 64}, 4, 4);  // spt [1,4], tpw [2,16], wpc [4,1]
  ReducePlan rows = plan_reduce(l, {64, 64}, 1);
  CHECK(rows.result == slice_layout(l, 1));
  CHECK(rows.lane_masks == std::vector<int>{1, 2, 4, 8});
  CHECK(rows.warps == 1);  // warps split the rows, not the columns: no shared memory
  ReducePlan cols = plan_reduce(l, {64, 64}, 0);
  CHECK(cols.lane_masks == std::vector<int>{16});
  CHECK(cols.warps == 4);
  simulate_reduce(l, {64, 64}, 0);
  simulate_reduce(l, {64, 64}, 1);
}

TEST_CASE("reduce plans: exhaustive over default layouts, every axis") {
  const std::vector<Shape> shapes{{1}, {2}, {32}, {128}, {1024}, {1, 64}, {64, 1}, {2, 2}, {8, 32}, {16, 16},
                                  {32, 128}, {1, 1024}, {4, 256}, {256, 4}, {2, 8, 16}, {4, 4, 4}, {16, 1, 8}};
  for (int warps : {1, 2, 4, 8})
    for (const Shape& s : shapes)
      for (int bytes : {2, 4, 8}) {
        Layout l = default_layout(s, bytes, warps);
        for (int axis = 0; axis < l.rank(); ++axis) simulate_reduce(l, s, axis);
      }
}

TEST_CASE("default layouts for reduced shapes keep warps off the reduced dim where they can") {
  Layout rows = default_layout({8, 1024}, 4, 4, /*reduced_dim=*/1);
  CHECK(rows.warps_per_cta == std::vector<int>{4, 1});
  CHECK(rows.size_per_thread == std::vector<int>{1, 4});  // lanes and vectors unchanged
  CHECK(rows.threads_per_warp == std::vector<int>{1, 32});
  CHECK(plan_reduce(rows, {8, 1024}, 1).warps == 1);
  CHECK(default_layout({8, 1024}, 4, 4).warps_per_cta == std::vector<int>{1, 4});
  // one row: the warps have nowhere else to go
  CHECK(default_layout({1, 4096}, 4, 8, 1).warps_per_cta == std::vector<int>{1, 8});
  CHECK(default_layout({2, 4096}, 4, 8, 1).warps_per_cta == std::vector<int>{2, 4});
  // columns reduced: warps go along the columns when there is room
  CHECK(default_layout({256, 512}, 4, 4, 0).warps_per_cta == std::vector<int>{1, 4});
  for (int warps : {1, 4, 8})
    for (const Shape& s : std::vector<Shape>{{8, 256}, {1, 64}, {64, 1}, {2, 2}, {16, 64}, {2, 8, 16}})
      for (int rd = 0; rd < static_cast<int>(s.size()); ++rd) {
        Layout l = default_layout(s, 4, warps, rd);
        CHECK(l.num_warps() == warps);
        for (int axis = 0; axis < l.rank(); ++axis) simulate_reduce(l, s, axis);
      }
}

TEST_CASE("reduce plans: layouts used on smaller and larger tiles (replication, repetition)") {
  Layout l = default_layout({64, 64}, 4, 4);
  for (const Shape& s : std::vector<Shape>{{2, 4}, {1, 2}, {4, 1}, {128, 128}, {8, 2}, {1, 1}})
    for (int axis = 0; axis < 2; ++axis) simulate_reduce(l, s, axis);
  Layout l1 = default_layout({4096}, 4, 8);
  for (const Shape& s : std::vector<Shape>{{1}, {2}, {16}, {64}, {512}, {2048}}) simulate_reduce(l1, s, 0);
}

TEST_CASE("reduce plans: hand-built layouts with odd orders and splits") {
  // column-major threads, warps split along both dims
  Layout cm{{2, 1}, {8, 4}, {2, 2}, {0, 1}, {}};
  for (const Shape& s : std::vector<Shape>{{32, 16}, {16, 8}, {4, 4}, {64, 64}, {1, 8}})
    for (int axis = 0; axis < 2; ++axis) simulate_reduce(cm, s, axis);
  // warps all along the reduced dim of a single row (softmax-like), spt 4
  Layout row{{1, 4}, {1, 32}, {1, 8}, {1, 0}, {}};
  simulate_reduce(row, {1, 4096}, 1);
  simulate_reduce(row, {4, 1024}, 1);
  simulate_reduce(row, {4, 1024}, 0);
  ReducePlan p = plan_reduce(row, {1, 4096}, 1);
  CHECK(p.warps == 8);
  CHECK(p.groups.size() == 1);
  CHECK(p.groups[0].size() == 16);
}

TEST_CASE("reduce plans: operands in slice layouts (nested reductions)") {
  Layout p = default_layout({16, 32, 8}, 4, 4);
  Layout s = slice_layout(p, 1);  // a [16, 8] tile
  for (int axis = 0; axis < 2; ++axis) simulate_reduce(s, {16, 8}, axis);
  Layout ss = slice_layout(s, 0);  // a [8] tile
  simulate_reduce(ss, {8}, 0);
  // the second reduction of sum(sum(x, 1), 0) runs on the first one's result layout
  ReducePlan first = plan_reduce(p, {16, 32, 8}, 1);
  simulate_reduce(first.result, first.result_shape, 0);
  simulate_reduce(first.result, first.result_shape, 1);
}

TEST_CASE("scan plans: default layouts, every axis, including replication and repetition") {
  const std::vector<Shape> shapes{{1}, {4}, {32}, {128}, {1024}, {4096}, {1, 64}, {64, 1}, {2, 2},
                                  {8, 32}, {16, 16}, {32, 128}, {4, 256}, {2, 8, 16}};
  for (int warps : {1, 4, 8})
    for (const Shape& s : shapes)
      for (int bytes : {2, 4}) {
        Layout l = default_layout(s, bytes, warps);
        for (int axis = 0; axis < l.rank(); ++axis) simulate_scan(l, s, axis);
      }
  Layout l = default_layout({64, 64}, 4, 4);
  for (const Shape& s : std::vector<Shape>{{2, 4}, {1, 2}, {128, 256}, {8, 2}})
    for (int axis = 0; axis < 2; ++axis) simulate_scan(l, s, axis);
  Layout cm{{2, 1}, {8, 4}, {2, 2}, {0, 1}, {}};
  for (const Shape& s : std::vector<Shape>{{32, 16}, {4, 4}, {64, 64}})
    for (int axis = 0; axis < 2; ++axis) simulate_scan(cm, s, axis);
}

TEST_CASE("scan plan of a 1-D tile: runs per repetition, lanes and warps") {
  Layout l = default_layout({1024}, 4, 4);  // spt 4, 32 lanes, 4 warps, 2 repetitions
  ScanPlan p = plan_scan(l, {1024}, 0);
  CHECK(p.reps == 2);
  REQUIRE(p.lines.size() == 1);
  CHECK(p.lines[0][0].regs == std::vector<int64_t>{0, 1, 2, 3});
  CHECK(p.lines[0][1].regs == std::vector<int64_t>{4, 5, 6, 7});
  CHECK(p.lanes == 32);
  CHECK(p.warps == 4);
  ScanPlan small = plan_scan(default_layout({1024}, 4, 4), {2}, 0);  // spt 4 > 2 elements
  CHECK(small.copies.size() == 2);
  CHECK(small.lanes == 1);
}

TEST_CASE("register maps: free reshapes and the ones that need shared memory") {
  for (int warps : {1, 4, 8}) {
    Layout l1 = default_layout({4096}, 4, warps);
    Layout l2 = default_layout({1, 4096}, 4, warps);
    Layout l3 = default_layout({4, 1024}, 4, warps);
    auto m = register_map(l2, {1, 4096}, l1, {4096}, reshape_map({4096}, {1, 4096}));
    REQUIRE(m.has_value());
    auto back = register_map(l1, {4096}, l2, {1, 4096}, reshape_map({1, 4096}, {4096}));
    REQUIRE(back.has_value());
    // verify the maps element by element
    for (int w = 0; w < warps; ++w)
      for (int lane = 0; lane < kWarpSize; ++lane)
        for (int64_t r = 0; r < num_regs(l2, {1, 4096}); ++r) {
          auto c2 = element_of(l2, {1, 4096}, {r, lane, w});
          auto c1 = element_of(l1, {4096}, {(*m)[r], lane, w});
          CHECK(c1[0] == c2[1]);
        }
    auto m3 = register_map(l3, {4, 1024}, l1, {4096}, reshape_map({4096}, {4, 1024}));
    if (m3) {
      for (int w = 0; w < warps; ++w)
        for (int lane = 0; lane < kWarpSize; ++lane)
          for (int64_t r = 0; r < num_regs(l3, {4, 1024}); ++r) {
            auto c3 = element_of(l3, {4, 1024}, {r, lane, w});
            auto c1 = element_of(l1, {4096}, {(*m3)[r], lane, w});
            CHECK(c1[0] == c3[0] * 1024 + c3[1]);
          }
    }
  }
  // a transpose between default layouts moves data between threads
  Layout a = default_layout({32, 64}, 4, 4), t = default_layout({64, 32}, 4, 4);
  CHECK_FALSE(register_map(t, {64, 32}, a, {32, 64}, transpose_map()).has_value());
  // ... but into the transposed layout it is free
  Layout at{{a.size_per_thread[1], a.size_per_thread[0]}, {a.threads_per_warp[1], a.threads_per_warp[0]},
            {a.warps_per_cta[1], a.warps_per_cta[0]}, {0, 1}, {}};
  auto mt = register_map(at, {64, 32}, a, {32, 64}, transpose_map());
  REQUIRE(mt.has_value());
  for (int w = 0; w < 4; ++w)
    for (int lane = 0; lane < kWarpSize; ++lane)
      for (int64_t r = 0; r < num_regs(at, {64, 32}); ++r) {
        auto ct = element_of(at, {64, 32}, {r, lane, w});
        auto ca = element_of(a, {32, 64}, {(*mt)[r], lane, w});
        CHECK(ct[0] == ca[1]);
        CHECK(ct[1] == ca[0]);
      }
}
