// A greedy placer for short text labels on a plot: each label takes the first of a few positions
// around its anchor that overlaps no label or obstacle placed before it, else a farther one with
// a leader line back to the anchor, else none (the label is skipped).
#pragma once
#include <cstddef>
#include <optional>
#include <vector>

namespace tessel::samples::report {

// An axis-aligned box in SVG coordinates (y grows downwards).
struct Box {
  double x = 0, y = 0, w = 0, h = 0;
  bool overlaps(const Box& o) const { return x < o.x + o.w && o.x < x + w && y < o.y + o.h && o.y < y + h; }
  bool inside(const Box& o) const { return x >= o.x && y >= o.y && x + w <= o.x + o.w && y + h <= o.y + o.h; }
};

enum class Anchor { Start, Middle, End };  // SVG text-anchor
const char* anchor_name(Anchor a);          // "start", "middle", "end"

// Where a label went: its text position (x, baseline y, alignment), its box, and whether it
// needs a leader line from the anchor point to (leader_x, leader_y) on the box's edge.
struct Placement {
  double x = 0, y = 0;
  Anchor anchor = Anchor::Start;
  Box box;
  bool leader = false;
  double leader_x = 0, leader_y = 0;
};

// A candidate position of a label: text at (x, y) with `anchor`.
struct Candidate {
  double x, y;
  Anchor anchor;
};

class LabelPlacer {
 public:
  // Labels stay inside `bounds`. Text width is estimated at `char_w` px a character and its box
  // is `line_h` tall, from line_h - 3 above the baseline to 3 below (11 px text by default).
  explicit LabelPlacer(Box bounds, double char_w = 6.2, double line_h = 12);

  // Something labels must not cover (a point's marker, a legend); labels placed are added too.
  void block(const Box& b) { taken_.push_back(b); }
  void block_point(double x, double y, double r) { block({x - r, y - r, 2 * r, 2 * r}); }

  // The box of `chars` characters of text at (x, y) with `anchor`.
  Box box_of(double x, double y, size_t chars, Anchor anchor) const;

  // The first free candidate (nullopt when all collide or leave the bounds); it is taken.
  std::optional<Placement> place_first(const std::vector<Candidate>& candidates, size_t chars);

  // A label for the point (px, py): eight positions around it `gap` px away (right, left,
  // above, below, then the diagonals), then the same at 2.5x and 4x the distance with a leader
  // line; nullopt when every one collides (the caller skips the label).
  std::optional<Placement> place_near(double px, double py, size_t chars, double gap = 8);

  const std::vector<Box>& taken() const { return taken_; }

 private:
  Box bounds_;
  double char_w_, line_h_;
  std::vector<Box> taken_;
};

}  // namespace tessel::samples::report
