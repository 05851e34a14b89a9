// The int4 weight-only matmul samples against their host reference at odd M and N (1, 17, 33;
// 1, 100, 300), K of one and several groups, and several tilings and pipeline depths; a K that is
// not a whole number of groups is the user's error.
#include <doctest/doctest.h>

#include "tessel/ir/error.hpp"
#include "tessel/samples/sample.hpp"

using namespace tessel;

namespace {
samples::RunConfig config(int64_t M, int64_t N, int64_t K, jit::Meta meta, int stages) {
  samples::RunConfig c;
  c.seed = static_cast<uint64_t>(M * 131 + N * 7 + K);
  c.meta = std::move(meta);
  c.matmul.m = M;
  c.matmul.n = N;
  c.matmul.k = K;
  c.options.num_stages = stages;
  return c;
}
}  // namespace

TEST_CASE("w4a16 samples match the host reference at odd shapes and tilings") {
  const std::vector<jit::Meta> tilings{
      {},                                                                    // 16 x 64 x 128
      {{"BLOCK_M", 32}, {"BLOCK_N", 32}, {"BLOCK_K", 64}},                   // two K blocks per group
      {{"BLOCK_M", 64}, {"BLOCK_N", 128}, {"BLOCK_K", 32}, {"GROUP", 128}},  // four
      {{"BLOCK_N", 128}, {"BLOCK_K", 32}},  // BLOCK_M 16 (B from registers): 4 n-tiles a warp, 2 k-steps
  };
  for (const char* name : {"w4a16_matmul", "w4a16_matmul_zp", "w4a16_splitk"}) {
    const samples::Sample* s = samples::find_sample(name);
    REQUIRE(s != nullptr);
    for (auto [M, N, K] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{{1, 100, 128}, {17, 1, 384}, {33, 300, 256}}) {
      for (size_t t = 0; t < tilings.size(); ++t) {
        for (int stages : {1, 3}) {
          CAPTURE(name);
          CAPTURE(M);
          CAPTURE(N);
          CAPTURE(K);
          CAPTURE(t);
          CAPTURE(stages);
          samples::RunResult r = s->run(config(M, N, K, tilings[t], stages));
          INFO("first mismatch: " << r.first_mismatch);
          CHECK(r.verified);
          CHECK(r.checked == M * N);
        }
      }
    }
  }
}

TEST_CASE("w4a16_splitk: 1, 3 and 16 slices of K (more slices than K blocks leaves none empty)") {
  const samples::Sample* s = samples::find_sample("w4a16_splitk");
  REQUIRE(s != nullptr);
  for (int64_t splits : {1, 3, 16}) {
    CAPTURE(splits);
    samples::RunConfig c = config(5, 70, 512, {{"BLOCK_K", 64}}, 2);
    c.splits = splits;
    samples::RunResult r = s->run(c);
    INFO("first mismatch: " << r.first_mismatch);
    CHECK(r.verified);
    CHECK(r.launches == 2);
  }
}

TEST_CASE("w4a16_gemv: a program a row at odd M and N, tilings, and the default, 1, 3 and 16 slices of K") {
  const samples::Sample* s = samples::find_sample("w4a16_gemv");
  REQUIRE(s != nullptr);
  const std::vector<jit::Meta> tilings{
      {},                                     // 512 x 64 (slices: as many as K has blocks, up to 16)
      {{"BLOCK_N", 64}, {"BLOCK_K", 32}},     // four K blocks a group
      {{"BLOCK_N", 128}, {"BLOCK_K", 128}},   // one
  };
  for (auto [M, N, K] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{{1, 100, 128}, {3, 1, 384}, {2, 300, 512}})
    for (size_t t = 0; t < tilings.size(); ++t)
      for (int64_t splits : {0, 1, 3, 16}) {  // 0: the meta's SPLITS
        CAPTURE(M);
        CAPTURE(N);
        CAPTURE(K);
        CAPTURE(t);
        CAPTURE(splits);
        samples::RunConfig c = config(M, N, K, tilings[t], 1);
        c.splits = splits;
        samples::RunResult r = s->run(c);
        INFO("first mismatch: " << r.first_mismatch);
        CHECK(r.verified);
        CHECK(r.checked == M * N);
        CHECK(r.launches == 2);
      }
}

TEST_CASE("w4a16: K must be whole quantisation groups") {
  const samples::Sample* s = samples::find_sample("w4a16_matmul");
  REQUIRE(s != nullptr);
  CHECK_THROWS_WITH_AS(s->run(config(4, 16, 200, {}, 1)), doctest::Contains("multiple of the quantisation group 128"),
                       UserError);
}

TEST_CASE("w4a16_matmul_q8: int8 output and its scales per row group, and per whole row when one block spans N") {
  const samples::Sample* s = samples::find_sample("w4a16_matmul_q8");
  REQUIRE(s != nullptr);
  struct Case {
    int64_t M, N, K;
    jit::Meta meta;
    int64_t groups;
  };
  for (const Case& c : {Case{1, 100, 128, {}, 2}, Case{17, 300, 256, {{"BLOCK_N", 32}, {"BLOCK_K", 64}}, 10},
                        Case{33, 100, 384, {{"BLOCK_M", 32}, {"BLOCK_N", 128}}, 1}}) {  // 128 >= 100: per row
    for (int stages : {1, 3}) {
      CAPTURE(c.M);
      CAPTURE(c.N);
      CAPTURE(stages);
      samples::RunResult r = s->run(config(c.M, c.N, c.K, c.meta, stages));
      INFO("first mismatch: " << r.first_mismatch);
      CHECK(r.verified);
      CHECK(r.checked == c.M * c.N + c.M * c.groups);  // every q and every scale
    }
  }
}

TEST_CASE("fp8 scaled matmul samples match the host reference at odd shapes, both scale forms") {
  const std::vector<jit::Meta> tilings{
      {{"BLOCK_M", 16}, {"BLOCK_N", 32}, {"BLOCK_K", 32}},
      {{"BLOCK_M", 64}, {"BLOCK_N", 64}, {"BLOCK_K", 64}, {"GROUP_M", 2}},
  };
  for (const char* name : {"fp8_matmul", "fp8_matmul_bf16"}) {
    const samples::Sample* s = samples::find_sample(name);
    REQUIRE(s != nullptr);
    for (auto [M, N, K] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{{1, 100, 64}, {33, 47, 70}, {70, 33, 160}})
      for (size_t t = 0; t < tilings.size(); ++t)
        for (int rowwise : {0, 1}) {
          CAPTURE(name);
          CAPTURE(M);
          CAPTURE(N);
          CAPTURE(K);
          CAPTURE(t);
          CAPTURE(rowwise);
          jit::Meta meta = tilings[t];
          meta.set("ROWWISE", rowwise);
          samples::RunResult r = s->run(config(M, N, K, meta, 3));
          INFO("first mismatch: " << r.first_mismatch);
          CHECK(r.verified);
          CHECK(r.checked == M * N);
        }
  }
}
