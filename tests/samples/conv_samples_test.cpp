// The Conv2d -> BN -> ReLU samples against their host reference at odd sizes (H, W, output
// channels not multiples of the tile), for 3x3 and 1x1 filters with stride 1 and 2, fused and
// unfused and split over K, single-stage and pipelined; a channel count the K block does not
// divide is the user's error.
#include <doctest/doctest.h>

#include "tessel/ir/error.hpp"
#include "tessel/samples/sample.hpp"

using namespace tessel;

namespace {
samples::RunConfig config(int64_t batch, int64_t h, int64_t w, int64_t c, int64_t k, jit::Meta meta, int stages) {
  samples::RunConfig cfg;
  cfg.seed = static_cast<uint64_t>(h * 131 + w * 7 + c + k);
  cfg.meta = std::move(meta);
  cfg.conv = {batch, h, w, c, k};
  cfg.options.num_stages = stages;
  return cfg;
}
}  // namespace

TEST_CASE("conv2d_bn_relu, fused, unfused and split-K, match the host reference for 3x3 and 1x1 filters, strides 1 and 2") {
  struct Filter {
    int r, stride, pad;
  };
  for (const char* name : {"conv2d_bn_relu", "conv2d_bn_relu_unfused", "conv2d_bn_relu_splitk"}) {
    const samples::Sample* s = samples::find_sample(name);
    REQUIRE(s != nullptr);
    CHECK(s->shape == samples::SampleShape::Conv);
    for (Filter f : {Filter{3, 1, 1}, Filter{3, 2, 1}, Filter{1, 1, 0}, Filter{1, 2, 0}})
      for (int stages : {1, 3}) {
        CAPTURE(name);
        CAPTURE(f.r);
        CAPTURE(f.stride);
        CAPTURE(stages);
        const jit::Meta meta{{"BLOCK_M", 32}, {"BLOCK_N", 16}, {"BLOCK_K", 16}, {"R", f.r},
                             {"S", f.r},      {"STRIDE", f.stride}, {"PAD", f.pad}};
        // 2 images of 7 x 9 pixels, 32 input channels (two K blocks per tap), 24 output channels.
        samples::RunResult r = s->run(config(2, 7, 9, 32, 24, meta, stages));
        INFO("first mismatch: " << r.first_mismatch);
        CHECK(r.verified);
        const int64_t p = (7 + 2 * f.pad - f.r) / f.stride + 1, q = (9 + 2 * f.pad - f.r) / f.stride + 1;
        CHECK(r.checked == 2 * p * q * 24);
        CHECK(r.launches == (std::string(name) == "conv2d_bn_relu" ? 1 : 2));
      }
  }
}

TEST_CASE("conv2d_bn_relu with producer warps: the warpgroup computes the im2col addresses and masks and fills the ring") {
  // warp_specialize on the GPU (sm_90a): 4 producer warps copy both tiles by cp.async from
  // addresses computed from the loop index; the interpreter runs the same kernels. H, W and the
  // output channels are not multiples of the tiles; C = 64 is two K blocks per tap.
  struct Case {
    const char* sample;
    int r, stride, pad, stages;
    int64_t splits;
  };
  for (Case k : {Case{"conv2d_bn_relu", 3, 1, 1, 3, 0}, Case{"conv2d_bn_relu", 1, 2, 0, 2, 0},
                 Case{"conv2d_bn_relu_unfused", 3, 2, 1, 3, 0}, Case{"conv2d_bn_relu_splitk", 3, 1, 1, 4, 3}}) {
    CAPTURE(k.sample);
    CAPTURE(k.r);
    CAPTURE(k.stride);
    const samples::Sample* s = samples::find_sample(k.sample);
    REQUIRE(s != nullptr);
    const jit::Meta meta{{"BLOCK_M", 64}, {"BLOCK_N", 32}, {"BLOCK_K", 32}, {"R", k.r},
                         {"S", k.r},      {"STRIDE", k.stride}, {"PAD", k.pad}};
    samples::RunConfig c = config(2, 9, 11, 64, 40, meta, k.stages);
    c.options.warp_specialize = true;
    c.splits = k.splits;
    samples::RunResult r = s->run(c);
    INFO("first mismatch: " << r.first_mismatch);
    CHECK(r.verified);
    const int64_t p = (9 + 2 * k.pad - k.r) / k.stride + 1, q = (11 + 2 * k.pad - k.r) / k.stride + 1;
    CHECK(r.checked == 2 * p * q * 40);
  }
}

TEST_CASE("conv2d_bn_relu_splitk: one slice, uneven slices and more slices than K blocks; the counters end at zero") {
  const samples::Sample* s = samples::find_sample("conv2d_bn_relu_splitk");
  REQUIRE(s != nullptr);
  // K = 3 * 3 * 32 = 288: 18 blocks of 16. 1 slice; 4: slices of 5, 5, 5 and 3 blocks; 7: slices
  // of ceil(18 / 7) = 3 blocks, so 6 of them; 100: one block each (18).
  for (int64_t splits : {1, 4, 7, 100}) {
    CAPTURE(splits);
    samples::RunConfig c = config(2, 7, 9, 32, 24, {{"BLOCK_M", 32}, {"BLOCK_N", 16}, {"BLOCK_K", 16}}, 2);
    c.splits = splits;
    samples::RunResult r = s->run(c);  // throws when an arrival counter is left nonzero
    INFO("first mismatch: " << r.first_mismatch);
    CHECK(r.verified);
    CHECK(r.checked == 2 * 7 * 9 * 24);
  }
}

TEST_CASE("conv2d_bn_relu: the default tiles on a ResNet-like layer; bad channel counts and filters are user errors") {
  const samples::Sample* s = samples::find_sample("conv2d_bn_relu");
  REQUIRE(s != nullptr);
  samples::RunResult r = s->run(config(1, 5, 6, 64, 70, {}, 3));  // 128 x 64 x 64 tiles, one K block per tap
  INFO("first mismatch: " << r.first_mismatch);
  CHECK(r.verified);
  CHECK(r.checked == 5 * 6 * 70);
  CHECK_THROWS_WITH_AS(s->run(config(1, 5, 5, 48, 8, {}, 1)),
                       doctest::Contains("C = 48 must be a multiple of BLOCK_K = 64"), UserError);
  CHECK_THROWS_WITH_AS(s->run(config(1, 2, 2, 64, 8, {{"R", 5}, {"S", 5}}, 1)), doctest::Contains("gives no output"),
                       UserError);
}

TEST_CASE("conv2d_bn_relu_streamk: programs sharing tiles two and three ways, whole tiles, more programs than blocks") {
  const samples::Sample* s = samples::find_sample("conv2d_bn_relu_streamk");
  REQUIRE(s != nullptr);
  // 2 x 7 x 9 pixels = 126 rows: 4 tiles of 32 by 2 of 16 channels (24 of them) = 8 tiles of
  // K = 3 * 3 * 32 = 288: 18 blocks of 16, 144 units. 1 program: every tile whole in it; 5: 29
  // units each, tiles split in two; 13: 12 units, split in two and three; 8: 18 units, every
  // tile whole in its own program; 1000: one unit each (144 programs, 18 a tile).
  for (int64_t programs : {1, 5, 13, 8, 1000})
    for (int stages : {1, 3}) {
      CAPTURE(programs);
      CAPTURE(stages);
      samples::RunConfig c = config(2, 7, 9, 32, 24, {{"BLOCK_M", 32}, {"BLOCK_N", 16}, {"BLOCK_K", 16}}, stages);
      c.splits = programs;
      samples::RunResult r = s->run(c);  // throws when an arrival counter is left nonzero
      INFO("first mismatch: " << r.first_mismatch);
      CHECK(r.verified);
      CHECK(r.checked == 2 * 7 * 9 * 24);
    }
}
