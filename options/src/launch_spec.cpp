// The launch record (launch_spec.hpp): polynomials, row-permuted views and the record's rules.
#include "tessel/options/launch_spec.hpp"

#include <fmt/format.h>

namespace tessel {

int64_t evaluate(const TensorMapPoly& p, std::span<const int64_t> ints) {
  int64_t sum = 0;
  for (const TensorMapTerm& t : p) {
    int64_t v = t.coeff;
    for (int i : t.params) v *= ints[static_cast<size_t>(i)];
    sum += v;
  }
  return sum;
}

std::string to_string(const TensorMapPoly& p, std::span<const std::string> param_names) {
  std::string out;
  for (const TensorMapTerm& t : p) {
    std::string term = t.params.empty() || t.coeff != 1 ? fmt::format("{}", t.coeff) : "";
    for (int i : t.params) term += (term.empty() ? "" : "*") + param_names[static_cast<size_t>(i)];
    out += (out.empty() ? "" : " + ") + term;
  }
  return out.empty() ? "0" : out;
}

bool view_fits(int warpgroups, int rows) {
  const int G = warpgroups;
  if (G <= 0 || rows % (64 * G) != 0) return false;
  const int I = rows / (64 * G);
  return 4 + (G > 1) + (I > 1) <= 5;
}

std::vector<TensorMapViewDim> row_permuted_view(int warpgroups, int rows) {
  if (!view_fits(warpgroups, rows)) return {};
  const int G = warpgroups, I = rows / (64 * G);
  std::vector<TensorMapViewDim> d{{1, 8}, {32 * G, 2}, {8, 4}};
  if (G > 1) d.push_back({32, G});
  if (I > 1) d.push_back({64 * G, I});
  return d;
}

int64_t view_unit(const TensorMapRecipe& r) { return r.view.empty() ? 0 : r.view.back().row_step; }

int view_warpgroups(const TensorMapRecipe& r) {
  return r.view.size() < 2 ? 0 : static_cast<int>(r.view[1].row_step / 32);  // {32 G, 2}
}

std::string check(const LaunchSpec& s) {
  if (s.symbol.empty()) return "no entry symbol";
  if (s.threads < 32 || s.threads > 1024 || s.threads % 32 != 0)
    return fmt::format("{} threads per CTA (a multiple of 32, at most 1024)", s.threads);
  if (s.programs_per_cta != 1 && s.programs_per_cta != 2)
    return fmt::format("programs_per_cta {} (1 or 2)", s.programs_per_cta);
  if (s.producer_warps && s.threads <= 32 * kProducerWarps)
    return fmt::format("{} threads per CTA leave none beside the producer warpgroup", s.threads);
  if (s.cluster_ctas != 1 && (s.cluster_ctas != 2 || s.tensor_maps.empty()))
    return fmt::format("cluster_ctas {}: 1, or 2 for a kernel whose TMA producers multicast", s.cluster_ctas);
  if (s.shared_bytes < 0 || s.shared_bytes > 227 * 1024)
    return fmt::format("shared_bytes {} outside 0 .. {}", s.shared_bytes, 227 * 1024);
  if (s.params < 0) return fmt::format("{} parameters", s.params);
  if (s.tensor_maps.empty()) return "";
  if (!s.producer_warps) return "tensor maps need producer warps";
  if (s.tensor_maps.size() > LaunchSpec::kMaxTensorMaps)
    return fmt::format("{} tensor maps (at most {})", s.tensor_maps.size(), LaunchSpec::kMaxTensorMaps);
  for (size_t m = 0; m < s.tensor_maps.size(); ++m) {
    const TensorMapRecipe& r = s.tensor_maps[m];
    const std::string at = fmt::format("tensor map {}", m);
    if (r.base_param < 0 || r.base_param >= s.params) return at + ": its tensor is not one of the kernel's parameters";
    for (const TensorMapPoly* p : {&r.rows, &r.cols, &r.row_stride})
      for (const TensorMapTerm& t : *p)
        for (int i : t.params)
          if (i < 0 || i >= s.params) return at + ": a size names no parameter of the kernel";
    auto box_ok = [](int64_t b) { return b >= 1 && b <= 256; };
    if (!box_ok(r.box_cols) || !box_ok(r.box_rows) || r.box_cols * TensorMapRecipe::kElemBytes > r.swizzle_bytes)
      return fmt::format("{}: box {} x {} outside TMA's limits for a {}-byte swizzle", at, r.box_cols, r.box_rows,
                         r.swizzle_bytes);
    if (r.swizzle_bytes != 32 && r.swizzle_bytes != 64 && r.swizzle_bytes != 128)
      return fmt::format("{}: swizzle of {} bytes (32, 64 or 128)", at, r.swizzle_bytes);
    if (r.view.size() > 4) return at + ": a view of more than 5 dimensions";
    for (const TensorMapViewDim& d : r.view)
      if (d.row_step < 1 || !box_ok(d.box)) return at + ": a view dimension outside TMA's limits";
    // The only views the lowering makes: a staged tile of box_rows rows for some warpgroups.
    if (!r.view.empty() && r.view != row_permuted_view(view_warpgroups(r), r.box_rows))
      return fmt::format("{}: a view that is not the row permutation of a {}-row staged tile", at, r.box_rows);
  }
  return "";
}

}  // namespace tessel
