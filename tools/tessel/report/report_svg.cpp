// The tuning report picture: title, roofline panel, and a grid of per-kernel config-time panels.
#include "tessel/report/report_svg.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace tessel::samples::report {

std::string group_colour(size_t i) {
  static const char* const kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                                         "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};
  return kPalette[i % (sizeof(kPalette) / sizeof(kPalette[0]))];
}

std::string render_svg(const Results& r) {
  const double width = 1000, roof_h = 520, panel_w = 320, panel_h = 220;
  const size_t rows = (r.kernels.size() + 2) / 3;
  const double top = 50, panels_top = top + roof_h + 30;
  Svg svg(width, panels_top + 24 + static_cast<double>(rows) * (panel_h + 16) + 10);
  svg.text(20, 28, fmt::format("tessel tune: {}", r.device.empty() ? "unknown device" : r.device),
           R"(font-size="18" font-weight="bold")");
  draw_roofline(svg, r, 20, top, width - 40, roof_h);

  svg.text(28, panels_top + 12, "Time of each config per problem size, relative to the best (one scale; best time below; default boxed)",
           R"(font-size="15" font-weight="bold")");
  // Colours follow the roofline panel's groups.
  std::vector<std::string> groups;
  const double time_top = config_time_top(r.kernels);  // one y scale across the panels
  for (size_t i = 0; i < r.kernels.size(); ++i) {
    const KernelResult& k = r.kernels[i];
    const std::string& g = k.group.empty() ? k.name : k.group;
    auto it = std::find(groups.begin(), groups.end(), g);
    size_t c = static_cast<size_t>(it - groups.begin());
    if (it == groups.end()) groups.push_back(g);
    double px = 20 + static_cast<double>(i % 3) * (panel_w + 6);
    double py = panels_top + 24 + static_cast<double>(i / 3) * (panel_h + 16);
    svg.open_group(fmt::format(R"(class="kernel-panel" data-kernel="{}")", xml_escape(k.name)));
    draw_config_times(svg, k, group_colour(c), px, py, panel_w, panel_h, time_top);
    svg.close_group();
  }
  return svg.str();
}

}  // namespace tessel::samples::report
