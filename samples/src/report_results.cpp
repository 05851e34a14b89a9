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

double Roofline::compute_for(std::string_view dtype) const {
  if (!dtype.empty())
    for (const TensorCeiling& t : tensor)
      if (t.dtype == dtype && t.gflops > 0) return t.gflops;
  return compute_gflops;
}

double Roofline::attainable_gflops(double intensity, std::string_view dtype) const {
  return std::min(compute_for(dtype), bandwidth_gbs * intensity);
}

double gbs(double bytes, double ms) { return ms > 0 ? bytes / (ms * 1e-3) / 1e9 : 0; }

double gflops(double flops, double ms) { return ms > 0 ? flops / (ms * 1e-3) / 1e9 : 0; }

double roofline_fraction(const Roofline& r, double bytes, double flops, double ms, std::string_view dot_dtype) {
  if (!r.known() || ms <= 0) return 0;
  if (flops <= 0 || bytes <= 0) return bytes > 0 ? gbs(bytes, ms) / r.bandwidth_gbs : 0;
  return gflops(flops, ms) / r.attainable_gflops(flops / bytes, dot_dtype);
}

std::string dot_dtype_of(const SizeResult& s) {
  if (!s.dot_dtype.empty()) return s.dot_dtype;
  // "M=4096,N=4096,K=4096;sig=f16,f16,f16": the matmul tunables' key (tunables_matmul.cpp).
  const size_t semi = s.key.find(";sig=");
  if (semi == std::string::npos) return "";
  const std::string params = "," + s.key.substr(0, semi);
  for (const char* p : {",M=", ",N=", ",K="})
    if (params.find(p) == std::string::npos) return "";
  const std::string sig = s.key.substr(semi + 5);
  const std::string first = sig.substr(0, sig.find(','));
  if (first == "f16" || first == "bf16" || first == "i8") return first;
  if (first != "f32") return "";
  // f32 dots run as tf32 on the tensor cores unless the config says otherwise (ALLOW_TF32=0).
  const ConfigRow* best = s.best_row();
  const std::string& config = best ? best->config : s.best;
  return (" " + config + " ").find(" ALLOW_TF32=0 ") == std::string::npos ? "tf32" : "";
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
