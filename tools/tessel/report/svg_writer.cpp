// SVG text building and the log-scale mapping behind the report's plots.
#include "tessel/report/svg_writer.hpp"

#include <fmt/format.h>

#include <cmath>

#include "tessel/ir/error.hpp"

namespace tessel::samples::report {

std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string coord(double v) {
  if (!std::isfinite(v)) v = 0;  // never write nan/inf into the document
  std::string s = fmt::format("{:.1f}", v);
  return s == "-0.0" ? "0.0" : s;
}

std::string tick_label(double v) {
  double a = std::fabs(v);
  if (a >= 1e9) return fmt::format("{:g}G", v / 1e9);
  if (a >= 1e6) return fmt::format("{:g}M", v / 1e6);
  if (a >= 1e3) return fmt::format("{:g}k", v / 1e3);
  return fmt::format("{:g}", v);
}

Svg::Svg(double width, double height) : width_(width), height_(height) {}

void Svg::line(double x1, double y1, double x2, double y2, std::string_view attrs) {
  body_ += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" {}/>\n", coord(x1), coord(y1), coord(x2),
                       coord(y2), attrs);
}

void Svg::rect(double x, double y, double w, double h, std::string_view attrs) {
  body_ += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" {}/>\n", coord(x), coord(y), coord(w),
                       coord(h), attrs);
}

void Svg::circle(double cx, double cy, double r, std::string_view attrs, std::string_view title) {
  std::string head = fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{}\" {}", coord(cx), coord(cy), coord(r), attrs);
  if (title.empty()) body_ += head + "/>\n";
  else body_ += fmt::format("{}><title>{}</title></circle>\n", head, xml_escape(title));
}

void Svg::polyline(const std::vector<std::pair<double, double>>& pts, std::string_view attrs) {
  std::string p;
  for (const auto& [x, y] : pts) p += fmt::format("{}{},{}", p.empty() ? "" : " ", coord(x), coord(y));
  body_ += fmt::format("<polyline points=\"{}\" {}/>\n", p, attrs);
}

void Svg::text(double x, double y, std::string_view s, std::string_view attrs) {
  body_ += fmt::format("<text x=\"{}\" y=\"{}\" {}>{}</text>\n", coord(x), coord(y), attrs, xml_escape(s));
}

void Svg::open_group(std::string_view attrs) {
  body_ += fmt::format("<g {}>\n", attrs);
  ++open_groups_;
}

void Svg::close_group() {
  TESSEL_ASSERT(open_groups_ > 0, "Svg::close_group without an open group");
  body_ += "</g>\n";
  --open_groups_;
}

void Svg::raw(std::string_view s) { body_ += s; }

std::string Svg::str() const {
  TESSEL_ASSERT(open_groups_ == 0, "Svg::str with an open group");
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n"
      "<rect x=\"0\" y=\"0\" width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n{2}</svg>\n",
      coord(width_), coord(height_), body_);
}

LogScale::LogScale(double lo, double hi, double p0, double p1) : lo_(lo), hi_(hi), p0_(p0), p1_(p1) {
  TESSEL_ASSERT(lo > 0 && hi > lo, "LogScale needs 0 < lo < hi");
}

double LogScale::operator()(double v) const {
  double t = (std::log10(v) - std::log10(lo_)) / (std::log10(hi_) - std::log10(lo_));
  return p0_ + t * (p1_ - p0_);
}

std::vector<double> LogScale::decades() const {
  std::vector<double> out;
  for (int e = static_cast<int>(std::floor(std::log10(lo_) + 1e-9)); e <= static_cast<int>(std::floor(std::log10(hi_) + 1e-9)); ++e) {
    double v = std::pow(10.0, e);
    if (v >= lo_ * (1 - 1e-9) && v <= hi_ * (1 + 1e-9)) out.push_back(v);
  }
  return out;
}

std::pair<double, double> LogScale::decade_range(double min, double max) {
  TESSEL_ASSERT(min > 0 && max >= min, "decade_range needs 0 < min <= max");
  double lo = std::pow(10.0, std::floor(std::log10(min) + 1e-9));
  double hi = std::pow(10.0, std::ceil(std::log10(max) - 1e-9));
  if (hi <= lo) lo /= 10, hi *= 10;
  return {lo, hi};
}

}  // namespace tessel::samples::report
