// The report's label placer: labels never overlap each other or blocked markers, stay inside
// their bounds, move out with a leader line when crowded, and are skipped when nothing fits.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "tessel/report/label_placer.hpp"

using namespace tessel::samples::report;

TEST_CASE("label placer: a crowded cluster of points gets labels that never overlap") {
  const Box bounds{0, 0, 400, 300};
  LabelPlacer placer(bounds);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> near(150, 250);  // 60 points in a 100x100 square
  std::vector<std::pair<double, double>> pts;
  for (int i = 0; i < 60; ++i) pts.push_back({near(rng), near(rng) - 50});
  for (const auto& [x, y] : pts) placer.block_point(x, y, 5);
  const size_t markers = placer.taken().size();
  std::vector<Placement> placed;
  size_t skipped = 0, leaders = 0;
  for (size_t i = 0; i < pts.size(); ++i) {
    auto p = placer.place_near(pts[i].first, pts[i].second, 4 + i % 9);  // "4096x4096" and shorter
    if (!p) {
      ++skipped;
      continue;
    }
    leaders += p->leader;
    placed.push_back(*p);
  }
  CHECK(placed.size() >= 10);  // room exists around the cluster
  CHECK(leaders > 0);          // crowded: some had to move out
  CHECK(skipped > 0);          // and some found no room at all
  CHECK(placer.taken().size() == markers + placed.size());
  for (size_t i = 0; i < placed.size(); ++i) {
    CAPTURE(i);
    CHECK(placed[i].box.inside(bounds));
    for (size_t j = i + 1; j < placed.size(); ++j) CHECK_FALSE(placed[i].box.overlaps(placed[j].box));
    for (size_t m = 0; m < markers; ++m) CHECK_FALSE(placed[i].box.overlaps(placer.taken()[m]));
    if (placed[i].leader) {  // the leader ends on the label's box
      CHECK(placed[i].leader_x >= placed[i].box.x - 1e-9);
      CHECK(placed[i].leader_x <= placed[i].box.x + placed[i].box.w + 1e-9);
      CHECK(placed[i].leader_y >= placed[i].box.y - 1e-9);
      CHECK(placed[i].leader_y <= placed[i].box.y + placed[i].box.h + 1e-9);
    }
  }
}

TEST_CASE("label placer: the first free position wins, right of a lone point, left when right is taken") {
  LabelPlacer placer(Box{0, 0, 200, 100}, 6, 12);
  auto a = placer.place_near(50, 50, 5);
  REQUIRE(a);
  CHECK(a->anchor == Anchor::Start);
  CHECK(a->x == doctest::Approx(58));
  CHECK_FALSE(a->leader);
  CHECK(a->box.x == doctest::Approx(58));
  CHECK(a->box.w == doctest::Approx(30));
  CHECK(a->box.y + a->box.h / 2 == doctest::Approx(50));  // centred on the point
  auto b = placer.place_near(50, 50, 5);  // same point: right is taken, so left
  REQUIRE(b);
  CHECK(b->anchor == Anchor::End);
  CHECK(b->box.x + b->box.w == doctest::Approx(42));
  CHECK(std::string(anchor_name(b->anchor)) == "end");
  // Near the right edge the label cannot go right.
  auto c = placer.place_near(195, 20, 5);
  REQUIRE(c);
  CHECK(c->box.inside(Box{0, 0, 200, 100}));
  CHECK(c->box.x + c->box.w <= 195);
  // A label wider than the bounds never fits.
  CHECK_FALSE(placer.place_near(100, 50, 40));
  // place_first: occupied candidates are passed over; none free gives nullopt.
  auto d = placer.place_first({{58, 56, Anchor::Start}, {100, 90, Anchor::Middle}}, 3);
  REQUIRE(d);
  CHECK(d->x == 100);
  CHECK_FALSE(placer.place_first({{58, 56, Anchor::Start}}, 3));
}
