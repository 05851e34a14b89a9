// The tuning report as an SVG picture: each kernel on the device roofline, and config time per size.
#pragma once
#include <string>

#include "tessel/samples/report_results.hpp"
#include "tessel/samples/svg_writer.hpp"

namespace tessel::samples::report {

// The whole picture: a title, the roofline panel (when the roofline is known), then one small
// panel per kernel of config time per problem size. Pure text, deterministic.
std::string render_svg(const Results& r);

// The panels, drawn into `svg` inside the box (x, y, w, h).
//
// Roofline: log-log, arithmetic intensity (flop/byte) on x, achieved GFLOP/s on y; the measured
// bandwidth slope and compute roof; one point per kernel and size (its best config), a kernel's
// group sharing a colour, unfused chains hollow, and an arrow labelled "fused" from each unfused
// chain to its fused kernel at their largest common size. Points are <circle class="point"
// data-kernel=... data-size=...>.
void draw_roofline(Svg& svg, const Results& r, double x, double y, double w, double h);
// Config time: sizes across; up, each ok config's median time over the best's at that size
// (linear, capped at 3x), the best's time printed under its size. The best is a coloured
// <circle class="best">, the others grey <circle class="config">, the untuned default boxed.
void draw_config_times(Svg& svg, const KernelResult& k, const std::string& colour, double x, double y, double w,
                       double h);

// The colour of the i-th group ("#1f77b4", ...), cycling.
std::string group_colour(size_t i);

}  // namespace tessel::samples::report
