// Tensor-map recipes (tma_map.hpp): evaluating their parameter polynomials at launch.
#include "tessel/ir/tma_map.hpp"

#include <fmt/format.h>

namespace tessel::ir {

int64_t evaluate(const TmaPoly& p, std::span<const int64_t> args) {
  int64_t sum = 0;
  for (const TmaTerm& t : p) {
    int64_t v = t.coeff;
    for (int i : t.params) v *= args[static_cast<size_t>(i)];
    sum += v;
  }
  return sum;
}

std::string to_string(const TmaPoly& p, std::span<const std::string> param_names) {
  std::string out;
  for (const TmaTerm& t : p) {
    std::string term = t.params.empty() || t.coeff != 1 ? fmt::format("{}", t.coeff) : "";
    for (int i : t.params) term += (term.empty() ? "" : "*") + param_names[static_cast<size_t>(i)];
    out += (out.empty() ? "" : " + ") + term;
  }
  return out.empty() ? "0" : out;
}

}  // namespace tessel::ir
