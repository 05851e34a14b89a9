// Throughput, roofline and ranking arithmetic over tuning results.
#include "tessel/samples/report_results.hpp"

#include <algorithm>

namespace tessel::samples::report {

const ConfigRow* SizeResult::best_row() const {
  for (const auto& r : configs)
    if (r.ok()) return &r;
  return nullptr;
}

const ConfigRow* SizeResult::find(const std::string& config) const {
  for (const auto& r : configs)
    if (r.config == config) return &r;
  return nullptr;
}

double Roofline::attainable_gflops(double intensity) const {
  return std::min(compute_gflops, bandwidth_gbs * intensity);
}

double gbs(double bytes, double ms) { return ms > 0 ? bytes / (ms * 1e-3) / 1e9 : 0; }

double gflops(double flops, double ms) { return ms > 0 ? flops / (ms * 1e-3) / 1e9 : 0; }

double roofline_fraction(const Roofline& r, double bytes, double flops, double ms) {
  if (!r.known() || ms <= 0) return 0;
  if (flops <= 0 || bytes <= 0) return bytes > 0 ? gbs(bytes, ms) / r.bandwidth_gbs : 0;
  return gflops(flops, ms) / r.attainable_gflops(flops / bytes);
}

void rank_rows(std::vector<ConfigRow>& rows) {
  // stable: failed rows keep the order the tuner reported them in
  std::stable_sort(rows.begin(), rows.end(), [](const ConfigRow& a, const ConfigRow& b) {
    if (a.ok() != b.ok()) return a.ok();
    if (!a.ok()) return false;
    if (a.median_ms != b.median_ms) return a.median_ms < b.median_ms;
    return a.config < b.config;
  });
}

void merge_results(Results& into, const Results& from) {
  if (!from.device.empty()) into.device = from.device;
  if (from.roofline.known()) into.roofline = from.roofline;
  for (const KernelResult& k : from.kernels) {
    auto it = std::find_if(into.kernels.begin(), into.kernels.end(), [&](const KernelResult& o) { return o.name == k.name; });
    if (it == into.kernels.end()) {
      into.kernels.push_back(k);
      continue;
    }
    it->group = k.group;
    it->fused = k.fused;
    for (const SizeResult& s : k.sizes) {
      auto st = std::find_if(it->sizes.begin(), it->sizes.end(), [&](const SizeResult& o) { return o.size == s.size; });
      if (st == it->sizes.end()) it->sizes.push_back(s);
      else *st = s;
    }
    // sizes run small to large in the plot
    std::stable_sort(it->sizes.begin(), it->sizes.end(),
                     [](const SizeResult& a, const SizeResult& b) { return a.bytes < b.bytes; });
  }
}

}  // namespace tessel::samples::report
