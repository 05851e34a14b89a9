// The ranked-config table: plain fixed-width text, identical on a terminal and in a log.
#include "tessel/report/report_table.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace tessel::samples::report {

std::string format_ms(double ms) {
  if (ms <= 0) return "-";
  if (ms < 1e-3) return fmt::format("{:.3g} ns", ms * 1e6);
  if (ms < 1) return fmt::format("{:.3g} us", ms * 1e3);
  if (ms < 1e3) return fmt::format("{:.3g} ms", ms);
  return fmt::format("{:.3g} s", ms * 1e-3);
}

std::string format_ceilings(const Roofline& roof) {
  std::string out = fmt::format("bandwidth {:.4g} GB/s, compute {:.4g} TFLOP/s", roof.bandwidth_gbs,
                                roof.compute_gflops / 1e3);
  if (roof.tensor.empty()) return out;
  out += ", tensor cores";
  for (const TensorCeiling& t : roof.tensor) out += fmt::format(" {} {:.4g}", t.dtype, t.gflops / 1e3);
  return out + " TFLOP/s";
}

std::string format_table(const SizeResult& s, const Roofline& roof) {
  std::vector<ConfigRow> rows = s.configs;
  rank_rows(rows);
  size_t width = 6;  // "config"
  for (const auto& r : rows) width = std::max(width, r.config.size());
  std::string out = fmt::format(" {:>4}  {:<{}}  {:>10}  {:>7}  {:>9}  {:>8}  {:>8}\n", "rank", "config", width,
                                "median", "spread", "GB/s", "TFLOP/s", "roofline");
  const std::string dot = dot_dtype_of(s);  // a matmul's fraction is of its dtype's tensor ceiling
  int rank = 0;
  for (const auto& r : rows) {
    std::string mark = r.config == s.best ? "*" : (r.config == s.default_config ? "d" : " ");
    if (!r.ok()) {
      out += fmt::format(" {:>4}  {:<{}}  {}: {}\n", "-", r.config, width, r.status, r.reason);
      continue;
    }
    double frac = roofline_fraction(roof, s.bytes, s.flops, r.median_ms, dot);
    out += fmt::format("{}{:>4}  {:<{}}  {:>10}  {:>6.1f}%  {:>9.1f}  {:>8.3f}  {:>8}\n", mark, ++rank, r.config, width,
                       format_ms(r.median_ms), 100 * r.spread(), gbs(s.bytes, r.median_ms),
                       gflops(s.flops, r.median_ms) / 1e3, roof.known() ? fmt::format("{:.1f}%", 100 * frac) : "-");
  }
  return out;
}

}  // namespace tessel::samples::report
