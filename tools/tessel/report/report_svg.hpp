// The tuning report as an SVG picture: each kernel on the device roofline, and config time per size.
#pragma once
#include <string>

#include "tessel/samples/report_results.hpp"
#include "tessel/report/svg_writer.hpp"

namespace tessel::samples::report {

// The whole picture: a title, the roofline panel (when the roofline is known), then one small
// panel per kernel of config time per problem size. Pure text, deterministic.
std::string render_svg(const Results& r);

// The panels, drawn into `svg` inside the box (x, y, w, h).
//
// Roofline: log-log, arithmetic intensity (flop/byte) on x, achieved GFLOP/s on y; the measured
// bandwidth slope and f32 FMA roof (<polyline class="ceiling">), and a dashed flat roof per
// measured tensor-core dtype (<polyline class="tensor-ceiling" data-dtype="f16">, labelled
// <text class="tensor-ceiling-label">); one point per kernel and size (its best config), a
// kernel's group sharing a colour, unfused chains hollow, and an arrow labelled "fused" from each
// unfused chain to its fused kernel at their largest common size. Points are <circle
// class="point" data-kernel=... data-size=... [data-dtype=...]>, their tooltip giving the % of
// their own roof (a matmul's dtype's tensor ceiling). Each kernel's name labels its largest size
// (<text class="point-label">) and every point's short size (<text class="size-label">) where a
// label fits without overlapping another (LabelPlacer; moved labels get a leader line).
void draw_roofline(Svg& svg, const Results& r, double x, double y, double w, double h);
// Config time: sizes across; up, each ok config's median time over the best's at that size
// (linear, capped at 3x), the best's time printed under its size. The best is a coloured
// <circle class="best">, the others grey <circle class="config">, the untuned default boxed.
// `top`: the ratio at the top of the y axis (config_time_top), shared by every panel of a
// picture so that panels compare; 0: this kernel's own.
void draw_config_times(Svg& svg, const KernelResult& k, const std::string& colour, double x, double y, double w,
                       double h, double top = 0);
// The top of the config-time axis for these kernels: the first of 1.1, 1.25, 1.5, 2 and 3 at or
// above the slowest ok config's time over its size's best (3 when slower still).
double config_time_top(const std::vector<KernelResult>& kernels);

// "n=16777216" -> "16M", "rows=8192,cols=4096" -> "8192x4096", "M=8192,N=8192,K=8192" ->
// "8192^3": a size's values, short.
std::string short_size(const std::string& size);

// The colour of the i-th group ("#1f77b4", ...), cycling.
std::string group_colour(size_t i);

}  // namespace tessel::samples::report
