// Every sample against its host reference on random inputs, at sizes that exercise the masks.
#include <doctest/doctest.h>

#include <cmath>

#include "tessel/ir/philox.hpp"
#include "tessel/samples/elementwise_kernels.hpp"
#include "tessel/samples/sample.hpp"

using namespace tessel;

TEST_CASE("every elementwise sample matches its host reference (sizes 1, 1000, 4096, 1000003)") {
  jit::Device& dev = jit::Device::current();
  MESSAGE("samples run on: " << dev.describe());
  for (const auto& s : samples::all_samples()) {
    if (s.shape != samples::SampleShape::Elements) continue;  // see reduction_samples_test.cpp
    for (int64_t n : {int64_t{1}, int64_t{1000}, int64_t{4096}, int64_t{1000003}}) {
      for (uint64_t seed : {uint64_t{1}, uint64_t{77}}) {
        CAPTURE(s.name);
        CAPTURE(n);
        CAPTURE(seed);
        samples::RunResult r = s.run({n, seed, {}});
        INFO("first mismatch: " << r.first_mismatch);
        CHECK(r.verified);
        CHECK(r.checked == n);
        CHECK(r.mismatches == 0);
      }
    }
  }
}

TEST_CASE("samples honour a BLOCK override") {
  for (const char* name : {"add", "chain5_unfused", "bias_gelu_dropout"}) {
    for (int64_t block : {64, 256, 4096}) {
      CAPTURE(name);
      CAPTURE(block);
      auto r = samples::find_sample(name)->run({1000003, 3, jit::Meta{{"BLOCK", block}}});
      CHECK(r.verified);
    }
  }
}

TEST_CASE("the check catches unwritten (poisoned) outputs and wrong values") {
  // Launch over fewer elements than the output holds: the tail keeps its NaN poison.
  const int64_t n = 5000;
  auto hx = samples::random_floats(n, 5), hy = samples::random_floats(n, 6);
  jit::Array<float> x(hx), y(hy), out(n);
  out.poison();
  samples::k_add(jit::Grid{jit::cdiv(n - 100, 1024)}, {}, x, y, out, n - 100);
  std::vector<double> ref(n);
  for (int64_t i = 0; i < n; ++i) ref[i] = double(hx[i]) + hy[i];
  auto r = samples::compare(out.download(), ref, 1e-7, 1.2e-7);
  CHECK_FALSE(r.verified);
  CHECK(r.mismatches == 100);
  CHECK(r.first_mismatch.find("out[4900]") != std::string::npos);

  ref[7] += 1e-3;  // a wrong reference value is caught too
  samples::k_add(jit::Grid{jit::cdiv(n, 1024)}, {}, x, y, out, n);
  auto r2 = samples::compare(out.download(), ref, 1e-7, 1.2e-7);
  CHECK(r2.mismatches == 1);
}

TEST_CASE("dropout keeps about 1 - p of the elements and matches the Philox stream") {
  const int64_t n = 1 << 16;
  auto hx = samples::random_floats(n, 9, 1.0f, 2.0f);  // never zero
  jit::Array<float> x(hx), out(n);
  out.poison();
  samples::k_dropout(jit::Grid{jit::cdiv(n, 1024)}, {}, x, out, n, 0.25f, 1234);
  auto o = out.download();
  int64_t kept = 0;
  for (int64_t i = 0; i < n; ++i) {
    bool keep = ir::philox::rand(1234, static_cast<int32_t>(i)) > 0.25f;
    kept += keep;
    if (keep) CHECK(std::fabs(o[i] - hx[i] / 0.75f) <= 1e-6f * std::fabs(o[i]));
    else CHECK(o[i] == 0.0f);
  }
  CHECK(std::fabs(double(kept) / n - 0.75) < 0.01);
}
