// The roofline panel: kernels at their arithmetic intensity and achieved throughput, under the
// measured bandwidth, FMA and per-dtype tensor-core ceilings, fused kernels beside their unfused
// chains, every point labelled with its problem size where a label fits.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "tessel/report/label_placer.hpp"
#include "tessel/report/report_svg.hpp"

namespace tessel::samples::report {
namespace {

struct Point {
  size_t kernel;  // index into Results::kernels
  std::string size;
  double intensity, gflops;
  std::string config;
  std::string dot_dtype;  // whose ceiling the point is measured against ("" : the FMA one)
};

// Each kernel's best config per size, where it has flops and bytes (a log axis needs both > 0).
std::vector<Point> roofline_points(const Results& r) {
  std::vector<Point> pts;
  for (size_t k = 0; k < r.kernels.size(); ++k)
    for (const auto& s : r.kernels[k].sizes) {
      const ConfigRow* best = s.best_row();
      if (!best || best->median_ms <= 0 || s.flops <= 0 || s.bytes <= 0) continue;
      pts.push_back({k, s.size, s.flops / s.bytes, gflops(s.flops, best->median_ms), best->config, dot_dtype_of(s)});
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

// The panel's plot area and its log scales.
struct Frame {
  double px0, px1, py0, py1;
  LogScale sx, sy;
};

// Ranges: every point, every ridge with a decade of room each side, every ceiling.
Frame make_frame(const std::vector<Point>& pts, const Roofline& roof, double px0, double px1, double py0, double py1) {
  double xmin = 1e300, xmax = 0, ymin = 1e300, ymax = 0;
  for (const auto& p : pts) {
    xmin = std::min(xmin, p.intensity), xmax = std::max(xmax, p.intensity);
    ymin = std::min(ymin, p.gflops), ymax = std::max(ymax, p.gflops);
  }
  if (roof.known()) {
    xmin = std::min(xmin, roof.ridge() / 10), xmax = std::max(xmax, roof.ridge() * 10);
    ymax = std::max(ymax, roof.compute_gflops * 1.2);
    for (const TensorCeiling& t : roof.tensor)
      if (t.gflops > 0) xmax = std::max(xmax, roof.ridge(t.dtype) * 3), ymax = std::max(ymax, t.gflops * 1.2);
  }
  auto [xlo, xhi] = LogScale::decade_range(xmin, xmax);
  if (roof.known()) ymin = std::min(ymin, roof.bandwidth_gbs * xlo);
  auto [ylo, yhi] = LogScale::decade_range(ymin, ymax);
  return {px0, px1, py0, py1, LogScale(xlo, xhi, px0, px1), LogScale(ylo, yhi, py0, py1)};
}

void draw_axes(Svg& svg, const Frame& f, double x) {
  svg.rect(f.px0, f.py1, f.px1 - f.px0, f.py0 - f.py1, R"(fill="none" stroke="#333")");
  for (double v : f.sx.decades()) {
    svg.line(f.sx(v), f.py0, f.sx(v), f.py1, R"(class="grid" stroke="#e3e3e3")");
    svg.text(f.sx(v), f.py0 + 16, tick_label(v), R"(class="xtick" text-anchor="middle")");
  }
  for (double v : f.sy.decades()) {
    svg.line(f.px0, f.sy(v), f.px1, f.sy(v), R"(class="grid" stroke="#e3e3e3")");
    svg.text(f.px0 - 6, f.sy(v) + 4, tick_label(v), R"(class="ytick" text-anchor="end")");
  }
  const double my = (f.py0 + f.py1) / 2;
  svg.text((f.px0 + f.px1) / 2, f.py0 + 36, "arithmetic intensity (flop / byte)", R"(text-anchor="middle")");
  svg.text(x + 16, my, "achieved GFLOP/s",
           fmt::format(R"~(text-anchor="middle" transform="rotate(-90 {} {})")~", coord(x + 16), coord(my)));
}

// The measured ceilings: the roof min(FMA compute, bandwidth * intensity), then one flat
// tensor-core roof per dot dtype from its ridge on, each labelled where a label fits (the
// legend lists them all in any case).
void draw_ceilings(Svg& svg, const Frame& f, const Roofline& roof, LabelPlacer& labels) {
  const double xlo = f.sx.lo(), xhi = f.sx.hi();
  const double ridge = roof.ridge();
  std::vector<std::pair<double, double>> line{{f.sx(xlo), f.sy(roof.attainable_gflops(xlo))}};
  if (ridge > xlo && ridge < xhi) line.push_back({f.sx(ridge), f.sy(roof.compute_gflops)});
  line.push_back({f.sx(xhi), f.sy(roof.attainable_gflops(xhi))});
  svg.polyline(line, R"(class="ceiling" fill="none" stroke="#222" stroke-width="2")");
  const std::string fma = fmt::format("compute {:.1f} TFLOP/s (measured, f32 FMA)", roof.compute_gflops / 1e3);
  const double fy = f.sy(roof.compute_gflops);
  labels.block(labels.box_of(f.px1 - 4, fy - 6, fma.size(), Anchor::End));
  svg.text(f.px1 - 4, fy - 6, fma, R"(class="ceiling-label" text-anchor="end")");

  for (const TensorCeiling& t : roof.tensor) {
    if (t.gflops <= 0) continue;
    const double tr = std::max(roof.ridge(t.dtype), xlo), ty = f.sy(t.gflops);
    if (tr >= xhi) continue;
    svg.polyline({{f.sx(tr), ty}, {f.sx(xhi), ty}},
                 fmt::format(R"(class="tensor-ceiling" data-dtype="{}" fill="none" stroke="#555" stroke-width="1.5" )"
                             R"(stroke-dasharray="6 3")",
                             xml_escape(t.dtype)));
    const std::string text = fmt::format("{} tensor cores {:.1f} TFLOP/s", t.dtype, t.gflops / 1e3);
    // Above the line at its right end; else left of where it starts, above the bandwidth slope
    // where no kernel can be (ceilings of nearly equal height, f16 and bf16, stack there); else
    // above or below it at its right end, middle or ridge.
    std::vector<Candidate> where{{f.px1 - 4, ty - 5, Anchor::End}};
    for (double dy : {4.0, -8.0, 16.0}) where.push_back({f.sx(tr) - 6, ty + dy, Anchor::End});
    for (double dy : {-5.0, 13.0, 25.0, 37.0})
      for (auto [lx, anchor] : {std::pair{f.px1 - 4, Anchor::End}, std::pair{(f.sx(tr) + f.px1) / 2, Anchor::Middle},
                                std::pair{f.sx(tr) + 6, Anchor::Start}})
        where.push_back({lx, ty + dy, anchor});
    auto p = labels.place_first(where, text.size());
    if (p)
      svg.text(p->x, p->y, text,
               fmt::format(R"(class="tensor-ceiling-label" data-dtype="{}" text-anchor="{}" font-size="11")",
                           xml_escape(t.dtype), anchor_name(p->anchor)));
  }
  // The bandwidth label runs along the slope near the left edge, where kernels rarely sit.
  double lx = xlo * 1.15, ly = roof.bandwidth_gbs * lx;
  const double rad = std::atan2(f.sy(ly * 10) - f.sy(ly), f.sx(lx * 10) - f.sx(lx));
  const std::string bw = fmt::format("bandwidth {:.4g} GB/s", roof.bandwidth_gbs);
  svg.text(f.sx(lx), f.sy(ly) - 5, bw,
           fmt::format(R"~(class="ceiling-label" transform="rotate({:.1f} {} {})")~", rad * 180 / M_PI,
                       coord(f.sx(lx)), coord(f.sy(ly) - 5)));
  // Rotated, it is no box: other labels keep off a chain of small boxes along it.
  const double len = 6.5 * static_cast<double>(bw.size());
  for (double d = 0; d < len; d += 12) {
    const double cx = f.sx(lx) + (d + 6) * std::cos(rad) + 6 * std::sin(rad);
    const double cy = f.sy(ly) - 5 + (d + 6) * std::sin(rad) - 6 * std::cos(rad);
    labels.block({cx - 7, cy - 7, 14, 14});
  }
}

// A label at the point (px, py) where one fits; a leader line when it had to move away.
void label_point(Svg& svg, LabelPlacer& labels, double px, double py, const std::string& text,
                 const std::string& attrs) {
  auto p = labels.place_near(px, py, text.size());
  if (!p) return;
  if (p->leader)
    svg.line(px, py, p->leader_x, p->leader_y, R"(class="leader" stroke="#999" stroke-width="0.8")");
  svg.text(p->x, p->y, text, fmt::format(R"({} text-anchor="{}" font-size="11")", attrs, anchor_name(p->anchor)));
}

// Unfused chain -> fused kernel, at the largest size both have, labelled with the speedup.
void draw_fusion_arrows(Svg& svg, const Results& r, const Frame& f, const std::vector<Point>& pts,
                        const std::vector<size_t>& colours, LabelPlacer& labels) {
  std::string defs = "<defs>\n";  // arrow heads, one per colour in use
  for (size_t c : colours)
    if (defs.find(fmt::format("arrow-{}\"", c)) == std::string::npos)
      defs += fmt::format(
          "<marker id=\"arrow-{}\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" "
          "orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"{}\"/></marker>\n",
          c, group_colour(c));
  svg.raw(defs + "</defs>\n");
  for (size_t u = 0; u < r.kernels.size(); ++u) {
    const KernelResult& uk = r.kernels[u];
    if (uk.fused || uk.group.empty()) continue;
    for (size_t fk = 0; fk < r.kernels.size(); ++fk) {
      if (!r.kernels[fk].fused || r.kernels[fk].group != uk.group) continue;
      for (auto it = uk.sizes.rbegin(); it != uk.sizes.rend(); ++it) {
        const Point* a = find_point(pts, u, it->size);
        const Point* b = find_point(pts, fk, it->size);
        if (!a || !b) continue;
        const std::string col = group_colour(colours[u]);
        const double ax = f.sx(a->intensity), ay = f.sy(a->gflops), bx = f.sx(b->intensity), by = f.sy(b->gflops);
        svg.line(ax, ay, bx, by,
                 fmt::format(R"~(class="fusion-arrow" stroke="{}" stroke-width="1.5" marker-end="url(#arrow-{})")~", col,
                             colours[u]));
        label_point(svg, labels, (ax + bx) / 2, (ay + by) / 2, fmt::format("fused ({:.1f}x)", b->gflops / a->gflops),
                    fmt::format(R"(class="fusion-label" fill="{}")", col));
        break;
      }
      break;
    }
  }
}

// The points, then their labels: each kernel's name at its largest size first, then every
// point's problem size where a label still fits (markers are blocked before any label).
void draw_points(Svg& svg, const Results& r, const Frame& f, const std::vector<Point>& pts,
                 const std::vector<size_t>& colours, LabelPlacer& labels) {
  const Roofline& roof = r.roofline;
  for (const auto& p : pts) {
    const KernelResult& k = r.kernels[p.kernel];
    const std::string col = group_colour(colours[p.kernel]);
    std::string style = k.fused ? fmt::format(R"(fill="{}" stroke="{}")", col, col)
                                : fmt::format(R"(fill="white" stroke="{}" stroke-width="2")", col);
    const double attainable = roof.known() ? roof.attainable_gflops(p.intensity, p.dot_dtype) : 0;
    const std::string against =
        attainable > 0 ? fmt::format(", {:.0f}% of the {} roof", 100 * p.gflops / attainable,
                                     roof.compute_for(p.dot_dtype) == roof.compute_gflops ? "FMA"
                                                                                          : p.dot_dtype + " tensor-core")
                       : "";
    svg.circle(f.sx(p.intensity), f.sy(p.gflops), 5,
               fmt::format(R"(class="point" data-kernel="{}" data-size="{}"{} {})", xml_escape(k.name),
                           xml_escape(p.size), p.dot_dtype.empty() ? "" : " data-dtype=\"" + xml_escape(p.dot_dtype) + "\"",
                           style),
               fmt::format("{} {}: {:.1f} GFLOP/s at {:.3g} flop/byte{} ({})", k.name, p.size, p.gflops, p.intensity,
                           against, p.config));
  }
  for (size_t i = 0; i < pts.size(); ++i)
    if (i + 1 == pts.size() || pts[i + 1].kernel != pts[i].kernel) {
      const Point& p = pts[i];
      label_point(svg, labels, f.sx(p.intensity), f.sy(p.gflops), r.kernels[p.kernel].name,
                  fmt::format(R"(class="point-label" fill="{}")", group_colour(colours[p.kernel])));
    }
  for (const auto& p : pts)
    label_point(svg, labels, f.sx(p.intensity), f.sy(p.gflops), short_size(p.size),
                fmt::format(R"(class="size-label" data-kernel="{}" fill="#444")", xml_escape(r.kernels[p.kernel].name)));
}

// Legend: groups, what filled and hollow mean, and how each ceiling was measured.
void draw_legend(Svg& svg, const Results& r, const std::vector<size_t>& colours, double lx, double ly) {
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
  if (!r.roofline.known()) return;
  ly += 26;
  std::vector<std::string> lines{"ceilings measured on the card:", "bandwidth: a copy kernel,",
                                 "compute: an f32 FMA chain"};
  for (const TensorCeiling& t : r.roofline.tensor)
    if (t.gflops > 0) lines.push_back(fmt::format("{} tensor: a dot, {:.1f} TFLOP/s", t.dtype, t.gflops / 1e3));
  if (!r.roofline.tensor.empty()) lines.push_back("(a matmul against its dtype's)");
  for (size_t i = 0; i < lines.size(); ++i)
    svg.text(lx - 6, ly + 13 * static_cast<double>(i), lines[i], R"(class="legend-note" font-size="10" fill="#444")");
}

}  // namespace

void draw_roofline(Svg& svg, const Results& r, double x, double y, double w, double h) {
  const std::vector<Point> pts = roofline_points(r);
  const std::vector<size_t> colours = colour_indices(r);
  const double legend_w = 190;
  const double px0 = x + 70, px1 = x + w - legend_w, py0 = y + h - 45, py1 = y + 30;
  svg.text(x + 8, y + 16, "Roofline: each kernel at its best config (log-log)", R"(font-size="15" font-weight="bold")");
  if (pts.empty() && !r.roofline.known()) {
    svg.text(px0, y + h / 2, "no kernel with both flops and bytes to place", R"(fill="#666")");
    return;
  }
  const Frame f = make_frame(pts, r.roofline, px0, px1, py0, py1);
  draw_axes(svg, f, x);
  LabelPlacer labels(Box{px0, py1, px1 - px0, py0 - py1});
  for (const auto& p : pts) labels.block_point(f.sx(p.intensity), f.sy(p.gflops), 5);
  if (r.roofline.known()) draw_ceilings(svg, f, r.roofline, labels);
  draw_fusion_arrows(svg, r, f, pts, colours, labels);
  draw_points(svg, r, f, pts, colours, labels);
  draw_legend(svg, r, colours, px1 + 16, py1 + 4);
}

}  // namespace tessel::samples::report
