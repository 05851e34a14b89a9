// The matmul samples with num_stages 1, 2, 3: wait_group S - 2, S stage buffers of shared
// memory, and no spills on sm_80 and sm_90 at 128x128x32 with 4 and 8 warps.
#include <doctest/doctest.h>

#include "../lowering/check_ptx.hpp"
#include "matmul_specs.hpp"
#include "tessel/samples/sample.hpp"
#include "tessel/samples/tunables.hpp"

using namespace tessel;
using golden_test::aligned;
using golden_test::entry;

TEST_CASE("matmul f16 128x128x32 with num_stages 1, 2, 3: wait groups, shared memory, registers") {
  const jit::KernelEntry& k = entry("matmul");
  lang::Meta m = k.defaults;
  m.set("BLOCK_M", 128).set("BLOCK_N", 128).set("BLOCK_K", 32);
  auto f = k.build_ir(m, aligned(k, m));
  const int stage_bytes = (128 * 32 + 32 * 128) * 2;
  for (int warps : {4, 8})
    for (int stages : {1, 2, 3}) {
      CAPTURE(warps);
      CAPTURE(stages);
      lowering::Options o;
      o.num_warps = warps;
      o.num_stages = stages;
      lowering::Compiled out = lowering_test::compile_checked(*f, o);  // 0 spills, 0 stack on sm_80 and sm_90
      CHECK(out.launch.shared_bytes == stages * stage_bytes);
      CHECK(lowering_test::count(out.ptx, "mma.sync.aligned.m16n8k16") > 0);
      if (stages >= 2) {
        // A and B carry one pointer per thread; the others follow by mad.wide from it (A's rows
        // are stride_am apart; B's stride_bn is 1 here, so its copies differ by constants).
        INFO(out.plan);
        CHECK(lowering_test::count(out.plan, "(one pointer per thread)") == 2);
        CHECK(lowering_test::count(out.ptx, "mad.wide.s32") > 0);
        // Masked-off copies zero-fill through cp.async's ignore-src predicate, not a size
        // selected per copy (two selects and a compare each; 4-21% on conv, session 37).
        CHECK(lowering_test::count(out.ptx, "cp.async.cg.shared.global") > 0);
        CHECK(lowering_test::count(out.ptx, "], 16, %p") > 0);
        CHECK(lowering_test::count(out.ptx, "], 16, %r") == 0);
      }
      // The epilogue converts the accumulator for 16-byte stores through the freed stages:
      // the whole padded 128 x 128 f16 tile (34 KiB) at 3 stages, one barrier; with fewer
      // stages, chunks of 64 columns (18 KiB, 2 stages) or 32 (10 KiB, 1 stage), a barrier
      // after each chunk's writes and one before the next chunk's. Shared memory never grows.
      const int chunks = stages == 3 ? 1 : stages == 2 ? 2 : 4;
      CHECK(lowering_test::count(out.ptx, "st.global.v4.b32") == 128 * 128 / (8 * 32 * warps));
      CHECK(lowering_test::count(out.ptx, "st.global.b32") == 0);
      CHECK(lowering_test::count(out.ptx, "ld.shared.v4") == 128 * 128 / (8 * 32 * warps));
      CHECK(lowering_test::count(out.ptx, "bar.sync") >= 2 * chunks - 1);
      const int w0 = lowering_test::count(out.ptx, "cp.async.wait_group 0;");
      const int w1 = lowering_test::count(out.ptx, "cp.async.wait_group 1;");
      if (stages == 1) {
        CHECK(w0 >= 1);
        CHECK(w1 == 0);
      } else if (stages == 2) {
        CHECK(w0 >= 2);  // in the body (S - 2 = 0) and after the loop
        CHECK(w1 == 0);
      } else {
        CHECK(w1 >= 1);
        CHECK(w0 == 1);  // after the loop only
      }
      for (std::string arch : {"sm_80", "sm_90"}) {
        o.target = lowering::Target::parse(arch);
        auto r = lowering_test::run_ptxas(lowering::compile(*f, o).ptx, arch);
        if (!r.ran) continue;
        CHECK(r.spill_stores == 0);
        CHECK(r.spill_loads == 0);
        MESSAGE("matmul f16 128x128x32 " << warps << " warps num_stages " << stages << " " << arch << ": "
                                        << r.registers << " registers, " << r.spill_stores << " spill bytes, shared "
                                        << out.launch.shared_bytes << " B, wait_group 0/1: " << w0 << "/" << w1);
      }
    }
}

TEST_CASE("every matmul sample compiles with num_stages 3 (pipelined or single-stage), no spills") {
  for (const char* name : {"matmul", "matmul_bf16", "matmul_f32", "matmul_i8", "matmul_bias_relu", "matmul_bias_gelu",
                           "matmul_bias_gelu_bf16", "batched_matmul"}) {
    CAPTURE(std::string(name));
    const jit::KernelEntry& k = entry(name);
    for (bool align : {false, true}) {
      CAPTURE(align);
      auto f = k.build_ir(k.defaults, align ? aligned(k, k.defaults) : std::vector<ir::ParamSpec>{});
      lowering::Options o;
      o.num_stages = 3;
      lowering::Compiled out = lowering_test::compile_checked(*f, o);
      lowering::Options one;
      const lowering::Compiled single_stage = lowering::compile(*f, one);
      const int single = single_stage.launch.shared_bytes;
      // Pipelined: three stage buffers instead of one; otherwise exactly the single-stage code.
      const bool piped = out.ptx.find("cp.async.wait_group 1;") != std::string::npos;
      if (piped) CHECK(out.launch.shared_bytes >= single);
      // Both sm_90; the entries' names differ only in _s3 / _s1 (lowering::entry_symbol).
      else CHECK(lowering_test::renamed(out.ptx, out.launch.symbol, single_stage.launch.symbol) == single_stage.ptx);
      // With aligned rows every operand copied by cp.async is pipelined: f16/bf16 both, i8 its A
      // (its B, staged [N][K], goes through registers every trip); tf32 (rounded through
      // registers) none.
      const std::string n = name;
      if (align && n != "matmul_f32") CHECK(piped);
      if (n == "matmul_f32") CHECK(!piped);
    }
  }
}

namespace {
// A matmul sample at the 128x256x64 tile, aligned, and sm_90a options for 8 warps, 4 stages.
std::unique_ptr<ir::Function> tile_128x256(const char* name) {
  const jit::KernelEntry& k = entry(name);
  lang::Meta m = k.defaults;
  m.set("BLOCK_M", 128).set("BLOCK_N", 256).set("BLOCK_K", 64);
  return k.build_ir(m, aligned(k, m));
}
lowering::Options sm90a_w8_s4() {
  lowering::Options o;
  o.num_warps = 8;
  o.num_stages = 4;
  o.target = lowering::Target::parse("sm_90a");
  return o;
}
// That tile's kernel compiled with TMA producer warps.
lowering::Compiled with_tma_producers(const ir::Function& f) {
  lowering::Options o = sm90a_w8_s4();
  o.warp_specialize = true;
  o.tma = true;
  return lowering::compile(f, o);
}
}  // namespace

TEST_CASE("sm_90a matmul epilogues store 16-byte vectors through the freed stages; producer rings keep 4-byte stores") {
  for (const char* name : {"matmul", "matmul_bias_gelu"}) {
    CAPTURE(std::string(name));
    auto f = tile_128x256(name);
    lowering::Options o = sm90a_w8_s4();
    lowering::Compiled out = lowering::compile(*f, o);
    const int stage = (128 * 64 + 64 * 256) * 2;
    // The padded 128 x 256 f16 tile (66 KiB) reuses the four stages: no more shared memory.
    CHECK(out.launch.shared_bytes == 4 * stage);
    // 128 x 256 halves over 256 threads: 16 stores of 8 halves each, read back as 16 vectors.
    CHECK(lowering_test::count(out.ptx, "st.global.v4.b32") == 16);
    CHECK(lowering_test::count(out.ptx, "ld.shared.v4") == 16);
    CHECK(lowering_test::count(out.ptx, "st.global.b16") == 0);
    CHECK(lowering_test::count(out.ptx, "st.global.b32") == 0);
    auto r = lowering_test::run_ptxas(out.ptx, "sm_90a");
    if (r.ran) {
      // The GELU epilogue of a 64x256 f32 accumulator per warpgroup runs at ptxas's 255
      // registers; since the copies carry one pointer per thread (session 27) ptxas spills one
      // register of it (4 bytes). More is a regression.
      CHECK(r.spill_stores <= (std::string(name) == "matmul_bias_gelu" ? 4 : 0));
      MESSAGE(std::string(name) << " 128x256x64 w8 s4 sm_90a: " << r.registers << " registers, shared " << out.launch.shared_bytes);
    }
    // With producer warps the rings stay pinned; the kernel already takes an SM's shared
    // memory, so a buffer beside them costs no occupancy: 64 columns at a time (128 rows of
    // 128 + 16 bytes) fit under 227 KiB, the whole padded tile (66 KiB) would not.
    o.warp_specialize = true;
    lowering::Compiled ws = lowering::compile(*f, o);
    CHECK(lowering_test::count(ws.plan, "(one pointer per thread)") == 0);  // ring copies keep theirs
    CHECK(lowering_test::count(ws.ptx, "st.global.v4.b32") == 16);
    CHECK(lowering_test::count(ws.ptx, "st.global.b32") == 0);
    CHECK(ws.launch.shared_bytes >= 4 * stage + 128 * (64 * 2 + 16));
    CHECK(ws.launch.shared_bytes < 4 * stage + 128 * (64 * 2 + 16) + 1024);
  }
}

TEST_CASE("sm_90a warp-specialised matmuls with tma: tensor-map parameters, TMA boxes, no cp.async") {
  for (const char* name : {"matmul", "matmul_bf16", "matmul_bias_gelu"}) {
    CAPTURE(std::string(name));
    auto f = tile_128x256(name);
    lowering::Compiled out = with_tma_producers(*f);
    // A (M x K, rows stride_am apart) and B (K x N, rows stride_bk apart), bounded by the
    // masks' M, K and K, N; A in boxes of 8 rows (its rows are permuted for two warpgroups),
    // B in 64 x 64 boxes (128-byte swizzle); and A's row-permuted view, which copies a whole
    // 128 x 64 tile in one box.
    REQUIRE(out.launch.tensor_maps.size() == 3);
    const auto param = [&](const char* p) {
      for (size_t i = 0; i < f->params.size(); ++i)
        if (f->params[i].name == p) return static_cast<int>(i);
      FAIL("no parameter " << p);
      return -1;
    };
    // In order of first use: A's map, A's view, B's map.
    const tessel::TensorMapRecipe& a = out.launch.tensor_maps[0];
    const tessel::TensorMapRecipe& b = out.launch.tensor_maps[2];
    CHECK(a.base_param == param("a"));
    CHECK(a.rows == tessel::TensorMapPoly{{1, {param("M")}}});
    CHECK(a.cols == tessel::TensorMapPoly{{1, {param("K")}}});
    CHECK(a.row_stride == tessel::TensorMapPoly{{1, {param("stride_am")}}});
    CHECK(a.box_cols == 64);
    CHECK(a.box_rows == 8);
    CHECK(b.base_param == param("b"));
    CHECK(b.rows == tessel::TensorMapPoly{{1, {param("K")}}});
    CHECK(b.cols == tessel::TensorMapPoly{{1, {param("N")}}});
    CHECK(b.row_stride == tessel::TensorMapPoly{{1, {param("stride_bk")}}});
    CHECK(b.box_rows == 64);
    CHECK(tessel::view_warpgroups(a) == 0);
    CHECK(tessel::view_warpgroups(b) == 0);
    const tessel::TensorMapRecipe& v = out.launch.tensor_maps[1];
    CHECK(tessel::view_warpgroups(v) == 2);
    CHECK(v.box_rows == 128);
    CHECK(v.base_param == a.base_param);
    CHECK(v.rows == a.rows);
    // Columns, then r (8, one row apart), h (2, 64 rows), w (4, 8 rows), g (2, 32 rows): five
    // dimensions, the tile's first row a multiple of 32.
    const auto& dims = v.view;
    REQUIRE(dims.size() == 4);
    CHECK(dims[0].row_step == 1);
    CHECK(dims[1].row_step == 64);
    CHECK(dims[2].row_step == 8);
    CHECK(dims[3].row_step == 32);
    CHECK(tessel::view_unit(v) == 32);
    CHECK(a.swizzle_bytes == 128);
    CHECK(a.elem == (std::string(name) == "matmul_bf16" ? tessel::TensorMapRecipe::Elem::BF16 : tessel::TensorMapRecipe::Elem::F16));
    // Three 128-byte parameters after the kernel's own, read in place.
    CHECK(lowering_test::count(out.ptx, ".param .align 64 .b8") == 3);
    CHECK(lowering_test::count(out.ptx, "cvta.param.u64") >= 1);
    // Per trip either 1 + 4 boxes (the tile inside M) or 16 + 4, dealt to the four producer
    // warps; each announces its bytes.
    CHECK(lowering_test::count(out.ptx, "cp.async.bulk.tensor.5d") == 1);
    CHECK(lowering_test::count(out.ptx, "cp.async.bulk.tensor.2d") == 24);
    CHECK(lowering_test::count(out.ptx, "mbarrier.arrive.expect_tx") == 8);
    CHECK(lowering_test::count(out.ptx, "cp.async.cg") == 0);
    CHECK(lowering_test::count(out.ptx, "cp.async.mbarrier.arrive") == 0);
    // TMA writes through the async proxy: no proxy fence before the consumers' wgmma.
    CHECK(lowering_test::count(out.ptx, "fence.proxy.async") == 0);
    auto r = lowering_test::run_ptxas(out.ptx, "sm_90a");
    if (r.ran) {
      // At 384 threads ptxas allots 168 registers: the plain kernels fit; the fused epilogue
      // spills 4 bytes (116-144 before its bias started the accumulator).
      if (std::string(name) != "matmul_bias_gelu") CHECK(r.spill_stores == 0);
      else CHECK(r.spill_stores <= 8);
      MESSAGE(std::string(name) << " 128x256x64 w8 s4 ws tma sm_90a: " << r.registers << " registers, "
                                << r.spill_stores << " spill bytes");
    }
  }
  // A small tile makes fewer view boxes (A's 128 x 32 tile and B's 32 x 64) than producer
  // warps: only two warps issue, in both paths, so that none announces 0 bytes (such an
  // arrival hung the kernel on the H200); full[s] expects those two.
  {
    const jit::KernelEntry& k = entry("matmul");
    lang::Meta m = k.defaults;
    m.set("BLOCK_M", 128).set("BLOCK_N", 64).set("BLOCK_K", 32);
    auto f = k.build_ir(m, aligned(k, m));
    lowering::Options o = sm90a_w8_s4();
    o.warp_specialize = true;
    o.tma = true;
    lowering::Compiled small = lowering::compile(*f, o);
    CHECK(lowering_test::count(small.ptx, "cp.async.bulk.tensor.5d") == 1);
    CHECK(lowering_test::count(small.ptx, "cp.async.bulk.tensor.2d") == 16 + 1 + 1);
    CHECK(lowering_test::count(small.ptx, "mbarrier.arrive.expect_tx") == 2 * 2);
    CHECK(lowering_test::count(small.plan, "producers copy by TMA") == 1);
    CHECK(lowering_test::count(small.plan, "not by TMA") == 0);
  }
  // tma off: cp.async producers.
  const jit::KernelEntry& k = entry("matmul");
  lang::Meta m = k.defaults;
  lowering::Options o;
  o.num_warps = 4;
  o.num_stages = 3;
  o.target = lowering::Target::parse("sm_90a");
  o.warp_specialize = true;
  auto f = k.build_ir(m, aligned(k, m));
  o.tma = false;
  lowering::Compiled off = lowering::compile(*f, o);
  CHECK(off.launch.tensor_maps.empty());
  CHECK(lowering_test::count(off.ptx, "cp.async.bulk.tensor") == 0);
  // tma asked for where a loop cannot take it: cp.async producers, and the plan says why.
  {
    lowering::Options w = sm90a_w8_s4();
    w.warp_specialize = w.tma = true;
    const jit::KernelEntry& a = entry("attention_fwd");
    lang::Meta am = a.defaults;
    am.set("BLOCK_M", 128).set("BLOCK_N", 64).set("HEAD_DIM", 64);
    lowering::Compiled att = lowering::compile(*a.build_ir(am, aligned(a, am)), w);
    CHECK(att.launch.tensor_maps.empty());
    CHECK(lowering_test::count(att.plan, "not by TMA (tma asked for): loops of several dots") == 2);
    const jit::KernelEntry& c = entry("conv2d_bn_relu");
    lang::Meta cm = c.defaults;
    cm.set("BLOCK_M", 128).set("BLOCK_N", 128);
    lowering::Compiled conv = lowering::compile(*c.build_ir(cm, aligned(c, cm)), w);
    CHECK(conv.launch.tensor_maps.empty());
    CHECK(lowering_test::count(conv.plan, "not by TMA (tma asked for): operand a (the load at line ") == 1);
    CHECK(lowering_test::count(conv.plan, "the pointers are computed from the loop index") == 1);
  }
  // tma without warp_specialize is a CompileError.
  o.warp_specialize = false;
  o.tma = true;
  CHECK_THROWS_WITH_AS(lowering::compile(*f, o), doctest::Contains("needs warp_specialize"), CompileError);
}

TEST_CASE("sm_90a multicast B (the paired matmuls): 2-CTA clusters, half the B boxes each, both CTAs release a stage") {
  for (const char* name : {"matmul_paired", "matmul_bias_gelu_paired"}) {
    CAPTURE(std::string(name));
    auto f = tile_128x256(name);
    lowering::Compiled out = with_tma_producers(*f);
    CHECK(out.launch.cluster_ctas == 2);
    CHECK(lowering_test::count(out.ptx, ".reqnctapercluster 2, 1, 1") == 1);
    // B's 64 x 256 tile is 4 boxes of 64 x 64, each CTA issuing 2 of them into both CTAs (the
    // branch on its rank is per box, and there are two paths: A's view boxes or 8-row boxes).
    CHECK(lowering_test::count(out.ptx, ".multicast::cluster") == 2 * 4);
    // A consumer warp releases a stage here and in the other CTA, at CTA scope (a cluster-scope
    // release fenced every release: half the kernel's time on the H100).
    CHECK(lowering_test::count(out.ptx, "mapa.shared::cluster.u32") == 2);
    CHECK(lowering_test::count(out.ptx, "mbarrier.arrive.shared::cluster.b64") == 2);
    CHECK(lowering_test::count(out.ptx, "arrive.release.cluster") == 0);
    // The barriers are published to the other CTA before use, and neither CTA leaves early.
    CHECK(lowering_test::count(out.ptx, "fence.mbarrier_init.release.cluster") == 1);
    CHECK(lowering_test::count(out.ptx, "barrier.cluster.arrive") == 3);  // set-up, consumer exit, producer exit
    auto r = lowering_test::run_ptxas(out.ptx, "sm_90a");
    if (r.ran) CHECK(r.spill_stores == 0);
  }
  // Without TMA producers the promise changes nothing: no cluster.
  auto f = tile_128x256("matmul_paired");
  lowering::Options o = sm90a_w8_s4();
  o.warp_specialize = true;
  lowering::Compiled plain = lowering::compile(*f, o);
  CHECK(plain.launch.cluster_ctas == 1);
  CHECK(lowering_test::count(plain.ptx, "cluster") == 0);
}

// A plain 2-stage wgmma loop keeps one group in flight across the latch. Where the path that
// runs no trip joined the block that waits for the last group, with the initial accumulators,
// ptxas serialised every wgmma of the kernel (C7515; 18-21% slower on the H100, session 37):
// such loops are tested before the loop and at the latch and leave through that wait.
TEST_CASE("sm_90a plain 2-stage wgmma loops leave through the last group's wait; ptxas keeps them asynchronous") {
  struct Tile {
    int bm, bn, warps;
  };
  for (const char* name : {"matmul", "matmul_persistent", "matmul_bias_gelu"})
    for (Tile t : {Tile{128, 128, 4}, Tile{64, 256, 4}, Tile{128, 256, 8}}) {
      CAPTURE(std::string(name));
      CAPTURE(t.bm);
      CAPTURE(t.bn);
      const jit::KernelEntry& k = entry(name);
      lang::Meta m = k.defaults;
      m.set("BLOCK_M", t.bm).set("BLOCK_N", t.bn).set("BLOCK_K", 64);
      auto f = k.build_ir(m, aligned(k, m));
      lowering::Options o;
      o.num_warps = t.warps;
      o.num_stages = 2;
      o.target = lowering::Target::parse("sm_90a");
      lowering::Compiled c = lowering::compile(*f, o);
      INFO(c.plan);
      CHECK(lowering_test::count(c.plan, "tested before the loop and at the latch") == 1);
      CHECK(lowering_test::count(c.ptx, "wgmma.mma_async") > 0);
      auto r = lowering_test::run_ptxas(c.ptx, "sm_90a");
      if (!r.ran) continue;
      INFO(r.log);
      CHECK(r.log.find("wgmma.mma_async instructions are serialized") == std::string::npos);
      // matmul_bias_gelu's 128x256 epilogue at 255 registers, as in the tuning spaces below.
      const int allowed = std::string(name) == "matmul_bias_gelu" && t.bn == 256 && t.warps == 8 ? 4 : 0;
      CHECK(r.spill_stores <= allowed);
    }
}

TEST_CASE("every config of the matmul tuning spaces assembles for sm_90a without spills") {
  // (tunable, the kernel its configs compile): the samples and the tensor-core roofline probes
  // (a config no sm_90a compile accepts, tf32 with TMA producers, was in the tf32 probe's space
  // until session 38's first `tessel tune` on a GPU reported it).
  for (auto [name, kernel] : {std::pair{"matmul", "matmul"}, std::pair{"matmul_bias_gelu", "matmul_bias_gelu"},
                              std::pair{"matmul_paired", "matmul_paired"}, std::pair{"roofline_dot_f16", "matmul"},
                              std::pair{"roofline_dot_bf16", "matmul_bf16"}, std::pair{"roofline_dot_tf32", "matmul_f32"}}) {
    const samples::Tunable* t = samples::find_tunable(name);
    REQUIRE(t != nullptr);
    const jit::KernelEntry& k = entry(kernel);
    for (const jit::tune::Config& c : t->configs(t->sizes.front())) {
      CAPTURE(std::string(name));
      CAPTURE(c.str());
      lang::Meta m = k.defaults;
      for (const auto& [key, v] : c.meta.values()) m.set(key, v);
      auto f = k.build_ir(m, aligned(k, m));
      lowering::Options o;
      o.num_warps = c.opts.num_warps;
      o.num_stages = c.opts.num_stages;
      o.programs_per_cta = c.opts.programs_per_cta;
      o.warp_specialize = c.opts.warp_specialize;
      o.tma = c.opts.tma;
      o.target = lowering::Target::parse("sm_90a");
      auto r = lowering_test::run_ptxas(lowering::compile(*f, o).ptx, "sm_90a");
      if (!r.ran) continue;
      // One register of the 128x256 GELU epilogue at 255 registers, as above.
      const int allowed = std::string(name) == "matmul_bias_gelu" && m["BLOCK_N"] == 256 && !o.warp_specialize ? 4 : 0;
      CHECK(r.spill_stores <= allowed);
      CHECK(r.spill_loads <= allowed);
      // Any serialised wgmma fails (C7515 on plain 2-stage loops until they left through the
      // last group's wait, session 37).
      INFO(r.log);
      CHECK(r.log.find("wgmma.mma_async instructions are serialized") == std::string::npos);
    }
  }
  // The benchmark's fastest fused kernel (persistent, TMA producers, 4 stages): 0 spills now
  // that the bias starts the accumulator.
  const jit::KernelEntry& k = entry("matmul_bias_gelu_persistent");
  lang::Meta m = k.defaults;
  m.set("BLOCK_M", 128).set("BLOCK_N", 256).set("BLOCK_K", 64);
  auto f = k.build_ir(m, aligned(k, m));
  lowering::Options o;
  o.num_warps = 8;
  o.num_stages = 4;
  o.warp_specialize = o.tma = true;
  o.target = lowering::Target::parse("sm_90a");
  auto r = lowering_test::run_ptxas(lowering::compile(*f, o).ptx, "sm_90a");
  if (r.ran) {
    CHECK(r.spill_stores == 0);
    CHECK(r.spill_loads == 0);
  }
}
