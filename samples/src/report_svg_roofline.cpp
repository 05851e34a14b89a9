// The roofline panel: kernels at their arithmetic intensity and achieved throughput, under the
// measured bandwidth and compute ceilings, fused kernels beside their unfused chains.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "tessel/samples/report_svg.hpp"

namespace tessel::samples::report {
namespace {

struct Point {
  size_t kernel;  // index into Results::kernels
  std::string size;
  double intensity, gflops;
  std::string config;
};

// Each kernel's best config per size, where it has flops and bytes (a log axis needs both > 0).
std::vector<Point> roofline_points(const Results& r) {
  std::vector<Point> pts;
  for (size_t k = 0; k < r.kernels.size(); ++k)
    for (const auto& s : r.kernels[k].sizes) {
      const ConfigRow* best = s.best_row();
      if (!best || best->median_ms <= 0 || s.flops <= 0 || s.bytes <= 0) continue;
      pts.push_back({k, s.size, s.flops / s.bytes, gflops(s.flops, best->median_ms), best->config});
    }
  return pts;
}

// Groups in order of first appearance: the colour index of each kernel.
std::vector<size_t> colour_indices(const Results& r) {
  std::vector<std::string> groups;
  std::vector<size_t> out;
  for (const auto& k : r.kernels) {
    const std::string& g = k.group.empty() ? k.name : k.group;
    auto it = std::find(groups.begin(), groups.end(), g);
    out.push_back(static_cast<size_t>(it - groups.begin()));
    if (it == groups.end()) groups.push_back(g);
  }
  return out;
}

const Point* find_point(const std::vector<Point>& pts, size_t kernel, const std::string& size) {
  for (const auto& p : pts)
    if (p.kernel == kernel && p.size == size) return &p;
  return nullptr;
}

// Greedy placement of short labels: each moves down or up a line at a time until it overlaps
// no label placed before it (text width estimated at 6.2 px a character at 11 px).
class LabelPlacer {
 public:
  // The y to write the label at; `x` is its left edge, or its right edge when `anchor_end`.
  double place(double x, double y, size_t chars, bool anchor_end) {
    const double w = 6.2 * static_cast<double>(chars), h = 12;
    const double x0 = anchor_end ? x - w : x;
    for (int i = 0; i < 16; ++i) {
      const double dy = (i % 2 ? 1.0 : -1.0) * ((i + 1) / 2) * h;  // 0, +h, -h, +2h, ...
      const double y0 = y + dy - h + 2;
      bool clear = true;
      for (const auto& b : placed_)
        if (x0 < b.x + b.w && b.x < x0 + w && y0 < b.y + b.h && b.y < y0 + h) clear = false;
      if (clear) {
        placed_.push_back({x0, y0, w, h});
        return y + dy;
      }
    }
    return y;
  }

 private:
  struct Box {
    double x, y, w, h;
  };
  std::vector<Box> placed_;
};

}  // namespace

void draw_roofline(Svg& svg, const Results& r, double x, double y, double w, double h) {
  const std::vector<Point> pts = roofline_points(r);
  const std::vector<size_t> colours = colour_indices(r);
  const Roofline& roof = r.roofline;
  const double legend_w = 190;
  const double px0 = x + 70, px1 = x + w - legend_w, py0 = y + h - 45, py1 = y + 30;
  svg.text(x + 8, y + 16, "Roofline: each kernel at its best config (log-log)", R"(font-size="15" font-weight="bold")");
  if (pts.empty() && !roof.known()) {
    svg.text(px0, y + h / 2, "no kernel with both flops and bytes to place", R"(fill="#666")");
    return;
  }

  // Ranges: every point, the ridge, and a decade of room each side of it.
  double xmin = 1e300, xmax = 0, ymin = 1e300, ymax = 0;
  for (const auto& p : pts) {
    xmin = std::min(xmin, p.intensity), xmax = std::max(xmax, p.intensity);
    ymin = std::min(ymin, p.gflops), ymax = std::max(ymax, p.gflops);
  }
  if (roof.known()) {
    xmin = std::min(xmin, roof.ridge() / 10), xmax = std::max(xmax, roof.ridge() * 10);
    ymax = std::max(ymax, roof.compute_gflops * 1.2);
  }
  auto [xlo, xhi] = LogScale::decade_range(xmin, xmax);
  if (roof.known()) ymin = std::min(ymin, roof.bandwidth_gbs * xlo);
  auto [ylo, yhi] = LogScale::decade_range(ymin, ymax);
  LogScale sx(xlo, xhi, px0, px1), sy(ylo, yhi, py0, py1);

  // Grid, ticks and axis titles.
  svg.rect(px0, py1, px1 - px0, py0 - py1, R"(fill="none" stroke="#333")");
  for (double v : sx.decades()) {
    svg.line(sx(v), py0, sx(v), py1, R"(class="grid" stroke="#e3e3e3")");
    svg.text(sx(v), py0 + 16, tick_label(v), R"(class="xtick" text-anchor="middle")");
  }
  for (double v : sy.decades()) {
    svg.line(px0, sy(v), px1, sy(v), R"(class="grid" stroke="#e3e3e3")");
    svg.text(px0 - 6, sy(v) + 4, tick_label(v), R"(class="ytick" text-anchor="end")");
  }
  svg.text((px0 + px1) / 2, py0 + 36, "arithmetic intensity (flop / byte)", R"(text-anchor="middle")");
  svg.text(x + 16, (py0 + py1) / 2, "achieved GFLOP/s",
           fmt::format(R"~(text-anchor="middle" transform="rotate(-90 {} {})")~", coord(x + 16), coord((py0 + py1) / 2)));

  // The measured ceilings: min(compute, bandwidth * intensity).
  if (roof.known()) {
    const double ridge = roof.ridge();
    std::vector<std::pair<double, double>> line{{sx(xlo), sy(roof.attainable_gflops(xlo))}};
    if (ridge > xlo && ridge < xhi) line.push_back({sx(ridge), sy(roof.compute_gflops)});
    line.push_back({sx(xhi), sy(roof.attainable_gflops(xhi))});
    svg.polyline(line, R"(class="ceiling" fill="none" stroke="#222" stroke-width="2")");
    svg.text(px1 - 4, sy(roof.compute_gflops) - 6,
             fmt::format("compute {:.1f} TFLOP/s (measured, f32 FMA)", roof.compute_gflops / 1e3),
             R"(class="ceiling-label" text-anchor="end")");
    // The bandwidth label runs along the slope near the left edge, where kernels rarely sit.
    double lx = xlo * 1.15, ly = roof.bandwidth_gbs * lx;
    double angle = std::atan2(sy(ly * 10) - sy(ly), sx(lx * 10) - sx(lx)) * 180 / M_PI;
    svg.text(sx(lx), sy(ly) - 5, fmt::format("bandwidth {:.4g} GB/s", roof.bandwidth_gbs),
             fmt::format(R"~(class="ceiling-label" transform="rotate({:.1f} {} {})")~", angle, coord(sx(lx)),
                         coord(sy(ly) - 5)));
  }

  // Arrow heads, one per colour in use.
  std::string defs = "<defs>\n";
  for (size_t c : colours)
    if (defs.find(fmt::format("arrow-{}\"", c)) == std::string::npos)
      defs += fmt::format(
          "<marker id=\"arrow-{}\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" "
          "orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"{}\"/></marker>\n",
          c, group_colour(c));
  svg.raw(defs + "</defs>\n");

  LabelPlacer labels;
  // Unfused chain -> fused kernel, at the largest size both have.
  for (size_t u = 0; u < r.kernels.size(); ++u) {
    const KernelResult& uk = r.kernels[u];
    if (uk.fused) continue;
    for (size_t f = 0; f < r.kernels.size(); ++f) {
      const KernelResult& fk = r.kernels[f];
      if (!fk.fused || fk.group != uk.group || uk.group.empty()) continue;
      for (auto it = uk.sizes.rbegin(); it != uk.sizes.rend(); ++it) {
        const Point* a = find_point(pts, u, it->size);
        const Point* b = find_point(pts, f, it->size);
        if (!a || !b) continue;
        const std::string col = group_colour(colours[u]);
        svg.line(sx(a->intensity), sy(a->gflops), sx(b->intensity), sy(b->gflops),
                 fmt::format(R"~(class="fusion-arrow" stroke="{}" stroke-width="1.5" marker-end="url(#arrow-{})")~", col,
                             colours[u]));
        const std::string label = fmt::format("fused ({:.1f}x)", b->gflops / a->gflops);
        const double lx = (sx(a->intensity) + sx(b->intensity)) / 2 + 6;
        const double ly = labels.place(lx, (sy(a->gflops) + sy(b->gflops)) / 2 + 12, label.size(), false);
        svg.text(lx, ly, label, fmt::format(R"(class="fusion-label" fill="{}" font-size="11")", col));
        break;
      }
      break;
    }
  }

  // The points; each kernel named at its largest size.
  for (const auto& p : pts) {
    const KernelResult& k = r.kernels[p.kernel];
    const std::string col = group_colour(colours[p.kernel]);
    std::string style = k.fused ? fmt::format(R"(fill="{}" stroke="{}")", col, col)
                                : fmt::format(R"(fill="white" stroke="{}" stroke-width="2")", col);
    svg.circle(sx(p.intensity), sy(p.gflops), 5,
               fmt::format(R"(class="point" data-kernel="{}" data-size="{}" {})", xml_escape(k.name),
                           xml_escape(p.size), style),
               fmt::format("{} {}: {:.1f} GFLOP/s at {:.3g} flop/byte ({})", k.name, p.size, p.gflops, p.intensity,
                           p.config));
    if (&p == &pts.back() || pts[&p - pts.data() + 1].kernel != p.kernel) {
      // fused names to the right of their point, unfused chains' to the left
      const double lx = k.fused ? sx(p.intensity) + 8 : sx(p.intensity) - 8;
      const double ly = labels.place(lx, sy(p.gflops) + 4, k.name.size(), !k.fused);
      svg.text(lx, ly, k.name,
               fmt::format(R"(class="point-label" fill="{}" font-size="11"{})", col, k.fused ? "" : R"( text-anchor="end")"));
    }
  }

  // Legend: groups, and what filled and hollow mean.
  double ly = py1 + 4;
  const double lx = px1 + 16;
  std::vector<size_t> seen;
  for (size_t k = 0; k < r.kernels.size(); ++k) {
    if (std::find(seen.begin(), seen.end(), colours[k]) != seen.end()) continue;
    seen.push_back(colours[k]);
    const std::string& g = r.kernels[k].group.empty() ? r.kernels[k].name : r.kernels[k].group;
    svg.circle(lx, ly, 5, fmt::format(R"(class="legend" fill="{}")", group_colour(colours[k])));
    svg.text(lx + 10, ly + 4, g, "");
    ly += 18;
  }
  ly += 8;
  svg.circle(lx, ly, 5, R"(class="legend" fill="#555")");
  svg.text(lx + 10, ly + 4, "fused kernel (one launch)", R"(font-size="11")");
  ly += 18;
  svg.circle(lx, ly, 5, R"(class="legend" fill="white" stroke="#555" stroke-width="2")");
  svg.text(lx + 10, ly + 4, "unfused chain", R"(font-size="11")");
  if (roof.known()) {
    ly += 26;
    svg.text(lx - 6, ly, "ceilings measured on the card:", R"(font-size="10" fill="#444")");
    svg.text(lx - 6, ly + 13, "bandwidth: a copy kernel,", R"(font-size="10" fill="#444")");
    svg.text(lx - 6, ly + 26, "compute: an f32 FMA chain", R"(font-size="10" fill="#444")");
  }
}

}  // namespace tessel::samples::report
