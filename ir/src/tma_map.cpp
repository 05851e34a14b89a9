// Tensor-map recipes (tma_map.hpp): printing their polynomials, the row-permuted views.
#include "tessel/ir/tma_map.hpp"

#include <fmt/format.h>

namespace tessel::ir {

std::string to_string(const TmaPoly& p, std::span<const std::string> param_names) {
  std::string out;
  for (const TmaTerm& t : p) {
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

std::vector<TmaViewDim> view_dims(const TmaMap& m) {
  const int G = m.view_warpgroups, I = m.box_rows / (64 * G);
  std::vector<TmaViewDim> d{{1, 8}, {32 * G, 2}, {8, 4}};
  if (G > 1) d.push_back({32, G});
  if (I > 1) d.push_back({64 * G, I});
  return d;
}

int64_t view_unit(const TmaMap& m) { return view_dims(m).back().row_step; }

}  // namespace tessel::ir
