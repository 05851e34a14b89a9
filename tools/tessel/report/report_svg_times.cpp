// The config-time panel of one kernel: every config's median time at each problem size.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "tessel/report/report_svg.hpp"
#include "tessel/report/report_table.hpp"

namespace tessel::samples::report {

std::string short_size(const std::string& size) {
  std::string out;
  std::vector<std::string> values;
  size_t pos = 0;
  while (pos <= size.size()) {
    size_t end = size.find(',', pos);
    if (end == std::string::npos) end = size.size();
    std::string part = size.substr(pos, end - pos);
    size_t eq = part.find('=');
    std::string v = eq == std::string::npos ? part : part.substr(eq + 1);
    int64_t n = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec == std::errc() && p == v.data() + v.size() && n >= (1 << 20) && n % (1 << 20) == 0) v = fmt::format("{}M", n >> 20);
    else if (ec == std::errc() && p == v.data() + v.size() && n >= (1 << 14) && n % 1024 == 0) v = fmt::format("{}K", n >> 10);
    out += (out.empty() ? "" : "x") + v;
    values.push_back(v);
    pos = end + 1;
  }
  // A cube (M = N = K) reads shorter as one value: "8192^3".
  if (values.size() == 3 && values[0] == values[1] && values[1] == values[2]) return values[0] + "^3";
  return out;
}

namespace {
// The slowest ok config's time over its size's best (1 when none ran).
double worst_ratio(const KernelResult& k) {
  double worst = 1;
  for (const auto& s : k.sizes)
    if (const ConfigRow* b = s.best_row(); b && b->median_ms > 0)
      for (const auto& c : s.configs)
        if (c.ok()) worst = std::max(worst, c.median_ms / b->median_ms);
  return worst;
}
}  // namespace

double config_time_top(const std::vector<KernelResult>& kernels) {
  double worst = 1;
  for (const auto& k : kernels) worst = std::max(worst, worst_ratio(k));
  double top = 1.1;
  for (double t : {1.1, 1.25, 1.5, 2.0, 3.0})
    if (top < worst) top = t;
  return top;
}

void draw_config_times(Svg& svg, const KernelResult& k, const std::string& colour, double x, double y, double w,
                       double h, double top) {
  // Configs differ by percents while sizes differ by decades: each size's column shows every
  // config's time relative to that size's best (linear, capped), the best's own time printed below.
  const double px0 = x + 44, px1 = x + w - 10, py0 = y + h - 44, py1 = y + 24;
  svg.text(x + 4, y + 14, k.fused ? k.name : k.name + " (unfused chain)",
           fmt::format(R"(font-weight="bold" fill="{}")", colour));
  svg.rect(px0, py1, px1 - px0, py0 - py1, R"(fill="none" stroke="#333")");
  if (std::none_of(k.sizes.begin(), k.sizes.end(), [](const SizeResult& s) { return s.best_row() != nullptr; })) {
    svg.text(px0 + 8, (py0 + py1) / 2, "no config ran", R"(fill="#666")");
    return;
  }
  // The top of the axis: a round ratio above the slowest config (of every panel), at most 3x.
  const double worst = worst_ratio(k);  // above `top`: capped, and the top tick says so
  if (top <= 0) top = config_time_top({k});
  auto sy = [&](double ratio) { return py0 - 4 - (std::min(ratio, top) - 1) / (top - 1) * (py0 - py1 - 8); };
  for (double t : {1.0, 1.05, 1.1, 1.25, 1.5, 2.0, 3.0}) {
    if (t > top) break;
    if (top > 1.5 && (t == 1.05 || t == 1.1)) continue;  // keep the labels apart
    svg.line(px0, sy(t), px1, sy(t), R"(class="grid" stroke="#e3e3e3")");
    svg.text(px0 - 4, sy(t) + 4, fmt::format("{}{:g}x", t == top && worst > top ? ">" : "", t),
             R"(class="ytick" text-anchor="end" font-size="10")");
  }
  svg.text(x + 8, (py0 + py1) / 2, "time / best",
           fmt::format(R"~(text-anchor="middle" font-size="10" transform="rotate(-90 {} {})")~", coord(x + 8),
                       coord((py0 + py1) / 2)));

  const size_t n = k.sizes.size();
  auto sx = [&](size_t i) { return px0 + (px1 - px0) * (static_cast<double>(i) + 0.5) / static_cast<double>(n); };
  for (size_t i = 0; i < n; ++i) {
    const SizeResult& s = k.sizes[i];
    svg.text(sx(i), py0 + 14, short_size(s.size), R"(class="xtick" text-anchor="middle" font-size="10")");
    const ConfigRow* b = s.best_row();
    if (!b || b->median_ms <= 0) continue;
    svg.text(sx(i), py0 + 27, format_ms(b->median_ms),
             fmt::format(R"(class="best-time" text-anchor="middle" font-size="10" fill="{}")", colour));
    for (const auto& c : s.configs) {
      if (!c.ok() || c.median_ms <= 0) continue;
      const double ratio = c.median_ms / b->median_ms;
      const std::string tip =
          fmt::format("{} {}: {} ({:.3f}x the best)", s.size, c.config, format_ms(c.median_ms), ratio);
      if (c.config == s.default_config)
        svg.rect(sx(i) - 5, sy(ratio) - 5, 10, 10, R"(class="default" fill="none" stroke="#333")");
      if (&c == b) svg.circle(sx(i), sy(ratio), 4.5, fmt::format(R"(class="best" fill="{}")", colour), tip);
      else svg.circle(sx(i), sy(ratio), 2.5, R"(class="config" fill="#9a9a9a")", tip);
    }
    if (const ConfigRow* d = s.find(s.default_config); d && d->ok() && d->median_ms > 0 && i + 1 == n)
      svg.text(px1 - 2, py1 + 12, fmt::format("tuned: {:.2f}x the default's speed", d->median_ms / b->median_ms),
               R"(class="speedup" text-anchor="end" font-size="10")");
  }
}

}  // namespace tessel::samples::report
