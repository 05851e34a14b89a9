// Tensor-map recipes: their parameter polynomials evaluate on a launch's arguments.
#include <doctest/doctest.h>

#include <array>
#include <string>

#include "tessel/ir/tma_map.hpp"

using tessel::ir::TmaPoly;

TEST_CASE("a tensor-map polynomial evaluates over the arguments and prints with their names") {
  // 2 * args[1] * args[2] - 3 + args[0]
  const TmaPoly p{{2, {1, 2}}, {-3, {}}, {1, {0}}};
  const std::array<int64_t, 3> args{7, 11, 1000003};
  CHECK(tessel::ir::evaluate(p, args) == 2 * 11 * 1000003 - 3 + 7);
  CHECK(tessel::ir::evaluate(TmaPoly{}, args) == 0);
  const std::array<std::string, 3> names{"M", "K", "lda"};
  CHECK(tessel::ir::to_string(p, names) == "2*K*lda + -3 + M");
  CHECK(tessel::ir::to_string(TmaPoly{}, names) == "0");
}
