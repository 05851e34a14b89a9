// samples/torch/mse_sum_kernel.hpp without PyTorch: the kernel behind torch.ops.tessel.mse_sum over
// stand-in at::Tensor arguments (fake_aten) against a float64 host sum, with the launches its plan
// gives, and the plan itself (chunks that keep the kernel's i32 offsets below 2^31). The operator
// is tested with PyTorch on a GPU (samples/torch/test_tessel_torch.py).
#include "torch_pointer.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "mse_sum_kernel.hpp"
#include "tensor_buffer.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;
namespace tk = tessel::torch_ext::kernels;

namespace {

struct Inputs {
  std::vector<float> pred, target;
  double want = 0;  // sum((pred - target)^2) in float64
};

Inputs random_inputs(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 3.0f);
  Inputs in;
  in.pred.resize(static_cast<size_t>(n));
  in.target.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    in.pred[i] = dist(rng);
    in.target[i] = dist(rng);
    const double d = double(in.pred[i]) - double(in.target[i]);
    in.want += d * d;
  }
  return in;
}

// Runs the plan's launches for n elements into an output that starts at `start` (the kernel adds,
// so the result must be start + the sum), and returns the output.
float run_plan(const Inputs& in, const std::vector<tk::MseSumLaunch>& plan, float start) {
  const size_t n = in.pred.size();
  tessel_test::Buffer p(n), t(n), out(1);
  p.write(in.pred);
  t.write(in.target);
  out.write({start});
  for (const tk::MseSumLaunch& l : plan) {
    tk::k_mse_sum(jit::Grid{l.grid}, jit::Meta{}, p.tensor_at(static_cast<size_t>(l.offset)),
                  t.tensor_at(static_cast<size_t>(l.offset)), out.tensor(), l.count);
  }
  return out.read()[0];
}

}  // namespace

TEST_CASE("mse_sum kernel: sum of squared differences at odd sizes, one program or many, against float64") {
  for (int64_t n : {int64_t{1}, int64_t{4097}, int64_t{100003}}) {
    // 2 programs walk many blocks each (the loop); 1000 give every block its own program.
    for (int64_t programs : {int64_t{2}, int64_t{1000}}) {
      CAPTURE(n);
      CAPTURE(programs);
      const Inputs in = random_inputs(n, static_cast<uint32_t>(n));
      const auto plan = tk::mse_sum_launches(n, programs);
      REQUIRE(plan.size() == 1);
      const float got = run_plan(in, plan, 0.5f);
      CHECK(std::fabs(double(got) - 0.5 - in.want) <= 1e-6 * (in.want + 0.5));
    }
  }
}

TEST_CASE("mse_sum kernel: chunked launches add into one output, each chunk from its own offset") {
  // Chunks of 8192 elements (2 blocks) for 20000 elements: 3 launches, the last one partial.
  const int64_t n = 20000;
  const Inputs in = random_inputs(n, 7);
  const auto plan = tk::mse_sum_launches(n, 3, tk::kMseSumBlock, 8192);
  REQUIRE(plan.size() == 3);
  CHECK(plan[2].offset == 16384);
  CHECK(plan[2].count == 3616);
  const float got = run_plan(in, plan, 0.0f);
  CHECK(std::fabs(double(got) - in.want) <= 1e-6 * in.want);
}

TEST_CASE("mse_sum plan: chunks of 2^30 keep the kernel's i32 offsets and loop counter below 2^31") {
  CHECK(tk::mse_sum_launches(0, 528).empty());
  const auto one = tk::mse_sum_launches(5000, 528);
  REQUIRE(one.size() == 1);
  CHECK(one[0].offset == 0);
  CHECK(one[0].count == 5000);
  CHECK(one[0].grid == 2);  // 2 blocks of 4096: fewer programs than allowed
  CHECK(tk::mse_sum_launches(5000, 0)[0].grid == 1);  // at least one program

  const int64_t n = (int64_t{1} << 31) + 5;  // past i32: three launches
  const auto plan = tk::mse_sum_launches(n, 528);
  REQUIRE(plan.size() == 3);
  int64_t covered = 0;
  for (const tk::MseSumLaunch& l : plan) {
    CAPTURE(l.offset);
    CHECK(l.offset == covered);
    covered += l.count;
    CHECK(l.count <= tk::kMseSumChunk);
    // The kernel's largest i32 values: the last loop counter (start + P * BLOCK) and offset.
    const int64_t last_start = (l.count - 1) / tk::kMseSumBlock * tk::kMseSumBlock;
    CHECK(last_start + int64_t{l.grid} * tk::kMseSumBlock <= INT32_MAX);
    CHECK(last_start + tk::kMseSumBlock - 1 <= INT32_MAX);
  }
  CHECK(covered == n);
  CHECK(plan[0].grid == 528);
  CHECK(plan[2].count == 5);
  CHECK(plan[2].grid == 1);
}
