// The roofline probes' ceilings: measure_roofline turns each probe's best time into GB/s or
// GFLOP/s (flops / time, per dot dtype for the tensor-core probes), run on the interpreter with
// a timer that reports a fixed time; and the dot probes compute C = A @ B within their bounds.
#include <doctest/doctest.h>

#include <cmath>

#include "tessel/jit/device.hpp"
#include "tessel/jit/tune/tuner.hpp"
#include "tessel/samples/tunables.hpp"

using namespace tessel;
using namespace tessel::samples;

namespace {

// Runs each repetition once for real (so the tuner checks outputs) and says it took `ms`.
class FixedTimer final : public jit::tune::Timer {
 public:
  explicit FixedTimer(double ms) : ms_(ms) {}
  jit::tune::Timing time(const std::function<void()>& run, const std::function<void()>& reset,
                         const jit::tune::TimerOptions&) override {
    if (reset) reset();
    run();
    return jit::tune::summarize({ms_});
  }

 private:
  double ms_;
};

}  // namespace

TEST_CASE("measure_roofline: each ceiling is the probe's work over its best time, a tensor ceiling per dtype") {
  FixedTimer timer(2.5);
  jit::tune::TuneOptions o;
  report::Roofline r = measure_roofline(timer, o, 4096);
  // copy: 8 bytes per element; FMA chain: 2 * 512 flops per element; dots: 2 * 64^3 flops.
  CHECK(r.bandwidth_gbs == doctest::Approx(8.0 * 4096 / 2.5e-3 / 1e9));
  CHECK(r.compute_gflops == doctest::Approx(2.0 * 512 * 4096 / 2.5e-3 / 1e9));
  REQUIRE(r.tensor.size() == 3);
  const char* dtypes[] = {"f16", "bf16", "tf32"};
  for (size_t i = 0; i < 3; ++i) {
    CAPTURE(dtypes[i]);
    CHECK(r.tensor[i].dtype == dtypes[i]);
    CHECK(r.tensor[i].gflops == doctest::Approx(2.0 * 64 * 64 * 64 / 2.5e-3 / 1e9));
  }
  CHECK(r.compute_for("bf16") == doctest::Approx(2.0 * 64 * 64 * 64 / 2.5e-3 / 1e9));
}

TEST_CASE("the dot probes compute C = A @ B, count 2 M N K flops and key on M, N, K and dtype") {
  for (const auto& [name, sig] : {std::pair{"roofline_dot_f16", "f16,f16,f16"}, std::pair{"roofline_dot_bf16", "bf16,bf16,bf16"},
                                  std::pair{"roofline_dot_tf32", "f32,f32,f32"}}) {
    const std::string probe = name;
    CAPTURE(probe);
    const Tunable* t = find_tunable(probe);
    REQUIRE(t != nullptr);
    CHECK(t->probe);
    CHECK(t->sizes.front().dims == std::vector<int64_t>{8192, 8192, 8192});
    const SizeArgs s{{33, 48, 40}};  // every tile masked
    auto p = t->make_problem(s);
    CHECK(p.key == std::string("M=64,N=64,K=64;sig=") + sig);
    CHECK(p.flops == 2.0 * 33 * 48 * 40);
    const double elem = std::string(sig).rfind("f32", 0) == 0 ? 4 : 2;
    CHECK(p.bytes == elem * (33 * 40 + 40 * 48 + 33 * 48));
    const auto expected = p.reference();
    REQUIRE(expected.values.size() == 33 * 48);
    REQUIRE(expected.tolerance.size() == expected.values.size());
    const auto configs = t->configs(s);
    for (const auto& c : {configs.front(), configs[4]}) {  // the default tile, and 128x128 on 4 warps
      CAPTURE(c.str());
      p.poison();
      p.compile(c);
      p.launch(c);
      jit::Device::current().synchronize();
      const auto got = p.output();
      REQUIRE(got.size() == expected.values.size());
      size_t bad = 0;
      for (size_t i = 0; i < got.size(); ++i) bad += !(std::fabs(got[i] - expected.values[i]) <= expected.tolerance[i]);
      CHECK(bad == 0);
      bool varied = false;
      for (double v : got) varied |= v != got.front();
      CHECK(varied);
    }
  }
}
