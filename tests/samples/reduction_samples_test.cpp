// Every row and reduction sample against its host reference at non-power-of-two widths, with
// contiguous and padded (strided) rows; sum of squares and MSE at sizes that exercise the masks.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "tessel/interp/float_formats.hpp"
#include "tessel/samples/reduction_kernels.hpp"
#include "tessel/samples/sample.hpp"

using namespace tessel;

namespace {
// Rows per width: fewer rows for wide rows keep the interpreter run short.
struct Shape {
  int64_t cols, rows;
};
constexpr Shape kShapes[] = {{1000, 5}, {4097, 3}, {30522, 2}};
constexpr int64_t kPad = 37;  // padded rows: stride = cols + 37 (odd, so rows are unaligned too)

int count_rows_samples() {
  int n = 0;
  for (const auto& s : samples::all_samples()) n += s.shape == samples::SampleShape::Rows;
  return n;
}
}  // namespace

TEST_CASE("every row sample matches its host reference at 1000, 4097 and 30522 columns, contiguous and strided") {
  CHECK(count_rows_samples() >= 13);
  auto t0 = std::chrono::steady_clock::now();
  for (const auto& s : samples::all_samples()) {
    if (s.shape != samples::SampleShape::Rows) continue;
    for (Shape sh : kShapes) {
      for (int64_t pad : {int64_t{0}, kPad}) {
        CAPTURE(s.name);
        CAPTURE(sh.cols);
        CAPTURE(pad);
        samples::RunConfig c;
        c.seed = 11 + static_cast<uint64_t>(sh.cols);
        c.rows = sh.rows;
        c.cols = sh.cols;
        c.row_stride = sh.cols + pad;
        samples::RunResult r = s.run(c);
        INFO("first mismatch: " << r.first_mismatch);
        CHECK(r.verified);
        CHECK(r.mismatches == 0);
        // cross-entropy checks one loss per row; the others at least the rows x cols output
        CHECK(r.checked >= (s.name == "cross_entropy" ? sh.rows : sh.rows * sh.cols));
      }
    }
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("row samples took " << s << " s");
}

TEST_CASE("row samples derive rows from n and honour a BLOCK override") {
  for (std::string name :
       {"softmax_online", "softmax_unfused", "layernorm_looped_f16", "cross_entropy", "rmsnorm_f32"}) {
    for (int64_t block : {64, 512}) {
      CAPTURE(name);
      CAPTURE(block);
      samples::RunConfig c;
      c.n = 3000;  // 3 rows of the default 1000 columns
      c.meta = jit::Meta{{"BLOCK", block}};
      auto r = samples::find_sample(name)->run(c);
      INFO("first mismatch: " << r.first_mismatch);
      CHECK(r.verified);
      CHECK(r.checked >= (name == "cross_entropy" ? 3 : 3000));
    }
  }
  samples::RunConfig bad;
  bad.cols = 100;
  bad.row_stride = 99;
  // The user's sizes: a UserError (the CLI exits 1), not a tessel bug.
  CHECK_THROWS_AS(samples::find_sample("softmax")->run(bad), UserError);
}

TEST_CASE("sum of squares and MSE match at sizes 1, 1000, 4097 and 1000003") {
  for (const char* name : {"sum_squares", "mse"}) {
    const samples::Sample* s = samples::find_sample(name);
    REQUIRE(s != nullptr);
    CHECK(s->shape == samples::SampleShape::Total);
    for (int64_t n : {int64_t{1}, int64_t{1000}, int64_t{4097}, int64_t{1000003}}) {
      CAPTURE(name);
      CAPTURE(n);
      samples::RunConfig c;
      c.n = n;
      c.seed = 5;
      auto r = s->run(c);
      INFO("first mismatch: " << r.first_mismatch);
      CHECK(r.verified);
      CHECK(r.checked == 1);
    }
  }
}

TEST_CASE("a row kernel writes exactly cols elements per row and never the padding") {
  // softmax over 999 of each 1000-column row: column 999 and the padding must stay poisoned.
  const int64_t cols = 1000, stride = 1010;
  auto hx = samples::random_floats(2 * stride, 3);
  jit::Array<float> x(hx), out(2 * stride);
  out.poison();
  samples::k_softmax_online(jit::Grid{2}, {}, x, out, cols - 1, stride, stride);
  auto o = out.download();
  double sum = 0;
  for (int64_t k = 0; k < cols - 1; ++k) sum += o[k];
  CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));  // the kernel ran...
  CHECK(std::isnan(o[cols - 1]));                   // ...and left column 999 unwritten
  CHECK(std::isnan(o[cols]));                       // and the padding
}

TEST_CASE("LayerNorm (row and persistent): shifted one-pass statistics hold when the mean dwarfs the spread") {
  // Rows around 1000 with a spread of a few units: E[x^2] - E[x]^2 in f32 would lose ~1e-2 of
  // the variance; the row's first element as the shift keeps mean and rstd at f32 accuracy.
  const int64_t rows = 5, cols = 777;
  std::vector<uint16_t> xh(rows * cols), wh(cols), bh(cols);
  std::vector<double> xv(rows * cols);
  uint32_t state = 12345;
  auto next = [&] { return (state = state * 1664525u + 1013904223u) >> 8; };
  for (int64_t i = 0; i < rows * cols; ++i) {
    xh[i] = interp::f16_from_double(1000.0 + 0.5 * static_cast<double>(next() % 17) - 4.0);
    xv[i] = interp::f16_to_double(xh[i]);
  }
  for (int64_t k = 0; k < cols; ++k) wh[k] = interp::f16_from_double(1.0), bh[k] = interp::f16_from_double(0.0);
  for (bool persistent : {false, true}) {
    CAPTURE(persistent);
    jit::Array<uint16_t> x(xh), w(wh), b(bh), y(std::vector<uint16_t>(rows * cols, 0x7e00));
    jit::Array<float> mean(std::vector<float>(rows, -1.0f)), rstd(std::vector<float>(rows, -1.0f));
    if (persistent)
      samples::k_layernorm_persistent_f16(jit::Grid{2}, jit::Meta{{"BLOCK", 1024}}, x, w, b, y, mean, rstd, rows, cols,
                                          cols, 1e-5f);
    else
      samples::k_layernorm_f16(jit::Grid{rows}, jit::Meta{{"BLOCK", 1024}}, x, w, b, y, mean, rstd, cols, cols, 1e-5f);
    auto m = mean.download(), r = rstd.download();
    auto out = y.download();
    for (int64_t i = 0; i < rows; ++i) {
      double mu = 0, var = 0;
      for (int64_t k = 0; k < cols; ++k) mu += xv[i * cols + k];
      mu /= cols;
      for (int64_t k = 0; k < cols; ++k) var += (xv[i * cols + k] - mu) * (xv[i * cols + k] - mu);
      const double rs = 1.0 / std::sqrt(var / cols + 1e-5);
      CAPTURE(i);
      CHECK(std::abs(m[i] - mu) < 1e-4 * mu);
      CHECK(std::abs(r[i] - rs) < 1e-4 * rs);
      for (int64_t k = 0; k < cols; k += 97)
        CHECK(std::abs(interp::f16_to_double(out[i * cols + k]) - (xv[i * cols + k] - mu) * rs) < 5e-3);
    }
  }
}
