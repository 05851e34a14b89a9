// rand/randn on the current device agree with ir/philox.hpp: aligned offsets (one Philox call
// per four registers) and scattered offsets (one call per element).
#include <doctest/doctest.h>

#include <cmath>

#include "tessel/ir/philox.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;
using namespace tessel::lang;

namespace {
void random_kernel(Ptr<f32> u, Ptr<f32> z, Int n, Int seed, Int stride, Int shift, const Meta& m) {
  const int BLOCK = m["BLOCK"];
  auto i = program_id(0) * BLOCK + arange(0, BLOCK);
  auto mask = i < n;
  auto offs = i * stride + shift;
  store(u + i, rand(seed, offs), mask);
  store(z + i, randn(seed, offs), mask);
}
jit::Kernel k_random{"random", &random_kernel, {"u", "z", "n", "seed", "stride", "shift"}, Meta{{"BLOCK", 512}}};
}  // namespace

TEST_CASE("rand and randn follow the Philox stream of ir/philox.hpp") {
  MESSAGE("random numbers run on: " << jit::Device::current().describe());
  const int64_t n = 4097;
  for (auto [seed, stride, shift] : {std::tuple{7, 1, 0}, std::tuple{-3, 1, 16}, std::tuple{123456, 3, 1},
                                     std::tuple{5, 1, 2}}) {
    CAPTURE(seed);
    CAPTURE(stride);
    CAPTURE(shift);
    jit::Array<float> u(n), z(n);
    u.poison();
    z.poison();
    k_random(jit::Grid{jit::cdiv(n, 512)}, {}, u, z, n, seed, stride, shift);
    auto hu = u.download(), hz = z.download();
    int64_t bad_u = 0, bad_z = 0;
    for (int64_t i = 0; i < n; ++i) {
      auto off = static_cast<int32_t>(i * stride + shift);
      bad_u += hu[i] != ir::philox::rand(seed, off);
      bad_z += !(std::fabs(hz[i] - ir::philox::randn(seed, off)) <= 2e-5f * (1.0f + std::fabs(hz[i])));
    }
    CHECK(bad_u == 0);  // bit for bit
    CHECK(bad_z == 0);  // approximate log/cos/sin on the GPU
  }
}
