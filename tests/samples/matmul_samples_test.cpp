// The matmul samples against their double-precision references at odd shapes (M, N, K not
// multiples of the tiles), contiguous and with padded rows; the traced IR of the matmul kernel.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <string>

#include "../common/gpu_gate.hpp"
#include "tessel/ir/accessors.hpp"
#include "tessel/ir/verify.hpp"
#include "tessel/samples/matmul_kernels.hpp"
#include "tessel/samples/sample.hpp"

using namespace tessel;

namespace {
std::vector<const samples::Sample*> matmul_samples() {
  std::vector<const samples::Sample*> v;
  for (const auto& s : samples::all_samples())
    // (the int4 samples need K in whole quantisation groups: quant_samples_test.cpp)
    if (s.shape == samples::SampleShape::Matmul && s.name.rfind("w4a16", 0) != 0) v.push_back(&s);
  return v;
}

samples::RunConfig config(int64_t M, int64_t N, int64_t K, int64_t pad, jit::Meta meta, uint64_t seed) {
  samples::RunConfig c;
  c.seed = seed;
  c.meta = std::move(meta);
  c.matmul.m = M;
  c.matmul.n = N;
  c.matmul.k = K;
  c.matmul.pad = pad;
  c.matmul.batch = 2;
  return c;
}
}  // namespace

TEST_CASE("every matmul sample matches its reference at M=33, N=47, K=70 (tiles 16/32/16 and 32/16/32)") {
  const auto all = matmul_samples();
  CHECK(all.size() >= 10);
  MESSAGE("samples run on: " << jit::Device::current().describe());
  auto t0 = std::chrono::steady_clock::now();
  const jit::Meta small{{"BLOCK_M", 16}, {"BLOCK_N", 32}, {"BLOCK_K", 16}, {"GROUP_M", 2}};
  const jit::Meta other{{"BLOCK_M", 32}, {"BLOCK_N", 16}, {"BLOCK_K", 32}, {"GROUP_M", 1}};
  for (const samples::Sample* s : all) {
    for (int64_t pad : {int64_t{0}, int64_t{3}}) {
      for (const jit::Meta* meta : {&small, &other}) {
        CAPTURE(s->name);
        CAPTURE(pad);
        CAPTURE(meta->str());
        auto r = s->run(config(33, 47, 70, pad, *meta, 5 + pad));
        INFO("first mismatch: " << r.first_mismatch);
        CHECK(r.verified);
        CHECK(r.mismatches == 0);
        CHECK(r.checked == (s->name == "batched_matmul" ? 2 : 1) * 33 * 47);
        CHECK(r.launches == (s->name == "matmul_bias_gelu_unfused" ? 2 : 1));
      }
    }
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("matmul samples took " << secs << " s");
}

TEST_CASE("matmul samples at tile-multiple, tiny and tall-skinny shapes with the default tiles") {
  struct Dims {
    int64_t M, N, K;
  };
  for (Dims d : {Dims{64, 64, 64}, Dims{1, 1, 1}, Dims{5, 130, 3}, Dims{129, 7, 33}, Dims{130, 100, 200}}) {
    for (const char* name : {"matmul", "matmul_i8", "matmul_f32", "matmul_bias_gelu"}) {
      CAPTURE(name);
      CAPTURE(d.M);
      CAPTURE(d.N);
      CAPTURE(d.K);
      auto r = samples::find_sample(name)->run(config(d.M, d.N, d.K, 0, {}, 9));
      INFO("first mismatch: " << r.first_mismatch);
      CHECK(r.verified);
      CHECK(r.checked == d.M * d.N);
    }
  }
}

TEST_CASE("matmuls with transposed operands: A and/or B column-major, loaded along their contiguous dim") {
  // A column-major B ("NT": K^T read from row-major K) is loaded contiguous along dim 0: the
  // lowering gives its tile a dim-0 layout, copies it into a [N][K] staging and reads it K-major
  // (wgmma imm-trans-b 0, or ldmatrix without .trans); a column-major A goes through registers.
  const bool gpu = jit::Device::current().kind() == jit::BackendKind::Cuda;
  MESSAGE("transposed matmuls run on: " << jit::Device::current().describe());
  const int64_t M = gpu ? 300 : 40, N = gpu ? 200 : 33, K = gpu ? 264 : 70;
  struct Cfg {
    jit::Meta meta;
    jit::CompileOptions options;
  };
  std::vector<Cfg> cfgs{{{{"BLOCK_M", 32}, {"BLOCK_N", 32}, {"BLOCK_K", 32}, {"GROUP_M", 2}}, {4, 1}},
                        {{{"BLOCK_M", 64}, {"BLOCK_N", 64}, {"BLOCK_K", 32}, {"GROUP_M", 4}}, {4, 3}}};
  if (gpu) cfgs.push_back({{{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"BLOCK_K", 64}, {"GROUP_M", 8}}, {8, 4}});
  for (const char* name : {"matmul", "matmul_bf16", "matmul_f32", "matmul_i8"}) {
    for (int t = 1; t < 4; ++t) {
      for (const Cfg& cfg : cfgs) {
        for (int64_t pad : {int64_t{0}, int64_t{5}}) {
          CAPTURE(name);
          CAPTURE(t);
          CAPTURE(cfg.meta.str());
          CAPTURE(cfg.options.num_stages);
          CAPTURE(pad);
          samples::RunConfig c = config(M, N, K, pad, cfg.meta, 21 + t);
          c.matmul.trans_a = t & 1;
          c.matmul.trans_b = (t & 2) != 0;
          c.options = cfg.options;
          auto r = samples::find_sample(name)->run(c);
          INFO("first mismatch: " << r.first_mismatch);
          CHECK(r.verified);
          CHECK(r.checked == M * N);
        }
      }
    }
  }
}

TEST_CASE("persistent matmuls, one and two programs per CTA: every tile once, turns that pair up") {
  // On the GPU: more tiles than programs (2 per SM), so programs loop and, with two programs per
  // CTA on sm_90a, their wgmma K loops take turns many times. The interpreter runs a small shape.
  const bool gpu = jit::Device::current().kind() == jit::BackendKind::Cuda;
  const int64_t M = gpu ? 1000 : 70, N = gpu ? 1024 : 96, K = gpu ? 192 : 64;
  const jit::Meta meta{{"BLOCK_M", 64}, {"BLOCK_N", 32}, {"BLOCK_K", 32}, {"GROUP_M", 4}};
  for (const char* name : {"matmul_persistent", "matmul_persistent_bf16", "matmul_bias_gelu_persistent"}) {
    for (int per_cta : {1, 2}) {
      for (int stages : {1, 3}) {
        CAPTURE(name);
        CAPTURE(per_cta);
        CAPTURE(stages);
        samples::RunConfig c = config(M, N, K, 0, meta, 11);
        c.options = jit::CompileOptions{4, stages, per_cta};
        auto r = samples::find_sample(name)->run(c);
        INFO("first mismatch: " << r.first_mismatch);
        CHECK(r.verified);
        CHECK(r.checked == M * N);
      }
    }
  }
}

TEST_CASE("warp-specialised matmuls: producer warps fill the K loop's ring, plain, fused and persistent") {
  // The *_paired kernels multicast B: with TMA producers, 2-CTA clusters (one and two programs
  // per CTA; M = 1000 leaves a half pair whose second tile lies past M).
  // On the GPU (sm_90a): 10 K trips per tile through rings of 2 and 4 stages, so every stage
  // changes hands several times per tile and, in the persistent kernels, across tiles; 8 warps
  // per program and the producer warpgroup make 384 threads. Each case runs with cp.async and
  // with TMA producers (M = 1000: the last row tile reads past M, zero-filled by the tensor
  // map; BLOCK_K = 32: 64-byte swizzle). The interpreter ignores the options and checks the
  // same kernels at a small shape.
  const bool gpu = jit::Device::current().kind() == jit::BackendKind::Cuda;
  const std::string where = jit::Device::current().describe();
  if (gpu && where.find("code for sm_90a") == std::string::npos) {
    tessel_test::skip_gpu_case("warp_specialize needs wgmma (sm_90a code); " + where);
    return;
  }
  const int64_t M = gpu ? 1000 : 70, N = gpu ? 1024 : 96, K = gpu ? 320 : 64;
  struct Case {
    const char* name;
    int warps, stages, per_cta;
  };
  for (const Case& k : {Case{"matmul", 4, 2, 1}, Case{"matmul_bf16", 4, 4, 1}, Case{"matmul_bias_gelu", 8, 4, 1},
                        Case{"matmul_persistent", 4, 2, 1}, Case{"matmul_persistent", 4, 4, 2},
                        Case{"matmul_persistent_bf16", 4, 3, 2}, Case{"matmul_bias_gelu_persistent", 4, 3, 2},
                        Case{"matmul_bias_gelu_persistent", 8, 2, 1}, Case{"matmul_paired", 8, 4, 1},
                        Case{"matmul_paired_bf16", 4, 3, 2}, Case{"matmul_bias_gelu_paired", 4, 2, 2},
                        Case{"matmul_bias_gelu_paired", 8, 3, 1}}) {
    CAPTURE(k.name);
    CAPTURE(k.warps);
    CAPTURE(k.stages);
    CAPTURE(k.per_cta);
    for (bool tma : {false, true}) {
      CAPTURE(tma);
      const jit::Meta meta{{"BLOCK_M", 16 * k.warps}, {"BLOCK_N", 64}, {"BLOCK_K", 32}, {"GROUP_M", 4}};
      samples::RunConfig c = config(M, N, K, 0, meta, 23);
      c.options = jit::CompileOptions{k.warps, k.stages, k.per_cta, true, tma};
      auto r = samples::find_sample(k.name)->run(c);
      INFO("first mismatch: " << r.first_mismatch);
      CHECK(r.verified);
      CHECK(r.checked == M * N);
    }
  }
}

TEST_CASE("i8 matmul is exact; f32 without tf32 is within 1e-5 of the double reference") {
  auto r = samples::find_sample("matmul_i8")->run(config(40, 24, 100, 1, {}, 3));
  CHECK(r.verified);
  CHECK(r.max_abs_err == 0);
  auto e = samples::find_sample("matmul_f32")->run(config(40, 24, 100, 0, jit::Meta{{"ALLOW_TF32", 0}}, 3));
  CHECK(e.verified);
  CHECK(e.rtol == doctest::Approx(1e-5));
}

TEST_CASE("matmul sizes derive from rows/cols and n when RunConfig::matmul is unset") {
  samples::RunConfig c;
  c.rows = 20;
  c.cols = 18;  // M = 20, N = K = 18
  auto r = samples::find_sample("matmul")->run(c);
  CHECK(r.verified);
  CHECK(r.checked == 20 * 18);
  samples::RunConfig sq;
  sq.n = 1000;  // M = N = K = 31
  auto q = samples::find_sample("matmul_bf16")->run(sq);
  CHECK(q.verified);
  CHECK(q.checked == 31 * 31);
}

TEST_CASE("the matmul kernel traces one dot inside one K loop carrying acc and two pointer tiles") {
  auto f = samples::k_matmul.build_ir(jit::Meta{{"BLOCK_M", 32}, {"BLOCK_N", 64}, {"BLOCK_K", 16}, {"GROUP_M", 4}});
  ir::verify(*f);
  int dots = 0, loops = 0;
  const ir::Op* loop = nullptr;
  ir::walk(f->body, [&](const ir::Op& op) {
    dots += op.kind == ir::OpKind::Dot;
    if (op.kind == ir::OpKind::For) ++loops, loop = &op;
  });
  CHECK(dots == 1);
  REQUIRE(loops == 1);
  ir::ForOp fo{*loop};
  std::vector<std::string> carried;
  for (int i = 0; i < fo.num_carried(); ++i) carried.push_back(fo.carried(i)->type.str());
  std::sort(carried.begin(), carried.end());
  CHECK(carried == std::vector<std::string>{"f32[32,64]", "ptr<f16>[16,64]", "ptr<f16>[32,16]"});
}
