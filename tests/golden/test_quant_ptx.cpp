// The issue 27 kernels as a user writes them (quant_kernels.hpp, fp8_kernels.hpp,
// conv_kernels.hpp): what the pipelined loop becomes. W4A16's packed words and scales reach the
// dot through unpack and the scaling, so they are prefetched by cp.async with A's copies and read
// back from shared memory in their trip (no global load left in the loop); at BLOCK_M 16 the
// dequantised weights are the mma's B fragments in registers (no B staging); the fp8 matmul runs
// on wgmma k32 with both operands copied; the convolution's addresses come from the loop index
// and are still issued stages ahead. The decode form (w4a16_gemv) streams its words from global
// memory into registers with no shared memory in its loop.
#include <doctest/doctest.h>

#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "../lowering/check_ptx.hpp"
#include "matmul_specs.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;
using golden_test::aligned;
using golden_test::entry;
using lowering_test::count;

namespace {

lowering::Compiled compile_sample(const std::string& name, const lang::Meta& meta, int warps, int stages,
                                  bool warp_specialize = false) {
  const jit::KernelEntry& k = entry(name.c_str());
  lang::Meta m = k.defaults;
  for (const auto& [n, v] : meta.values()) m.set(n, v);
  auto f = k.build_ir(m, aligned(k, m));
  lowering::Options o;
  o.target = lowering::Target::parse("sm_90a");
  o.num_warps = warps;
  o.num_stages = stages;
  o.warp_specialize = warp_specialize;
  return lowering::compile(*f, o);
}

bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// The PTX line that defines register `reg` ("" if none).
std::string definition(const std::string& ptx, const std::string& reg) {
  const std::regex def("^\\s*[a-z][a-z0-9.]*\\s+" + reg + ",");
  for (const std::string& l : lines(ptx))
    if (std::regex_search(l, def)) return l;
  return "";
}

}  // namespace

TEST_CASE("w4a16: words and scales prefetched stages ahead, read back from shared memory, no I2F") {
  for (const char* name : {"w4a16_matmul", "w4a16_splitk"})
    for (int stages : {2, 3, 4}) {
      CAPTURE(name);
      CAPTURE(stages);
      lowering::Compiled c = compile_sample(name, {}, 4, stages);  // 16 x 64 x 128
      INFO(c.plan);
      CHECK(has(c.plan, "pipelined, " + std::to_string(stages) + " stages"));
      CHECK(count(c.plan, "prefetched") == 2);  // the words and the scales
      // Both as dense tiles: the words copied in 16-byte runs and read whole by each lane of a
      // quad, the row of scales (one f16 per lane in B's layout) copied by 8 threads.
      CHECK(count(c.plan, "as a dense tile") == 2);
      CHECK(count(c.plan, "mma reads it from registers") == 1);
      // A's tile [16, 128] f16 is two 16-byte copies per thread of 128, the words [16, 64] u32
      // two more, the scales one (by the threads that hold a 16-byte run of them).
      const int per_trip = 2 + 2 + 1;
      CHECK(count(c.ptx, "cp.async.cg.shared.global") == per_trip * stages);
      CHECK(count(c.ptx, "cp.async.ca.shared.global") == 0);
      CHECK(count(c.ptx, "cp.async.wait_group " + std::to_string(stages - 2) + ";") >= 1);
      // The split-K kernel's last program to arrive (one acq_rel counter add) then sums the
      // partial products with plain loads; everything before it is the K loop.
      const bool split = std::string(name) == "w4a16_splitk";
      CHECK(count(c.ptx, "atom.acq_rel.gpu.global.add.s32") == (split ? 1 : 0));
      const std::string loop = split ? c.ptx.substr(0, c.ptx.find("atom.acq_rel")) : c.ptx;
      CHECK(!has(loop, "ld.global"));  // every load of the loop went through the stages
      if (split) CHECK(has(c.ptx.substr(loop.size()), "ld.global"));
      CHECK(!has(c.ptx, "cvt.rn.f16.u32"));
      // B from registers: ldmatrix for A only (8 k-steps, one m-tile), no B staging stores; 8
      // k-steps x 2 n-tiles of mma. Each lane reads its column's 16 words of each of its two
      // n-tiles from the dense tile (32 loads), and its two scales.
      CHECK(count(c.ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16") == 8);
      CHECK(!has(c.ptx, ".trans"));
      CHECK(count(c.ptx, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") == 16);
      CHECK(count(loop, "ld.shared.u32") == 32);
      CHECK(count(c.ptx, "ld.shared.b16") == 2);
      // The dequantisation two weights per instruction: [128, 64] per trip over 128 threads is
      // 64 weights a thread, 32 pairs (each lane's byte of each of its 32 words): one byte
      // permute (the lane's byte to both halves, no shifts), one mask-and-or (lop3), one f16x2 fma
      // that ends the unpack (the zero point 8 in it) and one f16x2 product by the scale; no
      // f16 arithmetic one at a time.
      CHECK(count(c.ptx, "prmt.b32") == 32);
      CHECK(count(c.ptx, "lop3.b32") == 32);
      CHECK(count(c.ptx, "fma.rn.f16x2") == 32);
      CHECK(count(c.ptx, "mul.rn.f16x2") == 32);
      CHECK(count(c.ptx, "add.rn.f16x2") + count(c.ptx, "sub.rn.f16x2") == 0);
      CHECK(!has(c.ptx, "mul.rn.f16 "));
      CHECK(!has(c.ptx, "add.rn.f16 "));
      CHECK(!has(c.ptx, "sub.rn.f16 "));
      lowering_test::assemble(c.ptx, "sm_90a");
    }
}

TEST_CASE("w4a16_gemv: a K loop of 16-byte global loads and register math, no shared memory, no spill") {
  // 512 columns on 4 warps (4 words a thread along N, every warp along N), BLOCK_K 64: a thread
  // holds 8 rows of 4 words a trip, 256 weights.
  lowering::Compiled c = compile_sample("w4a16_gemv", {}, 4, 1);
  INFO(c.plan);
  const std::string loop = c.ptx.substr(0, c.ptx.find("atom.acq_rel"));
  // 8 rows of words and 8 vectors of the activation row (64 f16), 16 bytes each, and the
  // thread's 4 scales (8 bytes): nothing through shared memory, no barrier but the one the
  // acq_rel arrival puts before its atomic.
  CHECK(count(loop, "ld.global.v4.b32") == 16);
  CHECK(count(loop, "ld.global.v2.b32") == 1);
  CHECK(count(loop, "ld.global") == 17);
  CHECK(!has(loop, "st.shared"));
  CHECK(!has(loop, "ld.shared"));
  CHECK(count(loop, "bar.sync") == 1);
  // Per weight: the unpack in pairs (a lop3 each, a byte permute a two pairs, an f16x2 fma or
  // add ending it), the scale and the activation as f16x2 products, then one f16 -> f32
  // conversion and one f32 add; no f32 products, no f16 arithmetic one at a time.
  CHECK(count(loop, "lop3.b32") == 128);
  CHECK(count(loop, "prmt.b32") == 64);
  CHECK(count(loop, "fma.rn.f16x2") + count(loop, "add.rn.f16x2") == 128);
  CHECK(count(loop, "mul.rn.f16x2") == 256);
  CHECK(count(loop, "cvt.f32.f16") == 256);
  CHECK(count(loop, "add.rn.f32") == 256);
  CHECK(!has(loop, "mul.rn.f32"));
  CHECK(!has(loop, "mul.rn.f16 "));
  lowering_test::PtxasReport r = lowering_test::run_ptxas(c.ptx, "sm_90a");
  if (!r.ran) return;
  INFO(r.log);
  CHECK(r.ok);
  CHECK(r.spill_stores == 0);
  CHECK(r.registers <= 96);  // 66 with ptxas 13.0: several CTAs of 4 warps a SM
}

TEST_CASE("w4a16 at large M: the dequantised B staged into each trip's stage, the wgmma group kept in flight") {
  // 128 x 128 x 64 on two warpgroups: B (64 x 128 f16, 16 KB) is written from registers into
  // the stage of its trip, so the stages rotate it and the wgmma of one trip runs while the
  // next trip dequantises; the words and scales stay prefetched.
  for (int stages : {2, 3, 4}) {
    CAPTURE(stages);
    lowering::Compiled c = compile_sample("w4a16_matmul", {{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"BLOCK_K", 64}}, 8, stages);
    INFO(c.plan);
    CHECK(has(c.plan, "staged from registers every trip into the stage"));
    CHECK(has(c.plan, "stores addressed by class"));
    CHECK(has(c.plan, "wgmma group kept in flight into the next trip"));
    CHECK(count(c.plan, "prefetched") == 2);
    CHECK(has(c.ptx, "wgmma.wait_group.sync.aligned 1;"));
    CHECK(count(c.ptx, "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16") == 4);
    CHECK(!has(c.ptx, "ld.global"));
    // [64, 128] weights a trip over 256 threads: 32 a thread, 4 words (8 rows of K each) of 4
    // neighbouring columns, dequantised two words at a time: per byte of a word pair one
    // permute (byte b of both words), two mask-and-ors (low and high nibbles), one f16x2
    // subtraction and one fma; each f16x2 holds two neighbouring columns, so the scaling is
    // one f16x2 product by a pair of the row's scales and the 8-byte stores take them as
    // they are. No shifts in the dequantisation.
    CHECK(count(c.ptx, "prmt.b32") == 8);
    CHECK(count(c.ptx, "lop3.b32") == 16);
    CHECK(count(c.ptx, "add.rn.f16x2") == 8);
    CHECK(count(c.ptx, "fma.rn.f16x2") == 8);
    CHECK(count(c.ptx, "mul.rn.f16x2") == 16);
    CHECK(count(c.ptx, "st.shared.v4.b16") == 8);
    // Each store's address is the trip's stage base plus one register made once before the loop
    // (an opaque copy: its swizzled offset), so ptxas adds the uniform base in the address and
    // the stores cost no arithmetic: 8 rows of K, 8 swizzle patterns, 8 such registers.
    std::set<std::string> opaque;
    for (const std::string& line : lines(c.ptx)) {
      std::smatch m;
      if (std::regex_search(line, m, std::regex(R"(^\s*mov\.b32\s+(%r\d+), %r\d+;)"))) opaque.insert(m[1]);
    }
    CHECK(opaque.size() == 8);
    for (const std::string& line : lines(c.ptx)) {
      std::smatch m;
      if (!std::regex_search(line, m, std::regex(R"(st\.shared\.v4\.b16\s+\[(%r\d+)\+)"))) continue;
      const std::string def = definition(c.ptx, m[1]);
      INFO(line);
      INFO(def);
      std::smatch d;
      REQUIRE(std::regex_search(def, d, std::regex(R"(add\.s32\s+%r\d+, (%r\d+), (%r\d+);)")));
      CHECK((opaque.count(d[1]) + opaque.count(d[2])) == 1);
    }
    lowering_test::assemble(c.ptx, "sm_90a");
  }
  // The scale row (256 bytes) is held by every warp along K: in each thread's own slots it takes
  // 2 KiB a stage on 8 warps, and three 38912-byte stages let one CTA on an SM. At 3 stages it
  // is copied once (dense, read after a barrier): 37888-byte stages, two CTAs. Where the slots
  // cost no CTA (4 warps; 8 warps at 4 stages) they stay.
  for (auto [warps, stages, dense] : {std::tuple{8, 3, true}, std::tuple{8, 4, false}, std::tuple{4, 3, false}}) {
    CAPTURE(warps);
    CAPTURE(stages);
    lowering::Compiled c =
        compile_sample("w4a16_matmul", {{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"BLOCK_K", 64}}, warps, stages);
    INFO(c.plan);
    CHECK(has(c.plan, "as a dense tile") == dense);
    CHECK(has(c.plan, fmt::format("{} stages of {} B", stages, dense || warps == 4 ? 37888 : 38912)));
    CHECK(has(c.plan, dense ? "staging +36864 (256 B), read after a barrier" : "staging +36864 ("));
    lowering_test::assemble(c.ptx, "sm_90a");
  }
  // 128 x 128 x 128 on 8 warps at 3 stages: three 64 KB stages leave no room to prefetch the
  // words and scales, so each trip waits for 32 bytes a thread of global loads; the stores then
  // keep LLVM's addressing (no opaque classes, whose registers ptxas wants for that latency).
  lowering::Compiled wide =
      compile_sample("w4a16_matmul", {{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"BLOCK_K", 128}}, 8, 3);
  INFO(wide.plan);
  CHECK(count(wide.plan, "prefetched") == 0);
  CHECK(has(wide.plan, "staged from registers every trip into the stage"));
  CHECK(!has(wide.plan, "addressed by class"));
  CHECK(!std::regex_search(wide.ptx, std::regex(R"(\n\s*mov\.b32\s+%r\d+, %r\d+;)")));
  lowering_test::assemble(wide.ptx, "sm_90a");
  // 128 x 256 x 128 with 4 stages: four 96 KB stages do not fit, so B goes through one scratch
  // buffer every trip and each trip waits for its own group.
  lowering::Compiled big = compile_sample("w4a16_matmul", {{"BLOCK_M", 128}, {"BLOCK_N", 256}, {"BLOCK_K", 128}}, 8, 4);
  INFO(big.plan);
  CHECK(!has(big.plan, "into the stage"));
  CHECK(has(big.plan, "staged from registers every trip"));
  CHECK(!has(big.plan, "kept in flight"));
  lowering_test::assemble(big.ptx, "sm_90a");
}

TEST_CASE("fp8_matmul: wgmma k32 from two K-major copies; conv2d_bn_relu: addresses from the loop index, pipelined, "
          "and by producer warps") {
  lowering::Compiled f8 = compile_sample("fp8_matmul", {{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"BLOCK_K", 128}}, 8, 4);
  INFO(f8.plan);
  CHECK(count(f8.ptx, "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3") == 4);
  CHECK(has(f8.plan, "a load copied straight into the staging"));
  CHECK(!has(f8.ptx, "st.shared.u8"));
  lowering_test::assemble(f8.ptx, "sm_90a");
  lowering::Compiled cv = compile_sample("conv2d_bn_relu", {}, 4, 3);
  INFO(cv.plan);
  CHECK(has(cv.plan, "pipelined, 3 stages"));
  CHECK(count(cv.plan, "from pointers computed from the induction variable") == 2);
  CHECK(count(cv.plan, "(one pointer per thread)") == 0);  // nothing carried: nothing compact
  CHECK(has(cv.ptx, "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"));
  lowering_test::assemble(cv.ptx, "sm_90a");
  // With producer warps: a ring the producer warpgroup fills from the addresses it computes.
  lowering::Compiled cw = compile_sample("conv2d_bn_relu", {{"BLOCK_M", 128}, {"BLOCK_N", 128}}, 8, 4, true);
  INFO(cw.plan);
  CHECK(has(cw.plan, "ring of 4 stages"));
  CHECK(has(cw.plan, "producers copy by cp.async"));
  CHECK(count(cw.plan, "from pointers computed from the induction variable") == 2);
  CHECK(has(cw.plan, "384 threads per CTA (8 warps x 1 program + 4 producer warps)"));
  CHECK(has(cw.ptx, "cp.async.mbarrier.arrive.noinc.shared"));
  CHECK(count(cw.ptx, "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16") == 4);
  lowering_test::assemble(cw.ptx, "sm_90a");
}

TEST_CASE("conv2d_bn_relu_streamk: the K loop inside the loop over tiles is pipelined as the plain conv's, with and "
          "without producer warps") {
  const lang::Meta tile{{"BLOCK_M", 64}, {"BLOCK_N", 128}, {"BLOCK_K", 128}};
  lowering::Compiled plain = compile_sample("conv2d_bn_relu", tile, 4, 3);
  lowering::Compiled sk = compile_sample("conv2d_bn_relu_streamk", tile, 4, 3);
  INFO(sk.plan);
  CHECK(has(sk.plan, "sequential: the body has a for"));  // the loop over the program's tiles
  CHECK(count(sk.plan, "pipelined, 3 stages") == 1);        // the K loop in it
  CHECK(count(sk.plan, "from pointers computed from the induction variable") == 2);
  // The same copies and products a trip as the unsplit kernel (the stream-K form adds tiles, not
  // work in the loop), and one acq_rel arrival.
  CHECK(count(sk.ptx, "cp.async.cg.shared.global") == count(plain.ptx, "cp.async.cg.shared.global"));
  CHECK(count(sk.ptx, "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16") ==
        count(plain.ptx, "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"));
  CHECK(count(sk.ptx, "atom.acq_rel.gpu") == 1);
  lowering_test::assemble(sk.ptx, "sm_90a");
  lowering::Compiled ws = compile_sample("conv2d_bn_relu_streamk", {{"BLOCK_M", 128}, {"BLOCK_N", 64}}, 4, 4, true);
  INFO(ws.plan);
  CHECK(has(ws.plan, "ring of 4 stages"));
  CHECK(has(ws.plan, "producers copy by cp.async"));
  lowering_test::assemble(ws.ptx, "sm_90a");
  // Unaligned pointers: producer warps are refused, and the reason given is the K loop's, not
  // the loop over tiles around it ("the body has a for").
  const jit::KernelEntry& k = entry("conv2d_bn_relu_streamk");
  auto f = k.build_ir(k.defaults, {});
  lowering::Options o;
  o.target = lowering::Target::parse("sm_90a");
  o.num_stages = 3;
  o.warp_specialize = true;
  try {
    lowering::compile(*f, o);
    FAIL("expected a CompileError");
  } catch (const CompileError& e) {
    const std::string what = e.what();
    CHECK_MESSAGE(has(what, "(the loop here: no dot operand is a load"), what);
    CHECK_MESSAGE(!has(what, "the body has a for"), what);
  }
}
