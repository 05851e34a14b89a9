// Exhaustive CPU checks of the layout math: every element has exactly one owner and back.
#include <doctest/doctest.h>

#include <map>
#include <set>

#include "plan/layout.hpp"

using namespace tessel::lowering;
using tessel::ir::Shape;

namespace {

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

// Walks every (reg, lane, warp) of the CTA and checks the bijection between owners and
// elements, plus the consistency of owner_of, element_of and the ownership split.
void check_layout(const Layout& l, const Shape& shape) {
  CAPTURE(l.str());
  CAPTURE(tessel::ir::shape_str(shape));
  const int64_t regs = num_regs(l, shape);
  const int warps = l.num_warps();
  std::map<std::vector<int64_t>, int> owners;
  std::map<std::vector<int64_t>, int> holders;
  for (int w = 0; w < warps; ++w)
    for (int lane = 0; lane < kWarpSize; ++lane)
      for (int64_t r = 0; r < regs; ++r) {
        ThreadPos p{r, lane, w};
        auto e = element_of(l, shape, p);
        REQUIRE(e.size() == shape.size());
        for (size_t d = 0; d < e.size(); ++d) REQUIRE((e[d] >= 0 && e[d] < shape[d]));
        holders[e]++;
        if (is_owner(l, shape, p)) {
          owners[e]++;
          CHECK(owner_of(l, shape, e) == p);
        }
        CHECK(reg_index(l, shape, reg_dims(l, shape, r)) == r);
      }
  // every element is held by someone and owned exactly once
  CHECK(static_cast<int64_t>(holders.size()) == numel(shape));
  CHECK(static_cast<int64_t>(owners.size()) == numel(shape));
  for (auto& [e, n] : owners) CHECK(n == 1);
  // holders hold the same number of copies of every element (replication is uniform)
  int copies = holders.begin()->second;
  for (auto& [e, n] : holders) CHECK(n == copies);
  CHECK(copies * numel(shape) == regs * warps * kWarpSize);
  // owner_of of every element is a position that holds it
  for (auto& [e, n] : holders) CHECK(element_of(l, shape, owner_of(l, shape, e)) == e);
}

}  // namespace

TEST_CASE("default layout of a 1-D f32 tile of 1024 elements, 4 warps") {
  Layout l = default_layout({1024}, 4, 4);
  CHECK(l.size_per_thread == std::vector<int>{4});
  CHECK(l.threads_per_warp == std::vector<int>{32});
  CHECK(l.warps_per_cta == std::vector<int>{4});
  CHECK(num_regs(l, {1024}) == 8);
  CHECK(contiguous_per_thread(l, {1024}) == 4);
  // thread 0 of warp 0 holds 0..3 and 512..515
  CHECK(element_of(l, {1024}, {0, 0, 0}) == std::vector<int64_t>{0});
  CHECK(element_of(l, {1024}, {3, 0, 0}) == std::vector<int64_t>{3});
  CHECK(element_of(l, {1024}, {4, 0, 0}) == std::vector<int64_t>{512});
  CHECK(element_of(l, {1024}, {0, 1, 0}) == std::vector<int64_t>{4});
  CHECK(element_of(l, {1024}, {0, 0, 1}) == std::vector<int64_t>{128});
  check_layout(l, {1024});
}

TEST_CASE("default layouts: f16 widens the vector, small tiles replicate") {
  CHECK(default_layout({2048}, 2, 4).size_per_thread == std::vector<int>{8});
  CHECK(default_layout({128}, 4, 4).size_per_thread == std::vector<int>{1});
  Layout l = default_layout({64, 64}, 4, 4);
  CHECK(l.size_per_thread == std::vector<int>{1, 4});
  CHECK(l.threads_per_warp == std::vector<int>{2, 16});
  CHECK(l.warps_per_cta == std::vector<int>{4, 1});
  CHECK(l.order == std::vector<int>{1, 0});
  CHECK(num_regs(l, {64, 64}) == 32);
}

TEST_CASE("exhaustive: 1-D tiles of every size against every warp count") {
  for (int warps : {1, 2, 4, 8})
    for (int64_t n : {1, 2, 4, 8, 32, 64, 128, 256, 1024, 4096})
      for (int bytes : {1, 2, 4, 8}) {
        Layout l = default_layout({n}, bytes, warps);
        check_layout(l, {n});
        // the same layout on other sizes (wrap-around and replication)
        for (int64_t m : {1, 4, 16, 512}) check_layout(l, {m});
      }
}

TEST_CASE("exhaustive: 2-D and 3-D tiles") {
  const std::vector<Shape> shapes{{1, 64}, {64, 1}, {2, 2}, {8, 32}, {16, 16}, {64, 64},
                                  {128, 32}, {32, 128}, {1, 1024}, {256, 4}};
  for (int warps : {1, 4, 8})
    for (const Shape& s : shapes)
      for (int bytes : {2, 4}) check_layout(default_layout(s, bytes, warps), s);
  for (int warps : {2, 4})
    for (const Shape& s : std::vector<Shape>{{2, 8, 16}, {4, 4, 4}, {1, 2, 64}, {16, 1, 8}})
      check_layout(default_layout(s, 4, warps), s);
}

TEST_CASE("a hand-built layout with a non-trivial order and odd splits") {
  // dim 0 fastest: column-major distribution
  Layout l{{2, 1}, {8, 4}, {1, 2}, {0, 1}, {}};
  for (const Shape& s : std::vector<Shape>{{16, 8}, {4, 4}, {32, 32}, {1, 2}, {64, 1}}) check_layout(l, s);
  CHECK(element_of(l, {16, 8}, {1, 0, 0}) == std::vector<int64_t>{1, 0});
  CHECK(element_of(l, {16, 8}, {0, 1, 0}) == std::vector<int64_t>{2, 0});
  CHECK(element_of(l, {16, 8}, {0, 8, 0}) == std::vector<int64_t>{0, 1});
}

TEST_CASE("slice layouts: expand_dims operands and their owners") {
  Layout p = default_layout({64, 64}, 4, 4);
  Layout rows = slice_layout(p, 1);  // a [64] tile indexed like dim 0 of the parent
  Layout cols = slice_layout(p, 0);  // a [64] tile indexed like dim 1
  CHECK(rows.rank() == 1);
  CHECK(rows.parent_dim(0) == 0);
  CHECK(cols.parent_dim(0) == 1);
  CHECK(rows.str().find("sliced=[1]") != std::string::npos);
  for (int64_t n : {1, 8, 64, 256}) {
    check_layout(rows, {n});
    check_layout(cols, {n});
  }
  // the element a thread holds in the slice is the matching coordinate of the parent
  for (int w = 0; w < 4; ++w)
    for (int lane = 0; lane < 32; ++lane)
      for (int64_t r = 0; r < num_regs(p, {64, 64}); ++r) {
        auto e = element_of(p, {64, 64}, {r, lane, w});
        auto rd = reg_dims(p, {64, 64}, r);
        CHECK(element_of(rows, {64}, {rd[0], lane, w})[0] == e[0]);
        CHECK(element_of(cols, {64}, {rd[1], lane, w})[0] == e[1]);
      }
  // 3-D parent sliced twice
  Layout q = default_layout({4, 8, 16}, 4, 2);
  Layout s = slice_layout(slice_layout(q, 0), 0);
  CHECK(s.rank() == 1);
  CHECK(s.parent_dim(0) == 2);
  check_layout(s, {16});
  check_layout(s, {64});
}

TEST_CASE("layout_along: a tile contiguous along dim 0 holds 16-byte runs down its columns") {
  const Layout l = layout_along({64, 64}, 2, 4, 0);
  CHECK(l.order == std::vector<int>{0, 1});
  CHECK(l.size_per_thread == std::vector<int>{8, 1});
  CHECK(l.threads_per_warp == std::vector<int>{8, 4});
  CHECK(l.warps_per_cta == std::vector<int>{1, 4});
  CHECK(fastest_tile_dim(l) == 0);
  CHECK(contiguous_per_thread(l, {64, 64}) == 8);
  // Each thread's registers 0..7 are rows r0 .. r0 + 7 of one column: a thread's run is along dim 0.
  for (int64_t r = 0; r < 8; ++r) {
    auto e0 = element_of(l, {64, 64}, ThreadPos{0, 5, 2});
    auto e = element_of(l, {64, 64}, ThreadPos{r, 5, 2});
    CHECK(e[0] == e0[0] + r);
    CHECK(e[1] == e0[1]);
  }
  // The last dim, as default_layout has it, and every slice of either.
  CHECK(fastest_tile_dim(default_layout({64, 64}, 2, 4)) == 1);
  CHECK(layout_along({64, 64}, 2, 4, 1) == default_layout({64, 64}, 2, 4));
  CHECK(fastest_tile_dim(slice_layout(l, 0)) == 0);  // the parent's dim 1 is left, tile dim 0
  CHECK(fastest_tile_dim(slice_layout(l, 1)) == 0);
  // Every element has exactly one owner.
  std::set<std::vector<int64_t>> seen;
  for (int w = 0; w < 4; ++w)
    for (int lane = 0; lane < 32; ++lane)
      for (int64_t r = 0; r < num_regs(l, {64, 64}); ++r)
        if (is_owner(l, {64, 64}, ThreadPos{r, lane, w})) CHECK(seen.insert(element_of(l, {64, 64}, {r, lane, w})).second);
  CHECK(seen.size() == 64 * 64);
}

TEST_CASE("unpack layouts: runs of whole words, and words split among the lanes of a quad") {
  // Runs that are multiples of the fields per word: the words' runs are `count` times shorter.
  Layout r = default_layout({64, 32}, 2, 4);
  r.size_per_thread = {8, 1};
  r.order = {0, 1};
  r.threads_per_warp = {1, 32};
  auto w = unpack_operand_layout(r, 0, 8, 64);
  REQUIRE(w.has_value());
  CHECK(w->size_per_thread == std::vector<int>{1, 1});
  CHECK(unpack_result_layout(*w, 0, 8) == r);
  CHECK_FALSE(is_lane_split_unpack(r, 0, 8));

  // The mma B-fragment layout: 2 fields per lane, 4 lanes per word along K. Every lane of the
  // quad holds every word of its column, and its result register (rep, f) along K is field
  // lane_q * 2 + f of word register rep (lower_unpack_lane_split).
  for (int warps : {1, 4, 8})
    for (int64_t K : {8, 16, 64, 128}) {
      const int64_t N = 8 * warps * 2;
      Layout l;
      l.size_per_thread = {2, 1};
      l.threads_per_warp = {4, 8};
      l.warps_per_cta = {1, warps};
      l.order = {0, 1};
      CAPTURE(K);
      CAPTURE(warps);
      REQUIRE(is_lane_split_unpack(l, 0, 8));
      const auto wl = unpack_operand_layout(l, 0, 8, K);
      REQUIRE(wl.has_value());
      CHECK(wl->size_per_thread == std::vector<int>{static_cast<int>(K / 8), 1});
      check_layout(*wl, {K / 8, N});
      int64_t bad = 0;
      for (int warp = 0; warp < warps; ++warp)
        for (int lane = 0; lane < 32; ++lane)
          for (int64_t reg = 0; reg < num_regs(l, {K, N}); ++reg) {
            const auto e = element_of(l, {K, N}, ThreadPos{reg, lane, warp});
            std::vector<int64_t> rd = reg_dims(l, {K, N}, reg);
            const int64_t f = rd[0] % 2;
            rd[0] /= 2;
            const auto word = element_of(*wl, {K / 8, N}, ThreadPos{reg_index(*wl, {K / 8, N}, rd), lane, warp});
            const int q = thread_coord(l, lane, warp, 0);
            bad += word != std::vector<int64_t>{e[0] / 8, e[1]} || e[0] % 8 != q * 2 + f;
          }
      CHECK(bad == 0);
    }
  // Lanes that split words unevenly, or warps along the axis: neither form.
  Layout l;
  l.size_per_thread = {2, 1};
  l.threads_per_warp = {8, 4};
  l.warps_per_cta = {1, 4};
  l.order = {0, 1};
  CHECK_FALSE(is_lane_split_unpack(l, 0, 8));
  CHECK_FALSE(unpack_operand_layout(l, 0, 8, 64).has_value());
  l.threads_per_warp = {4, 8};
  l.warps_per_cta = {2, 2};
  CHECK_FALSE(is_lane_split_unpack(l, 0, 8));
}
