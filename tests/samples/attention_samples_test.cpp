// The attention samples (forward f16/bf16, forward with RoPE, split-KV decode) against their
// double-precision host references at odd shapes: sequence lengths that are not multiples of the
// blocks, causal and not, grouped-query heads, head dims 64 and 128. The CPU cases run wherever
// the samples run (the interpreter here); the "gpu" suite runs GPU-sized shapes and the launch
// configs the benchmark sweeps, and skips visibly without a GPU.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../common/gpu_gate.hpp"
#include "tessel/samples/sample.hpp"

using namespace tessel;

namespace {

struct Shape {
  int64_t batch, heads, kv_heads, seq_q, seq_k;
};

samples::RunConfig config(const Shape& s, int64_t dim, bool causal, jit::Meta meta, uint64_t seed) {
  samples::RunConfig c;
  c.seed = seed;
  c.meta = std::move(meta);
  c.meta.set("HEAD_DIM", dim);
  c.meta.set("CAUSAL", causal ? 1 : 0);
  c.attention = {s.batch, s.heads, s.kv_heads, s.seq_q, s.seq_k};
  return c;
}

void check_run(const std::string& name, const samples::RunConfig& c, int64_t expect_checked, int launches) {
  CAPTURE(name);
  auto r = samples::find_sample(name)->run(c);
  INFO("first mismatch: " << r.first_mismatch << " (max |error| " << r.max_abs_err << ")");
  CHECK(r.verified);
  CHECK(r.mismatches == 0);
  CHECK(r.checked == expect_checked);
  CHECK(r.launches == launches);
}

// Runs the jobs on up to 8 threads at once (their compiles and host references are the time;
// launches are thread-safe and each variant compiles once). doctest's assertions may come from
// several threads and CAPTURE is per thread; an exception a job throws fails the test case.
void side_by_side(const std::vector<std::function<void()>>& jobs) {
  std::atomic<size_t> next{0};
  std::mutex failed_mutex;
  std::vector<std::string> failed;
  auto worker = [&] {
    for (size_t i; (i = next++) < jobs.size();) {
      try {
        jobs[i]();
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(failed_mutex);
        failed.push_back("job " + std::to_string(i) + ": " + e.what());
      }
    }
  };
  const size_t n = std::min<size_t>({jobs.size(), 8, std::max(1u, std::thread::hardware_concurrency())});
  std::vector<std::thread> threads;
  for (size_t t = 0; t < n; ++t) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  for (const std::string& f : failed) FAIL_CHECK(f);
}

// Every forward sample over the shapes, causal and not, at one head dim and block config.
// OVERLAP=1 in `meta`: the rotated loop, which attention_fwd and attention_fwd_bf16 take.
void check_forward(const std::vector<Shape>& shapes, int64_t dim, const jit::Meta& meta, uint64_t seed,
                   const jit::CompileOptions& opts = {}) {
  const bool overlap = meta.has("OVERLAP") && meta["OVERLAP"] != 0;
  std::vector<const char*> names{"attention_fwd", "attention_fwd_bf16"};
  // (RoPE's loop prefetches the rotation's loads: producer warps do not take it; it has neither
  // the rotated loop nor PAIRED.)
  if (!overlap && !opts.warp_specialize && !meta.has("PAIRED")) names.push_back("attention_fwd_rope");
  for (const char* name : names)
    for (const Shape& s : shapes)
      for (bool causal : {false, true}) {
        CAPTURE(s.batch);
        CAPTURE(s.heads);
        CAPTURE(s.kv_heads);
        CAPTURE(s.seq_q);
        CAPTURE(s.seq_k);
        CAPTURE(dim);
        CAPTURE(causal);
        CAPTURE(meta.str());
        samples::RunConfig c = config(s, dim, causal, meta, seed++);
        c.options = opts;
        check_run(name, c, s.batch * s.heads * s.seq_q * dim, 1);
      }
}

}  // namespace

TEST_CASE("the attention samples are listed with their kernels and shape") {
  for (const char* name : {"attention_fwd", "attention_fwd_bf16", "attention_fwd_rope", "attention_decode"}) {
    CAPTURE(name);
    const samples::Sample* s = samples::find_sample(name);
    REQUIRE(s != nullptr);
    CHECK(s->shape == samples::SampleShape::Attention);
  }
  CHECK(samples::find_sample("attention_decode")->kernels ==
        std::vector<std::string>{"attention_decode_partial", "attention_decode_combine"});
}

TEST_CASE("attention forward samples match the reference at odd lengths, causal and not, grouped-query") {
  MESSAGE("samples run on: " << jit::Device::current().describe());
  auto t0 = std::chrono::steady_clock::now();
  const jit::Meta small{{"BLOCK_M", 16}, {"BLOCK_N", 32}};
  // seq 1, 37, 130 (not multiples of 16 or 32); seq_q != seq_k both ways (causal is
  // top-left aligned); 4 query heads on 2 KV heads; batch 2.
  check_forward({{1, 2, 2, 1, 1}, {2, 4, 2, 37, 37}, {1, 4, 2, 130, 37}, {1, 2, 1, 37, 130}}, 64, small, 1);
  check_forward({{1, 4, 2, 37, 37}, {1, 2, 2, 130, 130}}, 128, {{"BLOCK_M", 32}, {"BLOCK_N", 16}}, 50);
  // The rotated loop: one block (peeled, no loop trip), a partial last block, BLOCK_M < BLOCK_N.
  check_forward({{1, 2, 2, 1, 1}, {1, 4, 2, 37, 37}, {1, 2, 1, 130, 37}, {1, 2, 1, 37, 130}}, 64,
                {{"BLOCK_M", 16}, {"BLOCK_N", 32}, {"OVERLAP", 1}}, 80);
  // Two query blocks a program (PAIRED): one block (no partner), an odd count of blocks (3: the
  // middle one alone when causal, the last one alone when not), an even count (10: 5 programs).
  check_forward({{1, 2, 2, 1, 1}, {1, 4, 2, 37, 37}, {1, 2, 1, 160, 37}, {1, 2, 1, 37, 130}}, 64,
                {{"BLOCK_M", 16}, {"BLOCK_N", 32}, {"PAIRED", 1}}, 90);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("attention forward samples took " << secs << " s");
}

TEST_CASE("causal launch orders over groups of heads (GROUP_HEADS) run every query block of every head once") {
  // 10 (batch, head) pairs in groups of 3 (the last group one head), 4 and 16 (one group):
  // a block run twice leaves another unwritten (the output is poisoned before the launch).
  for (int g : {3, 4, 16}) {
    CAPTURE(g);
    check_forward({{2, 5, 5, 37, 37}, {1, 10, 5, 130, 37}}, 64, {{"BLOCK_M", 16}, {"BLOCK_N", 32}, {"GROUP_HEADS", g}},
                  200 + g);
  }
}

TEST_CASE("attention forward samples with the default sizes and blocks (64 x 32 over 100 keys)") {
  for (const char* name : {"attention_fwd", "attention_fwd_bf16", "attention_fwd_rope"}) {
    samples::RunConfig c;
    check_run(name, c, 1 * 2 * 100 * 64, 1);
    c.rows = 70;  // seq_q = rows, seq_k = cols
    c.cols = 150;
    c.meta.set("CAUSAL", 0);
    check_run(name, c, 1 * 2 * 70 * 64, 1);
  }
}

TEST_CASE("split-KV decode matches the reference: one and several chunks, a short last chunk, grouped-query") {
  struct Case {
    Shape s;
    int64_t dim, splits;
  };
  const jit::Meta meta{{"BLOCK_N", 32}};
  for (const Case& k : {Case{{1, 1, 1, 1, 1}, 64, 0}, Case{{2, 4, 2, 1, 37}, 64, 0}, Case{{2, 4, 2, 1, 300}, 64, 3},
                        Case{{1, 8, 2, 1, 130}, 128, 5}, Case{{1, 4, 4, 1, 200}, 128, 7},
                        Case{{1, 2, 2, 1, 97}, 64, 100}}) {
    CAPTURE(k.s.batch);
    CAPTURE(k.s.heads);
    CAPTURE(k.s.kv_heads);
    CAPTURE(k.s.seq_k);
    CAPTURE(k.dim);
    CAPTURE(k.splits);
    samples::RunConfig c = config(k.s, k.dim, false, meta, 7 + k.s.seq_k);
    c.splits = k.splits;  // 100 > the 4 blocks of 97 keys: clamped to one block each
    check_run("attention_decode", c, k.s.batch * k.s.heads * k.dim, 2);
  }
}

TEST_CASE("attention samples refuse shapes they cannot run, by message") {
  samples::RunConfig c;
  c.attention.heads = 6;
  c.attention.kv_heads = 4;
  CHECK_THROWS_WITH_AS(samples::find_sample("attention_fwd")->run(c),
                       "attention: 4 KV heads do not divide 6 query heads", UserError);
  CHECK_THROWS_WITH_AS(samples::find_sample("attention_decode")->run(c),
                       "attention: 4 KV heads do not divide 6 query heads", UserError);
  c.attention = {1, 8, 1, 0, 0};
  c.meta.set("BLOCK_H", 4);
  CHECK_THROWS_WITH_AS(samples::find_sample("attention_decode")->run(c),
                       "attention_decode: 8 query heads share each KV head, more than BLOCK_H = 4 rows", UserError);
  c.meta = {};
  c.attention = {1, 2, 2, 10'000'000, 10'000'000};
  c.meta.set("HEAD_DIM", 128);
  CHECK_THROWS_WITH_AS(samples::find_sample("attention_fwd")->run(c),
                       "attention: a tensor of 2560000000 elements does not fit i32 offsets (at most 2147483647, "
                       "2^31 - 1)",
                       UserError);
}

// On the GPU: lengths around the benchmark's blocks, the benchmark's launch configs (the
// lowering's pipelined loop with 1-3 stages, 4 and 8 warps), and a decode over a long cache.
TEST_CASE("GPU: attention samples at odd lengths with the benchmark's configs" * doctest::test_suite("gpu")) {
  const std::string where = jit::Device::current().describe();
  if (jit::Device::current().kind() != jit::BackendKind::Cuda) {
    tessel_test::skip_gpu_case("attention GPU cases need a CUDA device; samples run on " + where);
    return;
  }
  MESSAGE("samples run on: " << where);
  struct Config {
    int bm, bn, warps, stages;
    int64_t dim;
    int overlap = 0;  // the rotated loop (OVERLAP=1)
    bool mb = false;  // stage_mbarriers: stages signalled by mbarriers, no CTA barrier a trip
    int cr = 0;       // > 0: warp_specialize (producer warps fill a ring) with consumer_registers cr
    bool wt = false;  // warpgroup_turns: the warpgroups take turns at each trip's wgmma
    bool paired = false;  // PAIRED=1: two query blocks a program
  };
  // Shapes kept to about 1 GFLOP of host reference each (the reference is plain double loops).
  auto t0 = std::chrono::steady_clock::now();
  // Each head dim under a sequential, a 2-stage and a 3-stage loop, 4 and 8 warps (the host
  // reference is the time: every config does not meet every head dim); BLOCK_M < BLOCK_N too
  // (the causal unmasked blocks end below the program's first row, rounded down to BLOCK_N).
  std::vector<std::function<void()>> jobs;
  for (const Config& k : {Config{64, 32, 4, 1, 64}, Config{64, 64, 4, 2, 128}, Config{128, 64, 8, 3, 64},
                          Config{128, 128, 8, 2, 128}, Config{128, 64, 8, 3, 128}, Config{64, 128, 4, 2, 64},
                          Config{128, 64, 8, 2, 128, 1}, Config{64, 64, 4, 3, 64, 1}, Config{128, 128, 8, 2, 64, 1},
                          Config{128, 128, 8, 2, 128, 0, true}, Config{128, 64, 8, 3, 64, 0, true},
                          Config{64, 64, 4, 2, 128, 0, true}, Config{128, 64, 8, 2, 128, 1, true},
                          Config{128, 128, 8, 2, 128, 1, true}, Config{128, 64, 8, 3, 64, 1, true},
                          Config{128, 128, 8, 2, 128, 0, false, 240}, Config{128, 64, 8, 3, 64, 1, false, 240},
                          Config{128, 128, 8, 2, 128, 1, false, 232}, Config{128, 128, 8, 2, 128, 1, true, 0, true},
                          Config{128, 64, 8, 3, 64, 0, true, 0, true}, Config{128, 128, 8, 2, 128, 0, false, 232, true},
                          Config{128, 64, 8, 2, 64, 1, false, 240, true},
                          Config{128, 128, 8, 2, 128, 0, false, 232, false, true},
                          Config{128, 128, 8, 2, 128, 1, false, 232, true, true},
                          Config{128, 64, 8, 2, 64, 1, true, 0, false, true}})
    jobs.push_back([k] {
      CAPTURE(k.bm);
      CAPTURE(k.bn);
      CAPTURE(k.warps);
      CAPTURE(k.stages);
      CAPTURE(k.dim);
      CAPTURE(k.overlap);
      CAPTURE(k.mb);
      jit::Meta meta{{"BLOCK_M", k.bm}, {"BLOCK_N", k.bn}};
      if (k.overlap) meta.set("OVERLAP", 1);
      CAPTURE(k.paired);
      if (k.paired) meta.set("PAIRED", 1);
      jit::CompileOptions opts{k.warps, k.stages};
      opts.stage_mbarriers = k.mb;
      CAPTURE(k.cr);
      opts.warp_specialize = k.cr > 0;
      opts.consumer_registers = k.cr;
      CAPTURE(k.wt);
      opts.warpgroup_turns = k.wt;
      check_forward({{2, 4, 2, 1, 1}, {1, 2, 2, 1000, 1000}, {1, 2, 1, 2055, 300}, {1, 2, 1, 129, 2055}}, k.dim, meta,
                    100, opts);
    });
  // Causal blocks longest first over groups of heads (GROUP_HEADS): 10 (batch, head) pairs in
  // groups of 4 (the last group two heads), turns and the rotated loop.
  for (int g : {4, 16})
    jobs.push_back([g] {
      CAPTURE(g);
      jit::CompileOptions opts{8, 2};
      opts.stage_mbarriers = true;
      opts.warpgroup_turns = true;
      check_forward({{2, 5, 5, 300, 300}, {1, 10, 5, 130, 600}}, 128,
                    {{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"OVERLAP", 1}, {"GROUP_HEADS", g}}, 300 + g, opts);
    });
  side_by_side(jobs);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("GPU attention forward cases took " << secs << " s");
  for (int64_t dim : {64, 128})
    for (int64_t splits : {int64_t{0}, int64_t{1}, int64_t{37}}) {
      CAPTURE(dim);
      CAPTURE(splits);
      samples::RunConfig c = config({2, 32, 8, 1, 32768 + 5}, dim, false, {}, 3);
      c.splits = splits;
      c.options = jit::CompileOptions{4, 2};
      check_run("attention_decode", c, 2 * 32 * dim, 2);
    }
}

// Warpgroup turns with many programs, half of which have no unmasked key block (causal, two
// 128-row query blocks a head: the first block's first key loop has no trips), each form run
// twice: the turns of the second key loop must not open before warpgroup 0 has taken the first
// loop's last hand-over (warpgroup_turns.cpp). A hang here is that race.
TEST_CASE("GPU: warpgroup turns over 256 causal programs, half with an empty first key loop" *
          doctest::test_suite("gpu")) {
  if (jit::Device::current().kind() != jit::BackendKind::Cuda) {
    tessel_test::skip_gpu_case("attention GPU cases need a CUDA device; samples run on " +
                               jit::Device::current().describe());
    return;
  }
  for (int cr : {0, 232})
    for (int overlap : {0, 1})
      for (uint64_t rep = 0; rep < 2; ++rep) {
        CAPTURE(cr);
        CAPTURE(overlap);
        CAPTURE(rep);
        jit::CompileOptions opts{8, 2};
        opts.stage_mbarriers = cr == 0;
        opts.warp_specialize = cr > 0;
        opts.consumer_registers = cr;
        opts.warpgroup_turns = true;
        samples::RunConfig c = config({8, 16, 16, 256, 256}, 128, true,
                                      {{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"OVERLAP", overlap}}, 500 + rep);
        c.options = opts;
        check_run("attention_fwd", c, 8 * 16 * 256 * 128, 1);
      }
}
