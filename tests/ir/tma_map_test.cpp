// Tensor-map recipes: their parameter polynomials print with the parameters' names (the
// runtime evaluates them at launch: tests/bundle, rt::evaluate).
#include <doctest/doctest.h>

#include <array>
#include <string>

#include "tessel/ir/tma_map.hpp"

using tessel::ir::TmaPoly;

TEST_CASE("a tensor-map polynomial prints with the parameters' names") {
  // 2 * args[1] * args[2] - 3 + args[0]
  const TmaPoly p{{2, {1, 2}}, {-3, {}}, {1, {0}}};
  const std::array<std::string, 3> names{"M", "K", "lda"};
  CHECK(tessel::ir::to_string(p, names) == "2*K*lda + -3 + M");
  CHECK(tessel::ir::to_string(TmaPoly{}, names) == "0");
}
