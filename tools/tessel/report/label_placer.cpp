// Greedy label placement: candidates in a fixed order, the first free one wins (deterministic).
#include "tessel/report/label_placer.hpp"

#include <algorithm>

namespace tessel::samples::report {

const char* anchor_name(Anchor a) {
  switch (a) {
    case Anchor::Start: return "start";
    case Anchor::Middle: return "middle";
    case Anchor::End: return "end";
  }
  return "start";
}

LabelPlacer::LabelPlacer(Box bounds, double char_w, double line_h)
    : bounds_(bounds), char_w_(char_w), line_h_(line_h) {}

Box LabelPlacer::box_of(double x, double y, size_t chars, Anchor anchor) const {
  const double w = char_w_ * static_cast<double>(chars);
  const double x0 = anchor == Anchor::Start ? x : anchor == Anchor::End ? x - w : x - w / 2;
  return {x0, y - line_h_ + 3, w, line_h_};
}

std::optional<Placement> LabelPlacer::place_first(const std::vector<Candidate>& candidates, size_t chars) {
  for (const Candidate& c : candidates) {
    const Box b = box_of(c.x, c.y, chars, c.anchor);
    if (!b.inside(bounds_)) continue;
    if (std::any_of(taken_.begin(), taken_.end(), [&](const Box& t) { return t.overlaps(b); })) continue;
    taken_.push_back(b);
    return Placement{c.x, c.y, c.anchor, b};
  }
  return std::nullopt;
}

std::optional<Placement> LabelPlacer::place_near(double px, double py, size_t chars, double gap) {
  // Baseline offsets that centre a line of text on py, or put it just above / below py.
  const double mid = line_h_ / 2 - 3, above = -3, below = line_h_ - 3;
  for (double scale : {1.0, 2.5, 4.0}) {
    const double g = gap * scale;
    const std::vector<Candidate> ring{
        {px + g, py + mid, Anchor::Start},       {px - g, py + mid, Anchor::End},
        {px, py - g + above, Anchor::Middle},    {px, py + g + below, Anchor::Middle},
        {px + g, py - g + above, Anchor::Start}, {px - g, py - g + above, Anchor::End},
        {px + g, py + g + below, Anchor::Start}, {px - g, py + g + below, Anchor::End},
    };
    std::optional<Placement> p = place_first(ring, chars);
    if (!p) continue;
    if (scale > 1) {
      // The leader ends at the point of the box nearest the anchor.
      p->leader = true;
      p->leader_x = std::clamp(px, p->box.x, p->box.x + p->box.w);
      p->leader_y = std::clamp(py, p->box.y, p->box.y + p->box.h);
    }
    return p;
  }
  return std::nullopt;
}

}  // namespace tessel::samples::report
