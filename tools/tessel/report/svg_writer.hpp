// A minimal SVG text builder and a log-scale axis mapping, for the tuning report's plots.
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessel::samples::report {

// Escapes &, <, >, " and ' for XML text and attribute values.
std::string xml_escape(std::string_view s);

// Appends SVG elements as text. Coordinates print with one decimal (deterministic output).
// `attrs` are extra attributes written verbatim (already escaped), e.g. R"(fill="#123456")".
class Svg {
 public:
  Svg(double width, double height);
  void line(double x1, double y1, double x2, double y2, std::string_view attrs);
  void rect(double x, double y, double w, double h, std::string_view attrs);
  // `title` (escaped here) becomes a <title> child: a tooltip in browsers.
  void circle(double cx, double cy, double r, std::string_view attrs, std::string_view title = {});
  void polyline(const std::vector<std::pair<double, double>>& pts, std::string_view attrs);
  void text(double x, double y, std::string_view s, std::string_view attrs);  // `s` escaped here
  void open_group(std::string_view attrs);
  void close_group();
  void raw(std::string_view s);  // e.g. <defs>; must be well-formed
  std::string str() const;       // the whole document, ending with a newline

 private:
  double width_, height_;
  std::string body_;
  int open_groups_ = 0;
};

// Maps [lo, hi] (both > 0) to pixels [p0, p1] on a log10 scale; p1 < p0 for a y axis.
class LogScale {
 public:
  LogScale(double lo, double hi, double p0, double p1);
  double operator()(double v) const;
  double lo() const { return lo_; }
  double hi() const { return hi_; }
  // Powers of ten in [lo, hi].
  std::vector<double> decades() const;
  // A range of whole decades covering [min, max] (min, max > 0; equal values get a decade each side).
  static std::pair<double, double> decade_range(double min, double max);

 private:
  double lo_, hi_, p0_, p1_;
};

// "0.01", "1", "100", "10k", "1M": a tick label for a power of ten or a round value.
std::string tick_label(double v);
// Coordinates with one decimal: "12.5".
std::string coord(double v);

}  // namespace tessel::samples::report
